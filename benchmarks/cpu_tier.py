"""How fast a GPU exercise's CPU tier gives its verdict on a machine without CUDA (issue 40: a wrong Triton kernel's
CPU-tier verdict in at most 5 s warm).

Grades pinned files of the GPU exercises through their CPU tier only (`grade(..., tier="cpu")`, judge/shared/tiers.py)
on the
warm `local` backend, as the background judge and a web grader do: one grading first to start the warm workers (not
counted), then `--runs` gradings of each file, each timed from the call to its report. The Triton kernel runs under
Triton's interpreter (the `triton` extra); without it, its row says so.

    python benchmarks/cpu_tier.py [--runs 5]
    python benchmarks/cpu_tier.py --small      # the suite's: the wrong Triton kernel, one run
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge import grade, load_exercise
from judge.parent.grading import make_sandbox
from judge.shared.paths import EXERCISES_DIR
from judge.shared.tiers import CPU

TARGET_S = 5.0  # issue 40: a wrong Triton kernel's CPU-tier verdict, warm
TRITON_WRONG = ("triton-fused-add-rmsnorm", "wrong/triton_row_offset.py")
FILES = [TRITON_WRONG, ("triton-fused-add-rmsnorm", "solutions/reference.py"),
         ("cudagraph-keep-outputs", "wrong/one_buffer.py"), ("cudagraph-keep-outputs", "solutions/reference.py"),
         ("cudagraph-skipped-step", "wrong/zero_fill.py"), ("decode-cpu-per-step", "solutions/reference.py")]


def timed(sandbox, exercise, path: str) -> tuple[float, str]:
    started = time.monotonic()
    report = grade(exercise, exercise.read(path), sandbox=sandbox, filename=Path(path).name, tier=CPU)
    failure = report.first_failure()
    return time.monotonic() - started, report.verdict.value + (f" at {failure.name}" if failure else "")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="the wrong Triton kernel, one run")
    args = parser.parse_args(argv)
    files, runs = ([TRITON_WRONG], 1) if args.small else (FILES, args.runs)
    if importlib.util.find_spec("triton") is None:
        print("triton is not installed (pip install 'torch-practice[triton]'): the Triton kernel's rows are left out")
        files = [f for f in files if f[0] != TRITON_WRONG[0] or "triton" not in f[1]]
    sandbox = make_sandbox("local")
    try:
        started = time.monotonic()
        first = load_exercise(EXERCISES_DIR / files[0][0])
        timed(sandbox, first, files[0][1])
        print(f"warm-up grading (starts the warm workers): {time.monotonic() - started:.2f} s")
        for exercise_id, path in files:
            exercise = load_exercise(EXERCISES_DIR / exercise_id)
            times, verdict = [], ""
            for _ in range(runs):
                seconds, verdict = timed(sandbox, exercise, path)
                times.append(seconds)
            print(f"{exercise_id}:{path}  {verdict}  median {statistics.median(times):.2f} s, "
                  f"min {min(times):.2f} s, max {max(times):.2f} s over {runs} run(s)")
            if (exercise_id, path) == TRITON_WRONG:
                met = "met" if statistics.median(times) <= TARGET_S else "MISSED"
                print(f"target: a wrong Triton kernel's CPU-tier verdict in at most {TARGET_S:.0f} s warm: {met}")
    finally:
        sandbox.close()


if __name__ == "__main__":
    main()
