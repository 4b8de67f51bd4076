"""How long the slow exercises take to grade, against the time limit each one declares.

    python benchmarks/slow_exercises.py [ID ...] [--sandbox none|bwrap|docker] [--runs 2]

Grades each exercise's reference solution `--runs` times and prints the wall time of every run, the slowest
checks, and the headroom left under `limits.time_seconds`. Defaults to the exercises whose checks run real
Inductor compiles (fuse-rmsnorm-silu) or fresh processes with their own compile caches
(compile-cache-artifacts, aot-compile-artifact). The limit is CPU time (sandbox/clock.py): the wall time of a
grading on an idle machine is an upper bound of its runner's CPU time (one thread, a CPU quota of one core), so run
it on an idle machine; on a loaded one the wall time grows while the CPU time does not.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge import grade, load_exercise
from judge.grading import make_sandbox
from judge.paths import EXERCISES_DIR

DEFAULT_IDS = ["fuse-rmsnorm-silu", "compile-cache-artifacts", "aot-compile-artifact"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", default=DEFAULT_IDS)
    parser.add_argument("--sandbox", default="none")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    sandbox = make_sandbox(args.sandbox)
    worst_ratio = 0.0
    for exercise_id in args.ids:
        exercise = load_exercise(EXERCISES_DIR / exercise_id)
        limit = exercise.limits.time_seconds
        for run in range(1, args.runs + 1):
            started = time.monotonic()
            report = grade(exercise, exercise.read(exercise.reference), sandbox=sandbox)
            wall = time.monotonic() - started
            worst_ratio = max(worst_ratio, wall / limit)
            slowest = sorted(report.checks, key=lambda c: c.duration_s, reverse=True)[:2]
            checks = ", ".join(f"{c.name} {c.duration_s:.1f}s" for c in slowest)
            print(f"{exercise_id:26s} run {run}: {report.verdict.value:9s} {wall:6.1f}s of {limit:.0f}s "
                  f"({100 * wall / limit:3.0f}%)  slowest: {checks}", flush=True)
    print(f"worst run used {100 * worst_ratio:.0f}% of its exercise's time limit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
