"""End-to-end grading latency of the book's exercise: a warm pool against a fresh process per submission.

    python benchmarks/latency.py [--sandbox bwrap|docker] [--runs 10] [--fresh-runs 5]

Grades the honest solution of `graph-break-step` (the `if h.sum().item() > 0` step rewritten with
torch.where) through `judge.grade`, checks every verdict is ACCEPTED, and prints the median wall
time of each way and their ratio. The warm pool is filled before timing starts, as on a server
that has been up for a while; the fresh way starts `python -m judge.child` for every submission.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge import grade, load_exercise  # noqa: E402
from judge.paths import EXERCISES_DIR  # noqa: E402
from judge.report import Verdict  # noqa: E402
from judge.grading import make_sandbox  # noqa: E402
from sandbox import Sandbox  # noqa: E402

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


class Recording(Sandbox):
    """Passes runs through to a backend and keeps each run's CPU time (cgroup, or reaped children)."""

    def __init__(self, inner: Sandbox):
        self.inner, self.cpu = inner, []
        self.name = inner.name

    def run(self, job_json, limits, on_message=None):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        outcome = self.inner.run(job_json, limits, on_message)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        reaped = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        self.cpu.append(outcome.cpu_s if outcome.cpu_s is not None else reaped)
        return outcome

    def describe(self) -> str:
        return self.inner.describe()


def timed(sandbox, exercise, source: str, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        report = grade(exercise, source, sandbox=sandbox)
        times.append(time.perf_counter() - started)
        if report.verdict is not Verdict.ACCEPTED:
            raise SystemExit(f"expected ACCEPTED, got {report.verdict.value}: {report.summary}\n{report.stderr[-2000:]}")
    return times


def line(label: str, times: list[float], cpu: list[float]) -> str:
    return (f"{label} median {statistics.median(times):.3f} s over {len(times)} runs "
            f"(min {min(times):.3f}, max {max(times):.3f}; CPU median {statistics.median(cpu):.3f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", default="bwrap", choices=["bwrap", "docker"], help="the warm backend")
    parser.add_argument("--runs", type=int, default=10, help="graded submissions through the warm pool")
    parser.add_argument("--fresh-runs", type=int, default=5, help="graded submissions in fresh processes")
    args = parser.parse_args()

    exercise = load_exercise(EXERCISES_DIR / EXERCISE)
    source = honest_solution(exercise)

    backend = make_sandbox(args.sandbox)
    warm = Recording(backend)
    try:
        started = time.perf_counter()
        backend.warm_up()
        ready = time.perf_counter() - started
        backend.pool.settle(120)
        timed(warm, exercise, source, 1)  # not counted: the first fork of each worker touches more pages
        warm.cpu.clear()
        warm_times = timed(warm, exercise, source, args.runs)
    finally:
        backend.close()
    fresh = Recording(make_sandbox("none"))
    fresh_times = timed(fresh, exercise, source, args.fresh_runs)

    warm_median, fresh_median = statistics.median(warm_times), statistics.median(fresh_times)
    print(f"exercise: {EXERCISE}; warm backend: {args.sandbox} (pool ready in {ready:.1f} s); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(line("warm pool  ", warm_times, warm.cpu))
    print(line("fresh proc ", fresh_times, fresh.cpu))
    print(f"ratio fresh/warm: {fresh_median / warm_median:.1f}x (wall), "
          f"{statistics.median(fresh.cpu) / max(1e-9, statistics.median(warm.cpu)):.1f}x (CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
