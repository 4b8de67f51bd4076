"""Time limits in CPU time, the wall clock a backstop: a loaded machine never turns a verdict into TIME_LIMIT.

A busy loop ends at its CPU limit; a sleep ends at the backstop as the learner's TIME_LIMIT, worded as a wait; and
with the sandbox's workers sharing one core with busy processes, so that a run takes well past its limit in wall
time, a file still gets its own verdict (ACCEPTED, FORBIDDEN, MEMORY_LIMIT), never TIME_LIMIT.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from judge.grading import grade
from judge.report import Verdict
from sandbox.limits import Limits

pytestmark = pytest.mark.xdist_group("sandbox")

LIMITS = Limits(time_seconds=2, memory_mb=512, file_size_mb=16, pids=64, output_kb=64)
HONEST = "import torch\n\n\ndef f(x):\n    return x + 1\n"
FORBIDDEN = "import torch\n\ntorch._dynamo.config.cache_size_limit = 1000\n\n\ndef f(x):\n    return x + 1\n"
MEMORY = "keep = []\nwhile True:\n    keep.append(bytearray(50 * 2**20))\n"
# Busy processes sharing the workers' core: a run gets about 1/(BURNERS + 1) of it.
BURNERS = 5
# A loaded grading's limit: the CPU time of its two runs unloaded (the runner waits while the verifier computes) x
# this, a share of the wall time the load makes it take (about BURNERS + 1 times as long): well past the limit in
# wall time, well within the backstop (3 x the limit).
LIMIT_PER_UNLOADED_CPU = (BURNERS + 1) / 1.8


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
def loaded_core(sandbox):
    """The sandbox's warm workers and BURNERS busy processes on one core, at this process's priority."""
    workers = set()
    for name in ("runner", "verifier"):
        sandbox.pool(name).settle(120)
        workers |= {w.proc.pid if getattr(w, "proc", None) else w.pid for w in sandbox.pool(name).workers()}
    core = {min(os.sched_getaffinity(0))}
    every = os.sched_getaffinity(0)
    burners = [subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {core}); "
                                 "os.write(1, b'1')\nwhile True: pass"], stdout=subprocess.PIPE)
               for _ in range(BURNERS)]
    try:
        for burner in burners:
            assert burner.stdout.read(1) == b"1"  # pinned and busy
        _pin(_descendants(workers), core)
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
        _pin(_descendants(workers), every)


def test_a_busy_loop_ends_at_its_cpu_limit(sandbox, add_one):
    report = grade(exercise_with(add_one, 2), "while True:\n    pass\n", sandbox=sandbox)
    assert report.verdict is Verdict.TIME_LIMIT and "2 s of CPU time" in report.summary, report.summary


def test_a_sleep_ends_at_the_wall_clock_backstop_as_a_wait(sandbox, add_one):
    report = grade(exercise_with(add_one, 1), "import time\ntime.sleep(3600)\n", sandbox=sandbox)
    assert report.verdict is Verdict.TIME_LIMIT and "waited for 3 s without computing" in report.summary, \
        report.summary


@pytest.mark.parametrize("source, verdict", [(HONEST, Verdict.ACCEPTED), (FORBIDDEN, Verdict.FORBIDDEN),
                                             (MEMORY, Verdict.MEMORY_LIMIT)], ids=["accepted", "forbidden", "memory"])
def test_a_loaded_machine_never_turns_a_verdict_into_time_limit(sandbox, add_one, source, verdict, monkeypatch):
    unloaded = []
    original = sandbox.run

    def recording(job, limits, *args, **kwargs):
        unloaded.append(original(job, limits, *args, **kwargs))
        return unloaded[-1]

    with monkeypatch.context() as patched:  # the CPU time of the file's two runs, unloaded
        patched.setattr(sandbox, "run", recording)
        assert grade(exercise_with(add_one, 60), source, sandbox=sandbox).verdict is verdict
    seconds = max(0.1, sum(outcome.cpu_s for outcome in unloaded) * LIMIT_PER_UNLOADED_CPU)
    with loaded_core(sandbox):
        report = grade(exercise_with(add_one, seconds), source, sandbox=sandbox)
    assert report.verdict is verdict, (report.verdict, report.summary, seconds, report.duration_s)
    assert report.duration_s > seconds  # the load made it take longer than its limit in wall time
