"""Backend "prestarted" (the GPU graders): each prepared process serves exactly one run, with the run's limits, and
nothing a run leaves (a module global, files in its caches, GPU memory) reaches the next one.

The CPU tests run anywhere; the GPU one needs CUDA (the H200 of docs/deploy.md) and is skipped elsewhere.
"""

from __future__ import annotations

import os

import pytest

from judge.parent.grading import grade, make_sandbox
from judge.reports.report import Verdict
from sandbox.limits import Limits

pytestmark = [pytest.mark.xdist_group("sandbox")]
HONEST_F = "\n\ndef f(x):\n    return x + 1\n"

LEAVE_BEHIND = """
import builtins, os, sys
print("PID", os.getpid(), "LEFT", getattr(builtins, "_left_by_last", None), flush=True)
builtins._left_by_last = "yes"
cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
triton = os.environ["TRITON_CACHE_DIR"]
print("SEEN", sorted(n for n in os.listdir(cache) if n.startswith("planted")),
      os.path.exists(os.path.join(triton, "planted-kernel")), flush=True)
for folder in (cache, triton):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "planted-kernel"), "w") as fh:
        fh.write("PLANTED")
open(os.path.join(cache, "planted-" + str(os.getpid())), "w").write("PLANTED")
""" + HONEST_F


@pytest.fixture(scope="module")
def prestarted():
    sandbox = make_sandbox("prestarted", pool_size=1)
    sandbox.warm_up(pools=("runner", "verifier"))
    yield sandbox
    sandbox.close()


def _said(report, word: str) -> str:
    lines = [line for line in report.stdout.splitlines() if line.startswith(word)]
    assert lines, (report.summary, report.stdout[-2000:], report.stderr[-2000:])
    return lines[-1]


def test_each_run_is_a_fresh_process_that_keeps_nothing_of_the_last(prestarted, add_one):
    first = grade(add_one, LEAVE_BEHIND, sandbox=prestarted)
    second = grade(add_one, LEAVE_BEHIND, sandbox=prestarted)
    assert first.verdict is Verdict.ACCEPTED and second.verdict is Verdict.ACCEPTED, (first.summary, second.summary)
    assert _said(first, "PID") != _said(second, "PID")
    assert _said(second, "PID").endswith("LEFT None")  # the first run's interpreter state is gone
    assert _said(second, "SEEN") == "SEEN [] False"  # and so are the files it wrote in its caches


def test_a_run_gets_its_own_limits(prestarted, add_one):
    spin = "import time\nwhile True:\n    time.sleep(0.01)\n" + HONEST_F
    exercise = add_one.model_copy(update={"limits": Limits(time_seconds=3, memory_mb=1024)})
    report = grade(exercise, spin, sandbox=prestarted)
    assert report.verdict is Verdict.TIME_LIMIT, report.summary
    after = grade(add_one, add_one.read(add_one.reference), sandbox=prestarted)
    assert after.verdict is Verdict.ACCEPTED, after.summary  # its successor was prepared meanwhile


def test_a_run_that_kills_its_parent_session_leaves_no_process(prestarted, add_one):
    escape = ("import os, subprocess, sys\n"
              "subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(600)'],\n"
              "                 start_new_session=True)\n") + HONEST_F
    report = grade(add_one, escape, sandbox=prestarted)
    assert report.verdict is Verdict.ACCEPTED, report.summary
    if prestarted.uids is None:
        pytest.skip("not root: the runs are this user's processes (no uid of their own to sweep)")
    from sandbox.prepared_process import processes_of

    assert not any(processes_of(uid) for uid in prestarted.uids if uid not in prestarted._in_use)


GPU_LEAVE_BEHIND = """
import os, torch
free_before, total = torch.cuda.mem_get_info()
print("GPU", torch.cuda.memory_allocated(), os.path.exists(os.path.join(os.environ["TRITON_CACHE_DIR"], "planted")),
      flush=True)
keep = torch.empty(8 * 1024 ** 3, dtype=torch.uint8, device="cuda")  # 8 GiB left allocated at the end
os.makedirs(os.environ["TRITON_CACHE_DIR"], exist_ok=True)
open(os.path.join(os.environ["TRITON_CACHE_DIR"], "planted"), "w").write("PLANTED")
print("FREE", free_before // 2 ** 20, flush=True)
""" + HONEST_F


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a process its priority back")
@pytest.mark.parametrize("zygote", [False, True], ids=["fresh", "zygote"])
def test_processes_prepare_niced_and_their_run_gets_the_graders_priority_back(add_one, zygote):
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    sandbox = make_sandbox("prestarted", pool_size=1, prepare_nice=3, zygote=zygote)
    try:
        sandbox.warm_up(pools=("runner", "verifier"))
        waiting = sandbox._ready["runner"][0].proc.pid
        assert os.getpriority(os.PRIO_PROCESS, waiting) == ours + 3  # a successor preparing leaves the cores to runs
        report = grade(add_one, "import os\nprint('NICE', os.getpriority(os.PRIO_PROCESS, 0), flush=True)\n"
                       + HONEST_F, sandbox=sandbox)
        assert report.verdict is Verdict.ACCEPTED, report.summary
        assert _said(report, "NICE") == f"NICE {ours}"
    finally:
        sandbox.close()


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("zygote", [False, True], ids=["fresh", "zygote"])
def test_a_gpu_run_leaves_nothing_for_the_next(add_one, zygote):
    """A submission that writes to its Triton cache and leaves 8 GiB allocated on the GPU: the next run finds an
    empty allocator, no planted file and the device's memory free again, whether its processes start afresh or are
    forked from the zygote (which never started CUDA: each forked process opens its own context)."""
    sandbox = make_sandbox("prestarted", pool_size=1, zygote=zygote)
    try:
        sandbox.warm_up(pools=("runner", "verifier"))
        first = grade(add_one, GPU_LEAVE_BEHIND, sandbox=sandbox)
        second = grade(add_one, GPU_LEAVE_BEHIND, sandbox=sandbox)
    finally:
        sandbox.close()
    for report in (first, second):
        assert report.verdict is Verdict.ACCEPTED, (report.summary, report.stdout[-2000:], report.stderr[-2000:])
        assert _said(report, "GPU") == "GPU 0 False"
    free_first, free_second = (int(_said(r, "FREE").split()[1]) for r in (first, second))
    assert free_second > free_first - 2048  # the first run's 8 GiB were freed with its process
