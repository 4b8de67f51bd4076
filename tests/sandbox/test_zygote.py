"""Prestarted processes forked from the zygote (`sandbox/zygote.py`): the zygote has imported torch and never
started CUDA, a process forked from it grades as a fresh one does and is as isolated as one, and the CUDA rule
(a process that started CUDA never forks a child that uses it) is guarded where the zygote prepares, where it
forks and where the child prepares. On a machine without CUDA the guards are driven by a zygote made to look as
if it had started CUDA (tests/sandbox/zygote_program.py).
"""

from __future__ import annotations

import json
import os

import pytest

from judge.parent.grading import grade
from judge.reports.report import Verdict
from sandbox.base import SandboxError
from sandbox.cuda_fork import fork_hazard
from sandbox.limits import Program
from sandbox.prestarted import PrestartedSandbox
from sandbox.zygote import Zygote
from tests.sandbox.test_prestarted import HONEST_F, LEAVE_BEHIND, _said

pytestmark = [pytest.mark.xdist_group("sandbox")]
JUDGE = Program(module="judge.child")
TEST_PROGRAM = "tests.sandbox.zygote_program"
LIGHT = {"ZYGOTE_TEST_LIGHT": "1"}  # a zygote that only imports torch: the tests of a refusal (zygote_program.py)

# What the learner's process can see of itself, printed as one line: everything but its own pids and paths.
FACTS = """
import ctypes, json, os, resource, sys, tempfile, torch
fds = {}
for fd in sorted(os.listdir("/proc/self/fd"), key=int):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        continue
    fds[fd] = target.split(":")[0] if target.startswith(("pipe:", "socket:", "anon_inode:")) else target
scratch = os.getcwd()
print("FACTS", json.dumps({
    "ppid": os.getppid(), "session_leader": os.getsid(0) == os.getpid(),
    "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "nice": os.getpriority(os.PRIO_PROCESS, 0),
    "dumpable": ctypes.CDLL(None).prctl(3, 0, 0, 0, 0),
    "limits": {name: resource.getrlimit(getattr(resource, name))
               for name in ("RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_AS")},
    "cpu_limited": resource.getrlimit(resource.RLIMIT_CPU)[0] != resource.RLIM_INFINITY,
    "env": sorted(os.environ), "home_is_scratch": os.environ["HOME"] == scratch,
    "tmp": tempfile.gettempdir() == os.environ["TMPDIR"] == scratch,
    "inductor_cache_in_scratch": os.environ["TORCHINDUCTOR_CACHE_DIR"].startswith(scratch),
    "fds": sorted(set(fds.values()) - {scratch}), "sockets": sorted(fd for fd, kind in fds.items() if kind == "socket"),
    "cuda_initialized": torch.cuda.is_initialized(),
}), flush=True)
""" + HONEST_F


def _facts(report) -> dict:
    return json.loads(_said(report, "FACTS").split(" ", 1)[1])


@pytest.fixture(scope="module")
def forked():
    """Backend prestarted with its processes forked from a zygote."""
    sandbox = PrestartedSandbox(JUDGE, pool_size=1, zygote=True)
    sandbox.warm_up(pools=("runner", "verifier"))
    yield sandbox
    sandbox.close()


def test_the_zygote_has_imported_torch_and_never_started_cuda():
    zygote = Zygote(JUDGE)
    try:
        state = zygote.state()
    finally:
        zygote.close()
    assert state == {"op": "state", "id": state["id"], "torch_imported": True, "cuda_initialized": False,
                     "hazard": None, "threads": 1}  # one thread: nothing of another thread is half-done at a fork


def test_a_process_forked_from_the_zygote_grades_and_is_set_up_as_a_fresh_one(forked, add_one):
    fresh = PrestartedSandbox(JUDGE, pool_size=1)
    try:
        alone = _facts(grade(add_one, FACTS, sandbox=fresh))
    finally:
        fresh.close()
    report = grade(add_one, FACTS, sandbox=forked)
    assert report.verdict is Verdict.ACCEPTED, report.summary
    facts = _facts(report)
    assert facts["ppid"] == forked._zygote.pid  # it is the zygote's child
    assert {how for _, how, _ in forked.prepare_times} == {"zygote"}
    # The zygote's control socket is closed before anything else runs: it has as many sockets as a fresh process
    # (none here; on a CUDA machine, the one the driver opens when the process starts its device, whose number
    # differed by one on an H200)
    assert len(facts["sockets"]) == len(alone["sockets"])
    assert facts["session_leader"] and facts["cpu_limited"]
    assert facts["cuda_initialized"] == alone["cuda_initialized"]  # a prestarted process starts its device, if any
    assert facts["home_is_scratch"] and facts["tmp"] and facts["inductor_cache_in_scratch"]
    for same in ("ppid", "cpu_limited", "sockets"):
        alone.pop(same)
        facts.pop(same)
    assert facts == alone  # uid, groups, priority, rlimits, environment, open files: as a fresh process has them


def test_nothing_a_run_leaves_reaches_the_next(forked, add_one):
    first = grade(add_one, LEAVE_BEHIND, sandbox=forked)
    second = grade(add_one, LEAVE_BEHIND, sandbox=forked)
    assert first.verdict is Verdict.ACCEPTED and second.verdict is Verdict.ACCEPTED, (first.summary, second.summary)
    assert _said(first, "PID") != _said(second, "PID")
    assert _said(second, "PID").endswith("LEFT None")  # the zygote never ran the first run's code
    assert _said(second, "SEEN") == "SEEN [] False"


def test_a_run_that_kills_the_zygote_leaves_the_next_grading_whole(forked, add_one):
    kill = "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept PermissionError:\n" \
           "    pass\n" + HONEST_F  # as root the run is another uid and may not; as this user it may
    grade(add_one, kill, sandbox=forked)
    after = grade(add_one, add_one.read(add_one.reference), sandbox=forked)
    assert after.verdict is Verdict.ACCEPTED, (after.summary, after.stderr[-2000:])
    assert forked.zygote_off is None  # a zygote killed is started again, not given up


@pytest.mark.skipif(os.geteuid() != 0, reason="only root gives each prestarted process a uid of its own")
def test_as_root_a_forked_process_runs_as_its_own_uid_and_cannot_touch_the_zygote(add_one):
    from sandbox.settings import SandboxSettings

    sandbox = PrestartedSandbox(JUDGE, pool_size=1, zygote=True, uids=SandboxSettings().prestarted_uid_range())
    attack = "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept PermissionError:\n" \
             "    print('REFUSED', flush=True)\n" + FACTS
    try:
        report = grade(add_one, attack, sandbox=sandbox)
        alive = sandbox._zygote.alive()
    finally:
        sandbox.close()
    assert report.verdict is Verdict.ACCEPTED, (report.summary, report.stderr[-2000:])
    assert _said(report, "REFUSED") == "REFUSED" and alive
    facts = _facts(report)
    assert facts["uid"] == facts["gid"] and facts["uid"] in sandbox.uids and facts["groups"] == []


def test_the_zygote_prepares_without_asking_cuda_anything_where_cuda_is_available():
    """On a CUDA machine a Dynamo compile saves the CUDA RNG state, which starts CUDA (seen on an H200: every zygote
    refused). The zygote imports only; its children compile on their device."""
    zygote = Zygote(Program(module=TEST_PROGRAM, env={"ZYGOTE_TEST_CUDA": "available"}))
    try:
        state = zygote.state()
    finally:
        zygote.close()
    assert state["cuda_initialized"] is False and state["hazard"] is None


def test_a_zygote_that_started_cuda_while_preparing_is_never_forked_from(add_one):
    sandbox = PrestartedSandbox(Program(module=TEST_PROGRAM, env={"ZYGOTE_TEST_CUDA": "at-start", **LIGHT}),
                                pool_size=1, zygote=True)
    try:
        sandbox.warm_up(pools=("runner", "verifier"))
        report = grade(add_one, add_one.read(add_one.reference), sandbox=sandbox)
    finally:
        sandbox.close()
    assert "started CUDA" in sandbox.zygote_off and "initialised CUDA" in sandbox.zygote_off
    assert report.verdict is Verdict.ACCEPTED, report.summary  # on fresh processes instead
    assert {how for _, how, _ in sandbox.prepare_times} == {"fresh"}


def test_a_zygote_whose_preparation_left_a_thread_running_is_never_forked_from(add_one):
    sandbox = PrestartedSandbox(Program(module=TEST_PROGRAM, env={"ZYGOTE_TEST_THREAD": "1", **LIGHT}), pool_size=1,
                                zygote=True)
    try:
        sandbox.warm_up(pools=("runner", "verifier"))
        report = grade(add_one, add_one.read(add_one.reference), sandbox=sandbox)
    finally:
        sandbox.close()
    assert "preparing the zygote started 1 thread(s) of its own" in sandbox.zygote_off
    assert report.verdict is Verdict.ACCEPTED, report.summary  # on fresh processes instead
    assert {how for _, how, _ in sandbox.prepare_times} == {"fresh"}


def test_the_zygote_refuses_to_fork_once_it_has_started_cuda():
    zygote = Zygote(Program(module=TEST_PROGRAM, env={"ZYGOTE_TEST_CUDA": "after-ready", **LIGHT}))
    result_r, result_w = os.pipe()
    try:
        with pytest.raises(SandboxError, match="initialised CUDA"):
            zygote.fork(["--result-fd", "3", "--scratch", "/nonexistent", "--prepare"], {}, "/", uid=None, nice=0,
                        file_bytes=1 << 20, result_w=result_w)
    finally:
        os.close(result_r)
        os.close(result_w)
        zygote.close()


def test_the_cuda_driver_initialised_in_a_process_forbids_its_forks_and_loaded_alone_does_not():
    """A CUDA build of torch links the driver library at import (seen on an H200: every zygote was refused while
    the rule read a loaded library as cuInit): only the driver's own answer counts."""
    assert fork_hazard(maps="") is None  # this test process never started CUDA
    maps = "7f3a00000000-7f3a00200000 r-xp 00000000 08:01 1234 /usr/lib/x86_64-linux-gnu/libcuda.so.570.86.10\n"
    asked = []
    assert fork_hazard(maps=maps, initialised=lambda path: asked.append(path) or False) is None
    assert asked == ["/usr/lib/x86_64-linux-gnu/libcuda.so.570.86.10"]
    assert "cuInit" in fork_hazard(maps=maps, initialised=lambda path: True)


def test_a_child_forked_from_a_process_that_started_cuda_refuses_to_prepare(monkeypatch):
    import torch

    from judge import child

    monkeypatch.setattr(child, "_PREPARED", [False])  # as in a process forked from the zygote
    monkeypatch.setattr(torch.cuda, "_is_in_bad_fork", lambda: True)
    with pytest.raises(RuntimeError, match="forked from a process that had started CUDA"):
        child.prepare_fresh()


SHOW_CACHE = """
import os
cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
print("PID", os.getpid(), "CACHE", sorted(n for n in os.listdir(cache) if n.startswith(("prepared-by-", "planted"))),
      flush=True)
open(os.path.join(cache, "planted"), "w").write("PLANTED")
""" + HONEST_F


def test_each_process_starts_with_a_copy_of_what_one_trusted_preparation_compiled(add_one):
    """With `share_preparation`, one process that never gets a job prepares in a shared folder; each process of a
    pool without a layer starts with a private copy of it (what a run plants there reaches no other run)."""
    sandbox = PrestartedSandbox(Program(module=TEST_PROGRAM, env={"ZYGOTE_TEST_MARK": "1"}), pool_size=1,
                                zygote=True, share_preparation=True)
    try:
        first = grade(add_one, SHOW_CACHE, sandbox=sandbox)
        second = grade(add_one, SHOW_CACHE, sandbox=sandbox)
    finally:
        sandbox.close()
    sharers = []
    for report in (first, second):
        assert report.verdict is Verdict.ACCEPTED, (report.summary, report.stderr[-2000:])
        _, pid, _, listed = _said(report, "PID").split(" ", 3)
        names = json.loads(listed.replace("'", '"'))
        assert f"prepared-by-{pid}" in names and "planted" not in names, names  # its own, nothing of the other run
        others = [n for n in names if n != f"prepared-by-{pid}"]
        assert len(others) == 1, names
        sharers.append(others[0])
    assert sharers[0] == sharers[1]  # one trusted process's preparation, copied to each


def test_forked_processes_draw_different_random_numbers(forked, add_one):
    """A fork copies the zygote's generators: `random` reseeds itself at fork and numpy's global generator is
    reseeded by the child, so that no grading can predict another's draws."""
    draw = "import random, numpy\nprint('DRAW', random.random(), numpy.random.random(), flush=True)\n" + HONEST_F
    first, second = (grade(add_one, draw, sandbox=forked) for _ in range(2))
    assert first.verdict is Verdict.ACCEPTED and second.verdict is Verdict.ACCEPTED, (first.summary, second.summary)
    a, b = (_said(r, "DRAW").split()[1:] for r in (first, second))
    assert a[0] != b[0] and a[1] != b[1]


# A module that asks whether CUDA is there while it is imported, as torch 2.11's Inductor benchmarking module does
# (under the zygote's NVML check the real answer calls nvmlInit, which starts a driver thread: measured on an H200).
ASKS_AT_IMPORT = """
import importlib.abc, json, sys
import torch

real = torch.cuda.is_available
asked = []
torch.cuda.is_available = lambda: asked.append("real") or real()


class AsksAtImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.startswith("torch._inductor"):
            torch.cuda.is_available()
        return None


sys.meta_path.insert(0, AsksAtImport())
for name in [n for n in sys.modules if n.startswith("torch._inductor")]:
    del sys.modules[name]  # imported again by the preparation, each import asking
from judge.child import prepare_zygote

spy = torch.cuda.is_available
prepare_zygote()
print(json.dumps({"real_asked": len(asked), "restored": torch.cuda.is_available is spy}))
"""


def test_the_zygote_answers_whether_cuda_is_there_without_asking_the_driver():
    import subprocess
    import sys

    from judge.shared.paths import PROJECT_ROOT

    done = subprocess.run([sys.executable, "-c", ASKS_AT_IMPORT], capture_output=True, text=True, timeout=300,
                          cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"real_asked": 0, "restored": True}
