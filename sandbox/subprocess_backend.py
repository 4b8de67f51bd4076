"""Backend "none": a fresh subprocess with rlimits, a wall-clock timeout and an output cap.

For a learner grading their own code on their own machine. It isolates nothing from the host
beyond a scratch folder and a clean environment; the web refuses it unless told otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

from sandbox.base import Inbox, OnMessage, RunOutcome, Sandbox
from sandbox.fresh_process import child_env, cuda_possible, rlimits, supervise  # noqa: F401 - the parts it uses
from sandbox.limits import Limits, Program


class SubprocessSandbox(Sandbox):
    name = "none"

    def __init__(self, program: Program, python: str = sys.executable):
        self.program = program
        self.python = python

    def run(self, job_json: str, limits: Limits, on_message: OnMessage | None = None, *,
            inbox: Inbox | None = None, pool: str = "default") -> RunOutcome:
        scratch = tempfile.mkdtemp(prefix="practice-run-")
        result_r, result_w = os.pipe()
        started = time.monotonic()
        env = child_env(scratch, self.program)
        try:
            proc = subprocess.Popen(
                [self.python, "-m", self.program.module, "--result-fd", str(result_w), "--scratch", scratch],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(result_w,),
                cwd=scratch, env=env, start_new_session=True,
                preexec_fn=rlimits(limits, cap_address_space=not cuda_possible(env)))
        except BaseException:
            os.close(result_r)
            os.close(result_w)
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        os.close(result_w)
        return supervise(proc, result_r, scratch, job_json, limits, on_message, inbox, started)
