"""GPU grading on a CUDA machine, end to end and cold against warm, side by side in one run:

- cold (today's path before the prestarted graders): each GPU exercise's reference and a second correct solution
  graded by `judge.grade` in fresh processes (backend "none"), one at a time;
- `practice serve` started as a user would (embedded SQLite, `--sandbox none`: docs/deploy.md says why), its GPU
  layer built (watched on /healthz), then through its web API: the same solutions graded warm one at a time
  (the prestarted graders), every pinned wrong solution of the three exercises (each must get its pinned verdict
  and check), and a burst of submissions sent at once (the wait of each, from POST to verdict).

    python benchmarks/gpu_latency.py [--cold-runs 1] [--warm-runs 3] [--burst 20] [--workers N] [--skip-cold]
                                     [--paths before,zygote]

Each of `--paths` (how the prestarted processes start: `before`, an interpreter each compiling its own warm-up, as
until 2026-12-02; `fresh`, an interpreter each from the shared preparation; `zygote`, forked from a zygote that has
imported torch (sandbox/zygote.py), from the shared preparation) gets a server of its own, measured in turn.
Prints, per path, one line per solution (warm median against its target, beside the cold median), the burst's
median and 95th-percentile wait, and beside it the prepare time of one prestarted process (alone, and as many at
once as the burst, measured before that server starts). `--small` (the suite's mode, on a machine without CUDA)
prints each path's prepare time of one process alone, and stops.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.shared.paths import EXERCISES_DIR, PROJECT_ROOT

EXERCISES = ("cudagraph-keep-outputs", "cudagraph-skipped-step", "triton-fused-add-rmsnorm")
TARGETS = {"reference": 6.0, "other": 10.0}  # warm medians, seconds (issue 24)
BURST_TARGET = 8.0  # a burst's median wait from POST to verdict, seconds (issue 40)


def cold_times(exercise, source: str, runs: int) -> list[float]:
    from judge import grade
    from judge.parent.grading import make_sandbox

    times = []
    for _ in range(runs):
        started = time.perf_counter()
        report = grade(exercise, source, sandbox=make_sandbox("none"))
        times.append(time.perf_counter() - started)
        if report.verdict.value != "ACCEPTED":
            raise SystemExit(f"cold {exercise.id}: {report.verdict.value}: {report.summary}\n{report.stderr[-1500:]}")
    return times


class Server:
    """`practice serve` in a process of its own, on a free port, with its own data and layers folders."""

    def __init__(self, folder: Path, workers: int | None, port: int, log: Path | None = None):
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "PRACTICE_ALLOW_UNSANDBOXED": "1", "PRACTICE_SUBMISSIONS_PER_MINUTE": "1000",
               "PRACTICE_COMPILE_CACHE_DIR": str(folder / "layers"), "PRACTICE_SECRET_KEY": "gpu-latency",
               "PYTHONUNBUFFERED": "1"}
        if workers is not None:
            env["PRACTICE_WORKERS"] = str(workers)
        self.log = open(log or folder / "serve.log", "w")
        self.proc = subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--port", str(port),
                                      "--data-dir", str(folder / "data"), "--sandbox", "none"],
                                     cwd=PROJECT_ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def health(self) -> dict | None:
        import httpx

        try:
            return httpx.get(self.url + "/healthz", timeout=5).json()
        except (httpx.HTTPError, ValueError):
            return None

    def wait_gpu_layer(self, timeout: float = 600) -> float:
        started, last = time.perf_counter(), None
        while time.perf_counter() - started < timeout:
            if self.proc.poll() is not None:
                raise SystemExit(f"practice serve ended ({self.proc.returncode}); see its log")
            health = self.health()
            state = ((health or {}).get("layers") or {}).get("gpu")
            if state != last:
                print(f"  /healthz after {time.perf_counter() - started:5.1f} s: gpu layers {state}", flush=True)
                last = state
            if state and state["state"] in ("ready", "failed"):
                return time.perf_counter() - started
            time.sleep(0.5)  # /healthz is the operator's view: polled as an operator would
        raise SystemExit("the GPU layer was not built in time")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def submit(url: str, exercise_id: str, source: str) -> tuple[float, dict]:
    """POST as a new learner, follow the events until the report; (seconds from POST to verdict, report)."""
    import httpx

    with httpx.Client(base_url=url, timeout=None) as client:
        started = time.perf_counter()
        created = client.post(f"/api/exercises/{exercise_id}/submissions", json={"source": source})
        created.raise_for_status()
        with client.stream("GET", created.json()["events_url"]) as stream:
            for text in stream.iter_lines():
                if text.startswith("data: "):
                    report = json.loads(text[6:]).get("report") or {}
                    if report.get("verdict"):
                        return time.perf_counter() - started, report
    raise RuntimeError(f"{exercise_id}: the event stream ended without a report")


def at_once(url: str, jobs: list[tuple[str, str, str]]) -> list[tuple[str, float, dict]]:
    """Each (label, exercise_id, source) submitted at the same moment by its own learner."""
    results: list = [None] * len(jobs)

    def one(i, label, exercise_id, source):
        try:
            results[i] = (label, *submit(url, exercise_id, source))
        except Exception as exc:  # noqa: BLE001 - reported in the table
            results[i] = (label, float("nan"), {"verdict": f"ERROR {exc}"})

    threads = [threading.Thread(target=one, args=(i, *job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def first_failing(report: dict) -> str | None:
    return next((c["name"] for c in report.get("checks", []) if not c.get("passed")), None)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


# How the prestarted processes start: before (each afresh, compiling its own warm-up, as until 2026-12-02), fresh
# (afresh, from the shared preparation), zygote (forked from the zygote, from the shared preparation).
PATHS = {"before": (False, False), "fresh": (False, True), "zygote": (True, True)}  # (zygote, shared preparation)


def prepare_figures(path: str, at_once: int) -> dict:
    """Seconds for prestarted processes to prepare, outside any server: the start (the zygote, if any, and the
    shared preparation: once), one process alone, and `at_once` processes started together (as a burst's
    successors are), half of them runners (none where `at_once` is 0)."""
    from judge.child import PROGRAM
    from sandbox.prestarted import PrestartedSandbox

    figures: dict = {}
    zygote, shared = PATHS[path]
    alone = PrestartedSandbox(PROGRAM, pool_size=1, zygote=zygote, share_preparation=shared)  # as web/graders.py
    try:
        started = time.perf_counter()
        alone.start()
        figures["off"] = alone.zygote_off if zygote else None
        figures["start"] = time.perf_counter() - started
        if not alone.wait_prepared("runner", 1):
            raise SystemExit(f"no prestarted process prepared: {alone.errors[-1:]}")
        figures["alone"] = alone.prepare_times[0][2]
    finally:
        alone.close()
    if not at_once:
        return figures
    together = PrestartedSandbox(PROGRAM, pool_size=max(1, at_once // 2), zygote=zygote, share_preparation=shared)
    try:
        together.start()
        for pool in ("runner", "verifier"):
            together.wait_prepared(pool, 0)  # starts filling both pools at once
        for pool in ("runner", "verifier"):
            if not together.wait_prepared(pool, together.pool_size):
                raise SystemExit(f"prestarted processes did not prepare: {together.errors[-1:]}")
        times = [t for _, _, t in together.prepare_times]
        figures.update(at_once=len(times), median=statistics.median(times), max=max(times),
                       how=sorted({how for _, how, _ in together.prepare_times}))
    finally:
        together.close()
    return figures


def prepare_line(path: str, f: dict) -> str:
    what = " and ".join(name for name, on in zip(("zygote", "shared preparation"), PATHS[path]) if on)
    zygote = f" ({what} started in {f['start']:.2f} s)" if what else ""
    off = f"; zygote OFF: {f['off']}" if f.get("off") else ""
    together = f", {f['at_once']} at once median {f['median']:.2f} s max {f['max']:.2f} s" if "at_once" in f else ""
    return f"prepare per successor, {path:<6}: alone {f['alone']:.2f} s{together}{zygote}{off}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold-runs", type=int, default=1)
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--workers", type=int, default=None,
                        help="the server's concurrent gradings (default: its own, sized by the machine)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--skip-cold", action="store_true")
    parser.add_argument("--paths", default="before,fresh,zygote",
                        help="how the prestarted processes start, each measured in a server of its own, in this "
                             "order: before (an interpreter each, compiling its own warm-up), fresh (an interpreter "
                             "each, from the shared preparation), zygote (forked from one: sandbox/zygote.py, "
                             "from the shared preparation)")
    parser.add_argument("--serve-log", type=Path, default=None, help="keep practice serve's output in this file")
    parser.add_argument("--small", action="store_true",
                        help="without CUDA: each path's prepare time of one process, then stop (the suite's mode)")
    args = parser.parse_args()
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    if not paths or any(p not in PATHS for p in paths):
        parser.error(f"--paths takes a comma-separated list of: {', '.join(PATHS)}")

    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: the GPU benchmark runs on a GPU machine (docs/deploy.md)")
        if not args.small:
            return 1
        for path in paths:  # one process alone: the code of the burst's figure is the same with a larger pool
            print(prepare_line(path, prepare_figures(path, 0)), flush=True)
        return 0
    from judge import load_exercise

    exercises = [load_exercise(EXERCISES_DIR / e) for e in EXERCISES]
    solutions = {(e.id, label): e.read(path) for e in exercises
                 for label, path in (("reference", e.reference), ("other", e.solutions[0]))}
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)

    cold: dict = {}
    if not args.skip_cold:
        os.environ["PRACTICE_INDUCTOR_CACHE"] = tempfile.mkdtemp(prefix="practice-cold-cache-")
        for e in exercises:
            for label in ("reference", "other"):
                cold[(e.id, label)] = cold_times(e, solutions[(e.id, label)], args.cold_runs)
                print(f"  cold {e.id} {label}: {cold[(e.id, label)]}", flush=True)

    measured = {}
    for path in paths:
        print(f"== prestarted processes: {path}", flush=True)
        prepared = prepare_figures(path, args.burst)
        print("  " + prepare_line(path, prepared), flush=True)
        measured[path] = (prepared, serve_and_measure(args, path, exercises, solutions))

    failed = False
    for path, (prepared, m) in measured.items():
        print()
        print(f"== {path}: GPU layer built in {m['layer_s']:.0f} s after the server answered; server: "
              f"{args.workers or 'its default number of'} concurrent gradings, prestarted graders: {m['graders']}")
        for key in solutions:
            times = [t for t, _ in m["warm"][key]]
            w = statistics.median(times)
            target = TARGETS[key[1]]
            cold_text = f"cold {statistics.median(cold[key]):6.2f} s ({statistics.median(cold[key]) / w:4.1f}x)" \
                if key in cold else "cold not measured"
            print(f"{key[0] + ' ' + key[1]:<42} warm {w:6.2f} s (target {target:.0f} s: "
                  f"{'met' if w <= target else 'MISSED'}) | {cold_text}; warm min {min(times):.2f} max "
                  f"{max(times):.2f}, {len(times)} runs")
        burst, wrong, mismatches = m["burst"], m["wrong"], m["mismatches"]
        burst_bad = [b for b in burst if b[2].get("verdict") != "ACCEPTED"]
        waits = [s for _, s, r in burst if r.get("verdict") == "ACCEPTED"]
        print(f"wrong solutions: {len(wrong) - mismatches}/{len(wrong)} got their pinned verdict and check "
              f"({m['wrong_wall']:.0f} s for all, sent at once)")
        if waits:
            median = statistics.median(waits)
            print(f"burst of {len(burst)} at once ({path}): wait median {median:.1f} s "
                  f"(target {BURST_TARGET:.0f} s: {'met' if median <= BURST_TARGET else 'MISSED'}), "
                  f"p95 {p95(waits):.1f} s, max {max(waits):.1f} s, all done in {m['burst_wall']:.0f} s; "
                  f"{len(burst_bad)} not ACCEPTED")
            print("  " + prepare_line(path, prepared))
            where_the_wait_went(m["warm"], burst)
        failed = failed or bool(mismatches or burst_bad)
    return 1 if failed else 0


def serve_and_measure(args, path: str, exercises, solutions) -> dict:
    """`practice serve` with the prestarted processes started the `path` way: its GPU layer built, then the warm
    gradings, the wrong solutions at once and the burst."""
    zygote, shared = PATHS[path]  # the server inherits both
    os.environ.update({"PRACTICE_PRESTARTED_ZYGOTE": str(int(zygote)),
                       "PRACTICE_PRESTARTED_SHARE_PREPARATION": str(int(shared))})
    with tempfile.TemporaryDirectory(prefix="practice-gpu-latency-") as folder:
        log = args.serve_log.with_suffix(f".{path}{args.serve_log.suffix}") if args.serve_log else None
        server = Server(Path(folder), args.workers, args.port, log)
        try:
            started = time.perf_counter()
            while server.health() is None:
                if server.proc.poll() is not None:
                    raise SystemExit("practice serve did not start; see its log")
                time.sleep(0.5)
            print(f"  practice serve answered after {time.perf_counter() - started:.1f} s", flush=True)
            layer_s = server.wait_gpu_layer()
            graders = server.health()["workers"]
            print(f"  graders: {graders}", flush=True)
            warm: dict = {}
            for key, source in solutions.items():
                warm[key] = [submit(server.url, key[0], source) for _ in range(args.warm_runs)]
                bad = [r for _, r in warm[key] if r.get("verdict") != "ACCEPTED"]
                if bad:
                    raise SystemExit(f"warm {key}: {bad[0].get('verdict')}: {bad[0].get('summary')} "
                                     f"{bad[0].get('diagnostics')} {str(bad[0].get('stderr'))[-1500:]}")
                print(f"  warm {key[0]} {key[1]}: {[round(t, 2) for t, _ in warm[key]]}", flush=True)

            wrong_jobs = [(f"{e.id}/{w.path}", e.id, e.read(w.path)) for e in exercises for w in e.wrong]
            pinned = {f"{e.id}/{w.path}": (w.verdict.value if hasattr(w.verdict, "value") else w.verdict, w.check)
                      for e in exercises for w in e.wrong}
            started = time.perf_counter()
            wrong = at_once(server.url, wrong_jobs)
            wrong_wall = time.perf_counter() - started
            mismatches = 0
            for label, seconds, report in wrong:
                got = (report.get("verdict"), first_failing(report))
                ok = got == pinned[label]
                mismatches += not ok
                print(f"  wrong {label:<58} {got[0]:<14} {got[1] or '-':<34} {seconds:6.1f} s"
                      f"{'' if ok else f'  EXPECTED {pinned[label]}'}", flush=True)

            burst_jobs = [(f"{key[0]} {key[1]}", key[0], solutions[key])
                          for key in (list(solutions) * args.burst)[:args.burst]]
            started = time.perf_counter()
            burst = at_once(server.url, burst_jobs)
            burst_wall = time.perf_counter() - started
        finally:
            server.stop()
    return {"layer_s": layer_s, "graders": graders, "warm": warm, "wrong": wrong, "wrong_wall": wrong_wall,
            "mismatches": mismatches, "burst": burst, "burst_wall": burst_wall}


def where_the_wait_went(warm: dict, burst: list) -> None:
    """The burst's wait split into grading (the report's duration) and before it, and the checks that slowed most
    against the same solutions graded alone."""
    graded = [r.get("duration_s") or 0.0 for _, _, r in burst]
    before = [s - d for (_, s, _), d in zip(burst, graded)]
    print(f"  of which grading (report duration) median {statistics.median(graded):.1f} s, waiting before it median "
          f"{statistics.median(before):.1f} s")
    alone: dict = {}
    for _, reports in warm.items():
        for _, report in reports:
            for check in report.get("checks", []):
                alone.setdefault((report.get("exercise_id"), check["name"]), []).append(check.get("duration_s", 0))
    together: dict = {}
    for _, _, report in burst:
        for check in report.get("checks", []):
            together.setdefault((report.get("exercise_id"), check["name"]), []).append(check.get("duration_s", 0))
    rows = []
    for key, times in together.items():
        a, b = statistics.median(alone.get(key, [0])), statistics.median(times)
        rows.append((b - a, key, a, b))
    for grew, (exercise, name), a, b in sorted(rows, reverse=True)[:6]:
        print(f"  check {exercise} {name}: alone {a:.2f} s, in the burst {b:.2f} s (+{grew:.2f} s)")


if __name__ == "__main__":
    sys.exit(main())
