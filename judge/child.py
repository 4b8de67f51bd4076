"""The grading harness that runs inside the sandbox, in the same process as the learner's code.

`python -m judge.child --result-fd N --scratch DIR` reads a Job (JSON) on stdin; a warm worker calls
`prepare_worker()` once, then `run_job(job, result_fd, scratch)` in a freshly forked child. Results go
to `result_fd` as JSON lines carrying the job's nonce; stdout and stderr belong to the learner.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import traceback
from pathlib import Path

CACHE_ENV = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
             "TORCHINDUCTOR_COMPILE_THREADS": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def prepare_worker() -> None:
    """Import torch once and warm the eager path, single-threaded, so forked children start fast."""
    os.environ.update(CACHE_ENV)
    import torch

    torch.set_num_threads(1)
    import judge.checks  # noqa: F401 - imports Dynamo's modules ahead of the fork
    import judge.plugin  # noqa: F401

    x = torch.randn(8, 8)
    (x @ x).sum()
    torch.compile(lambda a: torch.relu(a) * 2, backend="eager", fullgraph=True)(x)
    torch._dynamo.reset()


class Channel:
    """JSON lines on the result descriptor, each stamped with the job's nonce."""

    def __init__(self, fd: int, nonce: str):
        self.fd, self.nonce = fd, nonce

    def send(self, type_: str, **fields) -> None:
        data = (json.dumps({"nonce": self.nonce, "type": type_, **fields}) + "\n").encode()
        while data:
            written = os.write(self.fd, data)
            data = data[written:]


def run_job(job, result_fd: int, scratch: Path) -> None:
    """Grade `job` in this process; every outcome is reported on the channel, nothing is raised."""
    channel = Channel(result_fd, job.nonce)
    try:
        _grade(job, channel, Path(scratch))
    except BaseException as exc:  # noqa: BLE001 - the channel must say something whatever happened
        try:
            channel.send("internal_error", message=f"{type(exc).__name__}: {exc}"[:2000],
                         traceback=traceback.format_exc()[-4000:])
        except OSError:
            pass


def _grade(job, channel: Channel, scratch: Path) -> None:
    os.environ.update(CACHE_ENV)
    import pytest
    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    inductor_config.fx_graph_cache = False
    functorch_config.enable_autograd_cache = False
    from judge import tamper
    from judge.checks.locations import register_learner_file
    from judge.loaded import LOADED
    from judge.plugin import Collector

    hidden = scratch / "hidden"
    for rel, text in job.files.items():
        path = hidden / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    LOADED.sources.update({"reference": job.files[job.reference], "starter": job.files[job.starter]})
    job.files = {}  # the hidden tests stay on disk only until collection ends
    (hidden / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    learner_path = scratch / "submission.py"
    learner_path.write_text(job.source, encoding="utf-8")
    register_learner_file(str(learner_path), job.filename)
    LOADED.entry_point = job.entry_point
    state: dict = {}

    def after_collection(names: list[str]) -> bool:
        channel.send("collected", names=names)
        state["snapshot"] = tamper.Snapshot()  # taken before the learner's code is imported
        shutil.rmtree(hidden, ignore_errors=True)
        return _load_submission(job, learner_path, channel, state["snapshot"])

    def send_check(result) -> None:
        channel.send("check", check=result.model_dump(mode="json"))

    collector = Collector(send_check, after_collection, lambda: state["snapshot"].changes())
    args = [str(hidden / t) for t in job.tests] + [
        "-c", str(hidden / "pytest.ini"), "--rootdir", str(hidden), "--confcutdir", str(hidden),
        "-s", "-p", "no:cacheprovider", "-p", "no:terminal", "-p", "no:warnings", "-p", "no:xdist",
        "-p", "judge.fixtures", "-W", "ignore"]
    sys.path.insert(0, str(hidden / "tests"))
    exit_code = pytest.main(args, plugins=[collector])
    if exit_code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
        channel.send("internal_error", message=f"pytest could not run the hidden tests (exit code {exit_code})")
        return
    sys.stdout.flush()
    sys.stderr.flush()
    channel.send("done")


def _load_submission(job, learner_path: Path, channel: Channel, snapshot) -> bool:
    """Import the learner's module; send load_error (LOAD_ERROR / FORBIDDEN) and return False on failure."""
    from judge.checks.locations import learner_location_from_traceback, location
    from judge.loaded import LOADED, load_module
    from judge.report import ErrorDiagnostic
    from judge.tamper import disabled_reason

    def fail(verdict: str, message: str, exc=None, loc=None) -> bool:
        diag = ErrorDiagnostic(exc_type=type(exc).__name__ if exc else verdict, message=message, location=loc,
                               traceback=traceback.format_exc()[-4000:] if exc else "")
        channel.send("load_error", verdict=verdict, message=message, diagnostic=diag.model_dump(mode="json"))
        return False

    try:
        compile(job.source, job.filename, "exec")
    except SyntaxError as exc:
        loc = location(str(learner_path), exc.lineno or 1, column=exc.offset)
        return fail("LOAD_ERROR", f"syntax error at line {exc.lineno}, column {exc.offset}: {exc.msg}", exc, loc)
    try:
        LOADED.submission = load_module("submission", learner_path)
    except SystemExit as exc:
        return fail("LOAD_ERROR", f"your file called exit({exc.code}) while being imported; remove it", exc)
    except BaseException as exc:  # noqa: BLE001 - any import-time failure is the learner's
        loc = learner_location_from_traceback(exc.__traceback__)
        where = f" at line {loc.line} (`{loc.text}`)" if loc else ""
        return fail("LOAD_ERROR", f"your file raised {type(exc).__name__}{where} while being imported: {exc}",
                    exc, loc)
    entry = getattr(LOADED.submission, job.entry_point, None)
    if entry is None:
        return fail("LOAD_ERROR", f"your file must define `{job.entry_point}`; it does not")
    reason = disabled_reason(entry)
    if reason:
        return fail("FORBIDDEN", f"`{job.entry_point}` cannot be graded: {reason}. Remove the decorator.")
    changes = snapshot.changes()
    if changes:
        return fail("FORBIDDEN", "solutions must not change global compiler settings or replace torch/judge "
                    "functions; your file did: " + "; ".join(changes[:5]))
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Grade one job read from stdin (runs inside the sandbox).")
    parser.add_argument("--result-fd", type=int, required=True)
    parser.add_argument("--scratch", type=Path, required=True)
    args = parser.parse_args(argv)
    from judge.job import Job

    job = Job.model_validate_json(sys.stdin.buffer.read())
    args.scratch.mkdir(parents=True, exist_ok=True)
    run_job(job, args.result_fd, args.scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
