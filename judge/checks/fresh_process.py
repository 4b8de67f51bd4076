"""Run grader-owned code in a fresh Python process, for checks that need one (what a new process finds in a
compile cache, say). The script reports through a JSON file, never through stdout, which the learner's code
may write to; a learner's exception inside it comes back as a traceback and becomes a RUNTIME_ERROR here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from judge.checks.failures import CheckFailure
from judge.compiler.locations import stack_locations
from judge.reports.i18n import T, in_code
from judge.reports.report import ErrorDiagnostic, Verdict


class LearnerError(CheckFailure):
    """The learner's code raised inside a fresh process."""

    verdict = Verdict.RUNTIME_ERROR


def run_python(script: str, args: list[str], *, env: dict[str, str], result_file: Path, timeout: float,
               cwd: Path | None = None) -> dict:
    """Run `script` with `args` in a new interpreter and return the JSON object it wrote to `result_file`.

    `env` is added to a copy of this process's environment. A process that dies or writes no result raises
    CheckFailure (RUNTIME_ERROR) with the end of its stderr.
    """
    full_env = {**os.environ, **env}
    full_env.pop("TORCH_LOGS", None)
    result_file = Path(result_file)
    result_file.unlink(missing_ok=True)
    try:
        proc = subprocess.run([sys.executable, "-c", script, *args], env=full_env, cwd=cwd, timeout=timeout,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        raise did_not_finish(timeout) from None
    return reported(result_file, proc.returncode, proc.stderr)


def did_not_finish(timeout: float) -> LearnerError:
    return LearnerError(T("a fresh Python process running your code did not finish in {seconds} s",
                          seconds=round(timeout)))


def reported(result_file: Path, exit_code: int, stderr: str) -> dict:
    """The JSON object a finished process wrote to `result_file`; CheckFailure with the end of its stderr where it
    died before writing one."""
    if result_file.is_file():
        try:
            return json.loads(result_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            pass
    tail = "\n".join(stderr.strip().splitlines()[-15:])
    raise LearnerError(T("a fresh Python process running your code died (exit code {code}) before reporting a "
                         "result", code=exit_code),
                       [ErrorDiagnostic(exc_type="ProcessDied", message=tail[-2000:])])


def learner_error(what: T | str, traceback_text: str) -> LearnerError:
    """A RUNTIME_ERROR for a traceback captured in a fresh process, pointing at the learner's line."""
    last = traceback_text.strip().splitlines()[-1] if traceback_text.strip() else "Exception"
    # the learner's innermost frame; its line's text as printed when the file is not here (the verifier)
    found = stack_locations(traceback_text)
    loc = found[-1] if found else None
    diag = ErrorDiagnostic(exc_type=last.split(":", 1)[0], message=last[:2000], location=loc,
                           traceback=traceback_text[-4000:])
    error = in_code(last)
    if loc:
        return LearnerError(T("{what} raised at line {line} (`{code}`): `{error}`", what=what, line=loc.line,
                              code=loc.text, error=error), [diag])
    return LearnerError(T("{what} raised: `{error}`", what=what, error=error), [diag])
