"""Time limits in CPU time, the wall clock a backstop: a loaded machine never turns a verdict into TIME_LIMIT.

A busy loop ends at its CPU limit; a sleep while the runner owes an answer ends at its owed idle limit as the
learner's TIME_LIMIT, worded as a wait; and with the sandbox's workers sharing one core with busy processes, so that
a run takes well past its limit in wall time, a file still gets its own verdict (ACCEPTED, FORBIDDEN, MEMORY_LIMIT),
never TIME_LIMIT, and a busy loop still ends at its CPU limit.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from judge.parent.grading import grade
from judge.parent.outcome import starved_text
from judge.reports.report import Verdict
from sandbox.limits import Limits

pytestmark = pytest.mark.xdist_group("sandbox")

LIMITS = Limits(time_seconds=2, memory_mb=512, file_size_mb=16, pids=64, output_kb=64)
HONEST = "import torch\n\n\ndef f(x):\n    return x + 1\n"
FORBIDDEN = "import torch\n\ntorch._dynamo.config.cache_size_limit = 1000\n\n\ndef f(x):\n    return x + 1\n"
MEMORY = "keep = []\nwhile True:\n    keep.append(bytearray(50 * 2**20))\n"
# Busy processes sharing the workers' core, each in a cgroup of its own: a run gets about 1/(BURNERS + 2) of it.
BURNERS = 2
# The loaded test's limit: the wall time the same file's runner took under the same load, over this: well past the
# limit in wall time (the old wall-clock limit's TIME_LIMIT), within the time it may sit idle (3 x the limit).
WALL_PER_LIMIT = 1.8


def exercise_with(add_one, seconds: float):
    return add_one.model_copy(update={"limits": LIMITS.model_copy(update={"time_seconds": seconds})})


def _descendants(roots: set[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        parent = int(text[text.rindex(")") + 2:].split()[1])
        children.setdefault(parent, []).append(int(text.split(" ", 1)[0]))
    found, todo = set(roots), list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _pin(pids: set[int], cpus: set[int]) -> None:
    """Every thread of `pids` on `cpus` (the runs they fork inherit it)."""
    for pid in pids:
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            continue
        for tid in tids:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(tid, cpus)


@contextlib.contextmanager
def loaded_core(sandbox, burners: int = BURNERS):
    """The sandbox's warm workers and `burners` busy processes on one core, at this process's priority, each busy
    process in a cgroup of its own beside the workers' (the kernel shares a core between cgroups first, as between
    the runs of a busy server)."""
    workers = set()
    for name in ("runner", "verifier"):
        sandbox.pool(name).settle(120)
        workers |= {w.proc.pid for w in sandbox.pool(name).workers()}
    core = {min(os.sched_getaffinity(0))}
    every = os.sched_getaffinity(0)
    groups = [sandbox.base_cgroup.child(f"load-{n}") for n in range(burners)]
    busy = [subprocess.Popen([sys.executable, "-c", f"import os, sys; os.sched_setaffinity(0, {core}); "
                              "sys.stdin.read(1)\nwhile True: pass"], stdin=subprocess.PIPE)
            for _ in range(burners)]
    try:
        for burner, group in zip(busy, groups, strict=True):
            for procs in group.procs_files():
                procs.write_text(str(burner.pid))
            burner.stdin.write(b"1")
            burner.stdin.flush()
        _pin(_descendants(workers), core)
        yield
    finally:
        for burner in busy:
            burner.kill()
            burner.wait()
        for group in groups:
            group.kill_all()
            group.remove()
        _pin(_descendants(workers), every)


def test_a_busy_loop_ends_at_its_cpu_limit(sandbox, add_one):
    report = grade(exercise_with(add_one, 2), "while True:\n    pass\n", sandbox=sandbox)
    assert report.verdict is Verdict.TIME_LIMIT and "2 s of CPU time" in report.summary, report.summary


@pytest.mark.parametrize("source", ["import time\ntime.sleep(3600)\n",
                                    "import time\n\n\ndef f(x):\n    time.sleep(3600)\n    return x + 1\n"],
                         ids=["loading", "asked"])
def test_a_sleep_while_owing_an_answer_ends_at_the_owed_idle_limit_as_a_wait(sandbox, add_one, source):
    # The runner owes the grading its load status, then each answer: idle then, it is ended at 1 x its limit
    # (sandbox.clock), not at the 3 x that also covers its waits for the verifier's next request. On a loaded
    # machine that 3 x backstop may end the run first (the judge's fault, INTERNAL_ERROR): graded again then.
    for _ in range(3):
        report = grade(exercise_with(add_one, 1), source, sandbox=sandbox)
        if report.summary != starved_text(3 * 1).render("en"):
            break
    assert report.verdict is Verdict.TIME_LIMIT and "waited for 1 s without computing" in report.summary, \
        report.summary


@pytest.mark.parametrize("sandbox", ["bwrap"], indirect=True)  # busy processes in cgroups beside its workers'
@pytest.mark.parametrize("source, verdict", [(HONEST, Verdict.ACCEPTED), (FORBIDDEN, Verdict.FORBIDDEN),
                                             (MEMORY, Verdict.MEMORY_LIMIT)], ids=["accepted", "forbidden", "memory"])
def test_a_loaded_machine_never_turns_a_verdict_into_time_limit(sandbox, add_one, source, verdict, monkeypatch):
    runs: dict[str, object] = {}  # the last outcome of each pool's run
    original = sandbox.run

    def recording(job, limits, *args, **kwargs):
        runs[kwargs["pool"]] = original(job, limits, *args, **kwargs)
        return runs[kwargs["pool"]]

    monkeypatch.setattr(sandbox, "run", recording)
    with loaded_core(sandbox):
        loaded = []  # twice: a worker's first run after the load began can take twice as long as the next
        for _ in range(2):
            assert grade(exercise_with(add_one, 60), source, sandbox=sandbox).verdict is verdict
            loaded.append((runs["runner"].duration_s, runs["runner"].cpu_s))
        loaded_wall, cpu = min(loaded)
        seconds = loaded_wall / WALL_PER_LIMIT  # a limit the loaded runner's wall time is well past
        assert cpu < seconds, (cpu, loaded_wall)  # ... but not its CPU time: the load is heavy enough
        for _ in range(3):  # each run's wall time is the load's to decide: graded again until one ran past the limit
            report = grade(exercise_with(add_one, seconds), source, sandbox=sandbox)
            assert report.verdict is verdict, (report.verdict, report.summary, seconds, runs["runner"])
            if runs["runner"].duration_s > seconds:
                break
    assert runs["runner"].duration_s > seconds, (seconds, runs["runner"])


@pytest.mark.parametrize("sandbox", ["bwrap"], indirect=True)
def test_a_busy_loop_the_load_slows_past_its_idle_limit_still_ends_at_its_cpu_limit(sandbox, add_one):
    # About a quarter of a core: its 1 s of CPU take longer than the 3 s it may sit idle, and that is no wait.
    with loaded_core(sandbox, burners=3):
        report = grade(exercise_with(add_one, 1), "while True:\n    pass\n", sandbox=sandbox)
    assert report.verdict is Verdict.TIME_LIMIT and "1 s of CPU time" in report.summary, report.summary
    assert report.duration_s > 3 * 1, report.duration_s
