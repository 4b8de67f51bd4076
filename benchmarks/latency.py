"""End-to-end grading latency of the book's exercise: a warm pool against a fresh process per submission.

    python benchmarks/latency.py [--sandbox bwrap|docker] [--runs 10] [--fresh-runs 5]

Grades the honest solution of `graph-break-step` (the `if h.sum().item() > 0` step rewritten with
torch.where) through `judge.grade`, checks every verdict is ACCEPTED, and prints the median wall
time of each way and their ratio. The warm pool is filled before timing starts, as on a server
that has been up for a while; the fresh way starts `python -m judge.child` for every submission.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge import grade, load_exercise  # noqa: E402
from judge.paths import EXERCISES_DIR  # noqa: E402
from judge.report import Verdict  # noqa: E402
from sandbox import get_sandbox  # noqa: E402

EXERCISE = "graph-break-step"


def honest_solution(exercise) -> str:
    """The starter with its data-dependent branch kept in the graph."""
    source = exercise.read(exercise.starter)
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if "h.sum().item() > 0" in line:
            indent = line[: len(line) - len(line.lstrip())]
            j = i + 1
            while j < len(lines) and "h * 2" not in lines[j].replace("h*2", "h * 2"):
                j += 1
            lines[i : j + 1] = [f"{indent}h = torch.where(h.sum() > 0, h * 2, h)"]
            return "\n".join(lines) + "\n"
    return exercise.read(exercise.reference)


def timed(sandbox, exercise, source: str, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        report = grade(exercise, source, sandbox=sandbox)
        times.append(time.perf_counter() - started)
        if report.verdict is not Verdict.ACCEPTED:
            raise SystemExit(f"expected ACCEPTED, got {report.verdict.value}: {report.summary}\n{report.stderr[-2000:]}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", default="bwrap", choices=["bwrap", "docker"], help="the warm backend")
    parser.add_argument("--runs", type=int, default=10, help="graded submissions through the warm pool")
    parser.add_argument("--fresh-runs", type=int, default=5, help="graded submissions in fresh processes")
    args = parser.parse_args()

    exercise = load_exercise(EXERCISES_DIR / EXERCISE)
    source = honest_solution(exercise)

    warm = get_sandbox(args.sandbox)
    try:
        started = time.perf_counter()
        warm.warm_up()
        ready = time.perf_counter() - started
        timed(warm, exercise, source, 1)  # first run also fills the second slot in the background
        warm.pool.settle(120)
        warm_times = timed(warm, exercise, source, args.runs)
    finally:
        warm.close()
    fresh = get_sandbox("none")
    fresh_times = timed(fresh, exercise, source, args.fresh_runs)

    warm_median, fresh_median = statistics.median(warm_times), statistics.median(fresh_times)
    print(f"exercise: {EXERCISE}; warm backend: {args.sandbox} (first worker ready in {ready:.1f} s)")
    print(f"warm pool   median {warm_median:.3f} s over {len(warm_times)} runs "
          f"(min {min(warm_times):.3f}, max {max(warm_times):.3f})")
    print(f"fresh proc  median {fresh_median:.3f} s over {len(fresh_times)} runs "
          f"(min {min(fresh_times):.3f}, max {max(fresh_times):.3f})")
    print(f"ratio fresh/warm: {fresh_median / warm_median:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
