"""Backend "local": warm forks of the user's own, with the same limits as a fresh subprocess."""

import os

import pytest

from judge.grading import grade
from judge.report import Verdict
from sandbox.limits import Limits

HEADER = "import torch\n\n"
CASES = {
    "accepted": (Verdict.ACCEPTED, "def f(x):\n    return x + 1\n"),
    "wrong": (Verdict.WRONG_ANSWER, "def f(x):\n    return x + 2\n"),
    "busy_loop": (Verdict.TIME_LIMIT, "def f(x):\n    while True:\n        pass\n"),
    "memory_bomb": (Verdict.MEMORY_LIMIT, "def f(x):\n    return torch.empty(2**40) + 1\n"),
    "crash": (Verdict.RUNTIME_ERROR, "import ctypes\n\ndef f(x):\n    ctypes.string_at(0)\n"),
    "orphan_left_behind": (Verdict.WRONG_ANSWER, "import os, time\nif os.fork() == 0:\n    time.sleep(3600)\n"
                                                 "\ndef f(x):\n    return x + 2\n"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_local_backend_verdicts(name, local, add_one):
    verdict, body = CASES[name]
    # A case that must run into the time limit gets a short one; the others a long one (a busy machine).
    seconds = 6 if verdict is Verdict.TIME_LIMIT else 30
    exercise = add_one.model_copy(update={"limits": Limits(time_seconds=seconds, memory_mb=1024)})
    report = grade(exercise, HEADER + body, sandbox=local)
    assert report.verdict is verdict, report.summary


def test_a_run_leaves_no_process_behind(local, add_one):
    """The orphan a submission forks dies with its run's process group."""
    grade(add_one, HEADER + CASES["orphan_left_behind"][1], sandbox=local)
    workers = {w.proc.pid for p in ("runner", "verifier") for w in local.pool(p).workers()}
    mine = []
    for status in os.listdir("/proc"):
        if not status.isdigit():
            continue
        try:
            with open(f"/proc/{status}/stat") as f:
                parts = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(parts[1]) in workers:  # a child of a worker still alive after its run ended
            mine.append(status)
    assert mine == []
