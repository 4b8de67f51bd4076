"""End-to-end grading latency of the book's exercise: through the web API and `judge.grade` on a warm pool,
against fresh processes per submission, beside the figure of the single-process grader this replaced.

    python benchmarks/latency.py [--sandbox bwrap|docker] [--runs 10] [--fresh-runs 5]

Grades the honest solution of `graph-break-step` (the `if h.sum().item() > 0` step rewritten with
torch.where), checks every verdict is ACCEPTED, and prints the median wall time of each way. A grading is
two processes (runner and verifier); CPU is summed over both. The warm pools are filled before timing
starts, as on a server that has been up for a while; the fresh way starts two `python -m judge.child`.
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
# The single-process grader (learner code and hidden tests in one process), warm bwrap median measured on
# this 2-core machine at commit 114bc1b; the runner/verifier split replaced it.
SINGLE_PROCESS_WARM_MEDIAN_S = 0.683


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
        self.inner, self.runs = inner, []
        self.name = inner.name

    def run(self, job_json, limits, on_message=None, *, inbox=None, pool="default"):
        outcome = self.inner.run(job_json, limits, on_message, inbox=inbox, pool=pool)
        self.runs.append(outcome.cpu_s)
        return outcome

    @property
    def cpu(self) -> list[float]:
        """CPU per grading (its runner and its verifier), where the backend measures it."""
        pairs = [self.runs[i:i + 2] for i in range(0, len(self.runs) - 1, 2)]
        return [sum(p) for p in pairs if all(c is not None for c in p)] or [0.0]

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


def line(label: str, times: list[float], cpu: list[float] | None = None) -> str:
    text = (f"{label} median {statistics.median(times):.3f} s over {len(times)} runs "
            f"(min {min(times):.3f}, max {max(times):.3f}")
    return text + (f"; CPU median {statistics.median(cpu):.3f} s)" if cpu and any(cpu) else ")")


def web_times(sandbox_name: str, exercise, source: str, runs: int) -> list[float]:
    """POST to the JSON API, wait for the `done` event: what a learner waits for, queue and storage included."""
    import json
    import tempfile

    from fastapi.testclient import TestClient

    from web.app import create_app
    from web.settings import Settings

    with tempfile.TemporaryDirectory() as data:
        settings = Settings(data_dir=Path(data), exercises_dir=EXERCISES_DIR, sandbox=sandbox_name, workers=1,
                            secret_key="latency")
        times = []
        with TestClient(create_app(settings)) as client:
            for i in range(runs + 1):
                started = time.perf_counter()
                created = client.post(f"/api/exercises/{EXERCISE}/submissions", json={"source": source}).json()
                verdict = None
                with client.stream("GET", created["events_url"]) as stream:
                    for text in stream.iter_lines():
                        if text.startswith("data: ") and (json.loads(text[6:]).get("report") or {}).get("verdict"):
                            verdict = json.loads(text[6:])["report"]["verdict"]
                if verdict != "ACCEPTED":
                    raise SystemExit(f"web: expected ACCEPTED, got {verdict}")
                if i:  # the first one is not counted: each worker's first fork touches more pages
                    times.append(time.perf_counter() - started)
        return times


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
        backend.warm_up(pools=("runner", "verifier"))
        ready = time.perf_counter() - started
        for name in ("runner", "verifier"):
            backend.pool(name).settle(120)
        timed(warm, exercise, source, 1)  # not counted: the first fork of each worker touches more pages
        warm.runs.clear()
        warm_times = timed(warm, exercise, source, args.runs)
    finally:
        backend.close()
    through_web = web_times(args.sandbox, exercise, source, args.runs)
    fresh = Recording(make_sandbox("none"))
    fresh_times = timed(fresh, exercise, source, args.fresh_runs)

    warm_median, fresh_median = statistics.median(warm_times), statistics.median(fresh_times)
    print(f"exercise: {EXERCISE}; warm backend: {args.sandbox} (pools ready in {ready:.1f} s); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(line("web API, warm   ", through_web))
    print(line("grade(), warm   ", warm_times, warm.cpu))
    print(line("fresh processes ", fresh_times))
    print(f"single-process grader (replaced), warm median: {SINGLE_PROCESS_WARM_MEDIAN_S:.3f} s; "
          f"web API now {statistics.median(through_web) / SINGLE_PROCESS_WARM_MEDIAN_S:.2f}x of it")
    print(f"ratio fresh/warm: {fresh_median / warm_median:.1f}x (wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
