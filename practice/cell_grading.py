"""Grade a cell in a fresh process: the kernel never imports the grading core, torch or the learner's code.

The kernel's own state (a compiled function, a patched module, `torch._dynamo` settings changed in an
earlier cell) would change what the judge sees. So `grade_fresh` writes the cell to a file and runs
`python -m practice.cell_grading` (this module), which calls `judge.grade` with the unsandboxed backend: the
learner's code runs in the judge's runner, two processes further away. Progress events and the report come
back as JSON lines on a pipe of their own (what the learner's code prints cannot forge them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from judge.reports.report import ProgressEvent, Report

OnEvent = Callable[[ProgressEvent], None]
SANDBOX = "none"  # fresh processes, no isolation: the learner grades their own code on their own machine


class GradingFailed(Exception):
    """The grading process could not grade (an exercise that needs a GPU here, a broken install)."""


def grade_fresh(exercise_id: str, source: str, *, exercises_dir: Path, filename: str = "cell.py",
                on_event: OnEvent | None = None, timeout: float = 900.0) -> Report:
    """Grade `source` against the exercise in a new Python process; its live events go to `on_event`."""
    emit = on_event or (lambda event: None)
    with tempfile.TemporaryDirectory(prefix="practice-cell-") as folder:
        path = Path(folder) / filename
        path.write_text(source, encoding="utf-8")
        read_end, write_end = os.pipe()
        env = {**os.environ, "PRACTICE_EXERCISES_DIR": str(exercises_dir)}
        try:
            proc = subprocess.Popen([sys.executable, "-m", "practice.cell_grading", "--fd", str(write_end),
                                     exercise_id, str(path)], env=env, pass_fds=(write_end,),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        finally:
            os.close(write_end)
        stderr: list[bytes] = []
        drain = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)
        drain.start()
        report = error = None
        with os.fdopen(read_end, "r", encoding="utf-8") as pipe:
            for line in pipe:
                message = json.loads(line)
                if "error" in message:
                    error = message["error"]
                    continue
                event = ProgressEvent.model_validate(message)
                emit(event)
                if event.type == "done":
                    report = event.report
        proc.wait(timeout)
        drain.join(5)
    if error is not None:
        raise GradingFailed(error)
    if report is None:
        tail = b"".join(stderr).decode("utf-8", "replace")[-2000:]
        raise GradingFailed(f"the grading process ended (exit status {proc.returncode}) without a report:\n{tail}")
    return report


def _main() -> None:
    """`python -m practice.cell_grading --fd N EXERCISE FILE`: grade FILE, write events as JSON lines to fd N."""
    parser = argparse.ArgumentParser(prog="python -m practice.cell_grading")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("exercise_id")
    parser.add_argument("file", type=Path)
    args = parser.parse_args()
    from judge.parent.exercise import ExerciseError, find_exercise
    from judge.parent.grading import grade, make_sandbox
    from judge.parent.requirements import cannot_grade_here
    from judge.reports.report import ProgressEvent
    from judge.shared.paths import EXERCISES_DIR
    from judge.shared.tiers import CPU, grade_tiers, has_cpu_tier

    with os.fdopen(args.fd, "w", encoding="utf-8") as out:
        def send(message: dict) -> None:
            out.write(json.dumps(message) + "\n")
            out.flush()

        try:
            exercise = find_exercise(EXERCISES_DIR, args.exercise_id)
        except ExerciseError as exc:
            send({"error": str(exc)})
            return
        reason = cannot_grade_here(exercise)
        if reason and not has_cpu_tier(exercise):
            send({"error": f"{exercise.id} {reason}: grade it on a machine with one, or use --submit."})
            return
        sandbox = make_sandbox(SANDBOX)

        def relay(event: ProgressEvent) -> None:
            # one `done` comes last, with the report of the tiers together (judge/shared/tiers.py)
            if event.type != "done":
                send(json.loads(event.model_dump_json()))

        def graded(source: str, tier: str | None = None):
            return grade(exercise, source, sandbox=sandbox, filename=args.file.name, tier=tier, on_event=relay)

        try:
            source = args.file.read_text(encoding="utf-8")
            report = grade_tiers(exercise, source, grade_cpu_tier=lambda text: graded(text, CPU),
                                 grade_full=None if reason else graded)[0] if has_cpu_tier(exercise) \
                else graded(source)
            send(json.loads(ProgressEvent(type="done", report=report).model_dump_json()))
        finally:
            sandbox.close()


if __name__ == "__main__":
    _main()
