"""Where one warm grading's CPU goes, phase by phase, beside its totals (issue 33's "measure first").

Grades on the warm `local` backend (forks of one warm runner and one warm verifier, as `--watch`, `practice prove`
and the suite do) with `PRACTICE_PHASES` set, so the runner and the verifier record their spans
(judge/shared/phases.py):

- runner:   importing the learner's file, each request by kind (compile, call, reset, tamper, ...);
- verifier: each check, and inside the checks the graphs rebuilt from IR, the graphs run sealed (the first run of a
            graph with a local backend such as Inductor compiles it), the time spent waiting for the runner; the
            cost section;
- trusted side (this process): the whole grading's wall time, this process's CPU (the relay) and the report.

What no span covers (forking, the job's set-up, the channel, and child processes such as the C++ compiler that
Inductor runs) is printed as "the rest", so each role's lines add up to the CPU its process group used (the
backend's accounting).

    python benchmarks/grading_phases.py [--runs 3] [EXERCISE[:SOLUTION] ...]
    python benchmarks/grading_phases.py --small     # the suite's: the book exercise's reference, one run

Each exercise is graded both ways, side by side: with compile sessions shared between the hidden tests that ask for
it (`Ref.compile(reuse=True)`, today's gradings) and with every test compiling from a fresh state (before).
Default: the book exercise's reference, fuse-rmsnorm-silu's reference and a solution of it written differently.
Every verdict must be ACCEPTED.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge import grade, load_exercise
from judge.child import PROGRAM
from judge.reports.report import Verdict
from judge.shared import phases
from judge.shared.paths import EXERCISES_DIR
from sandbox import Sandbox
from sandbox.backends import get_sandbox

DEFAULT = ["graph-break-step", "fuse-rmsnorm-silu", "fuse-rmsnorm-silu:solutions/functional_rms_norm.py"]


class Recording(Sandbox):
    """Passes runs through to a backend and keeps each run's CPU time by pool (runner, verifier)."""

    def __init__(self, inner: Sandbox):
        self.inner, self.cpu = inner, {}
        self.name = inner.name

    def run(self, job_json, limits, on_message=None, *, inbox=None, pool="default"):
        outcome = self.inner.run(job_json, limits, on_message, inbox=inbox, pool=pool)
        self.cpu[pool] = outcome.cpu_s
        return outcome

    def facts(self):
        return self.inner.facts()

    def close(self):
        self.inner.close()


def read_spans(folder: Path) -> dict[str, list[dict]]:
    """role -> its spans, from the files the graded processes wrote (then removed for the next grading)."""
    spans: dict[str, list[dict]] = defaultdict(list)
    for path in folder.glob("*.jsonl"):
        role = path.name.split("-")[0]
        spans[role] += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        path.unlink()
    return spans


def summarize(spans: dict[str, list[dict]], cpu: dict[str, float | None]) -> dict[str, float]:
    """Phase -> CPU seconds, one level per role, with 'the rest' making each role add up to its process's CPU."""
    out: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for span in spans.get("runner", []):
        name = span["name"].removeprefix("runner.")
        key = f"runner: {'import learner file' if name == 'import' else 'request ' + name}"
        out[key] += span["cpu"]
        counts[key] += 1
    for span in spans.get("verifier", []):
        name = span["name"]
        if name.startswith("check "):
            out["verifier: checks (all)"] += span["cpu"]
        elif name == "verifier.cost":
            out["verifier: cost section"] += span["cpu"]
        elif name == "verifier.pytest":
            out["verifier: pytest"] += span["cpu"]
        elif name.startswith("verifier."):
            key = "verifier:   in checks: " + name.removeprefix("verifier.")
            out[key] += span["cpu"]
            counts[key] += 1
    out["verifier: pytest start, collection, between checks"] = (out.pop("verifier: pytest", 0.0)
                                                                 - out["verifier: checks (all)"])
    for role in ("runner", "verifier"):
        accounted = sum(v for k, v in out.items() if k.startswith(f"{role}: "))
        if cpu.get(role) is not None:
            out[f"{role}: the rest (fork, job, channel, child processes)"] = cpu[role] - accounted
            out[f"{role}: TOTAL"] = cpu[role]
    return {f"{k} (x{counts[k]})" if counts.get(k, 0) > 1 else k: v for k, v in out.items()}


def measure(name: str, runs: int, sandbox: Recording, folder: Path, reuse: bool = True) -> list[dict[str, float]]:
    exercise_id, _, solution = name.partition(":")
    exercise = load_exercise(EXERCISES_DIR / exercise_id)
    source = exercise.read(solution or exercise.reference)
    import judge.parent.grading

    built = judge.parent.grading.build_report
    report_s: list[float] = []

    def timed_build_report(*args, **kwargs):
        started = time.process_time()
        try:
            return built(*args, **kwargs)
        finally:
            report_s.append(time.process_time() - started)

    judge.parent.grading.build_report = timed_build_report
    figures = []
    try:
        for i in range(runs + 1):  # the first grading is not counted: each worker's first fork touches more pages
            read_spans(folder)
            sandbox.cpu.clear()
            report_s.clear()
            cpu, wall = time.process_time(), time.perf_counter()
            report = grade(exercise, source, sandbox=sandbox, reuse_compiled=reuse)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            if report.verdict is not Verdict.ACCEPTED:
                raise SystemExit(f"{name}: expected ACCEPTED, got {report.verdict.value}: {report.summary}")
            if i == 0:
                continue
            phase = summarize(read_spans(folder), sandbox.cpu)
            phase["trusted: build the report"] = sum(report_s)
            phase["trusted: relay and the rest"] = cpu - sum(report_s)
            phase["ALL THREE PROCESSES: CPU"] = sum(c or 0.0 for c in sandbox.cpu.values()) + cpu
            phase["WALL"] = wall
            figures.append(phase)
    finally:
        judge.parent.grading.build_report = built
    return figures


def table(name: str, figures: list[dict[str, float]]) -> str:
    keys = list(dict.fromkeys(k for f in figures for k in f))
    width = max(len(k) for k in keys) + 2
    lines = [f"{name}: median over {len(figures)} warm gradings (seconds; CPU unless it says WALL)"]
    for key in sorted(keys, key=lambda k: (k.split(":")[0] in ("ALL THREE PROCESSES", "WALL"), k.split(":")[0])):
        values = [f[key] for f in figures if key in f]
        lines.append(f"  {key:<{width}} {statistics.median(values):7.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercises", nargs="*", help="EXERCISE or EXERCISE:SOLUTION (default: the three above)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--small", action="store_true", help="the book exercise's reference, one run")
    args = parser.parse_args(argv)
    names = ["graph-break-step"] if args.small else (args.exercises or DEFAULT)
    runs = 1 if args.small else args.runs
    with tempfile.TemporaryDirectory(prefix="practice-phases-") as folder:
        program = PROGRAM.model_copy(update={"env": {**PROGRAM.env, phases.ENV: folder}})
        sandbox = Recording(get_sandbox("local", program))
        try:
            for name in names:
                totals = {}
                for reuse, way in ((False, "every test from a fresh state"), (True, "shared compile sessions")):
                    figures = measure(name, runs, sandbox, Path(folder), reuse)
                    print(table(f"{name} [{way}]", figures), flush=True)
                    missing = [k for k in ("runner: import learner file", "verifier: checks (all)")
                               if not any(key.startswith(k) for key in figures[0])]
                    if missing:
                        raise SystemExit(f"{name}: no spans recorded for {', '.join(missing)}")
                    totals[way] = statistics.median(f["ALL THREE PROCESSES: CPU"] for f in figures)
                before, after = totals.values()
                print(f"{name}: CPU per grading {before:.3f} s fresh -> {after:.3f} s shared ({before / after:.2f}x)")
        finally:
            sandbox.close()
    print("PHASES OK")


if __name__ == "__main__":
    main()
