"""Backend "local": warm forks of the user's own, with the same limits as a fresh subprocess (every verdict on it,
limits included: tests/core/test_verdicts.py)."""

import os

import pytest

from judge.parent.grading import grade
from judge.reports.report import Verdict
from sandbox.base import SandboxError
from sandbox.limits import Program
from sandbox.local_backend import LocalSandbox

ORPHAN_LEFT_BEHIND = ("import torch\nimport os, time\nif os.fork() == 0:\n    time.sleep(3600)\n"
                      "\ndef f(x):\n    return x + 2\n")


def test_a_run_leaves_no_process_behind(local, add_one):
    """The orphan a submission forks dies with its run's process group."""
    report = grade(add_one, ORPHAN_LEFT_BEHIND, sandbox=local)
    assert report.verdict is Verdict.WRONG_ANSWER, report.summary
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


def test_a_worker_that_cannot_start_says_why():
    """Its start-up log is read before the worker is ended: it said "seek of closed file" instead of the reason."""
    sandbox = LocalSandbox(Program(module="judge.no_such_module_here"))
    try:
        with pytest.raises(SandboxError, match="no_such_module_here"):
            sandbox.warm_up(timeout=60)
    finally:
        sandbox.close()
