"""How long the slow exercises take to grade, against the time limit each one declares.

    python benchmarks/slow_exercises.py [ID ...] [--sandbox none|bwrap|docker] [--runs 2]
    python benchmarks/slow_exercises.py [ID ...] --cold [--runs 3]

Grades each exercise's reference solution `--runs` times and prints the wall time of every run, the slowest
checks, and the headroom left under `limits.time_seconds`. Defaults to the exercises whose checks run real
Inductor compiles (fuse-rmsnorm-silu) or fresh processes with their own compile caches
(compile-cache-artifacts, aot-compile-artifact). The limit is CPU time (sandbox/clock.py): the wall time of a
grading on an idle machine is an upper bound of its runner's CPU time (one thread, a CPU quota of one core), so run
it on an idle machine; on a loaded one the wall time grows while the CPU time does not.

`--cold` times what a learner waits for from a fresh shell instead: `python practice/judge.py ID REFERENCE
--no-daemon` as a whole process (imports, fresh runner and verifier, no warm worker), each run's wall time and CPU
(the process tree's, which load does not inflate), their medians and the load average around them, against
Exercism's per-solution budget of 20 s. The machine's one-time set-up (the vector-ISA probe Inductor compiles into
an empty PRACTICE_INDUCTOR_CACHE, paid by the first grading of any exercise) is in the first run only where that
cache is empty.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge import grade, load_exercise
from judge.parent.grading import make_sandbox
from judge.shared.paths import EXERCISES_DIR

DEFAULT_IDS = ["fuse-rmsnorm-silu", "compile-cache-artifacts", "aot-compile-artifact"]
COLD_BUDGET_S = 20.0  # Exercism's test runner gives a solution 20 s; a cold grading should fit it on 2 cores
JUDGE = Path(__file__).resolve().parent.parent / "practice" / "judge.py"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cold(ids: list[str], runs: int) -> int:
    """Each exercise's reference graded from a fresh process, no daemon: wall seconds, median, load average."""
    worst = 0.0
    for exercise_id in ids:
        exercise = load_exercise(EXERCISES_DIR / exercise_id)
        walls, cpus, load_before = [], [], _load()
        for run in range(1, runs + 1):
            started, used = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run([sys.executable, str(JUDGE), exercise_id, str(exercise.root / exercise.reference),
                                   "--no-daemon"], env={**os.environ, "PRACTICE_DAEMON": "0"},
                                  capture_output=True, text=True)
            walls.append(time.monotonic() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime)
            verdict = "ACCEPTED" if done.returncode == 0 else f"exit {done.returncode}"
            print(f"{exercise_id:26s} cold run {run}: {verdict:9s} {walls[-1]:6.1f}s ({cpus[-1]:.1f} CPU-s)",
                  flush=True)
        median = statistics.median(walls)
        worst = max(worst, median)
        print(f"{exercise_id:26s} cold median {median:.1f}s of {COLD_BUDGET_S:.0f}s, {statistics.median(cpus):.1f} "
              f"CPU-s (load average {load_before} before, {_load()} after)", flush=True)
    print(f"worst cold median {worst:.1f}s against a {COLD_BUDGET_S:.0f} s budget")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", default=DEFAULT_IDS)
    parser.add_argument("--sandbox", default="none")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--cold", action="store_true", help="time `practice/judge.py ID REF --no-daemon` processes")
    args = parser.parse_args()
    if args.cold:
        return cold(args.ids, args.runs)
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
