"""Grading throughput through PostgreSQL and Procrastinate on one machine: 1, 2 and 3 workers, then the wait
of a burst of 100 submissions.

    python benchmarks/throughput.py [--database-url URL] [--submissions 30] [--grading-seconds 0.2]

Without --database-url a throwaway PostgreSQL is started (scripts/postgres.sh; run as root or postgres).
One `practice serve` takes the submissions over HTTP; workers are `tests.web.cluster_worker` (the real worker
with a fake grader that takes --grading-seconds), so the figures measure the queue, the database, the live
events and the HTTP path, not torch: a real grading adds its own seconds per submission and per core.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web.conftest import CORRECT, FIXTURE_COURSE, WRONG  # noqa: E402
from tests.web.live import free_port  # noqa: E402
from tests.web.procs import Proc, healthz, wait_for  # noqa: E402


def post_all(base: str, count: int, parallel: int = 16) -> list[str]:
    """`count` submissions, each from a new learner, `parallel` at a time."""
    from concurrent.futures import ThreadPoolExecutor

    def post(i: int) -> str:
        with httpx.Client(base_url=base, timeout=60) as client:
            response = client.post("/api/exercises/add-one/submissions", json={"source": (CORRECT, WRONG)[i % 2]})
            response.raise_for_status()
            return response.json()["id"]

    with ThreadPoolExecutor(parallel) as pool:
        return list(pool.map(post, range(count)))


def grading_span(engine, ids: list[str]) -> float:
    """Seconds from the first grading's start to the last verdict."""
    with engine.connect() as conn:
        return float(conn.scalar(text("""
            SELECT EXTRACT(EPOCH FROM (max(s.finished_at) - min(e.created_at)))
              FROM submissions s JOIN submission_events e ON e.submission_id = s.id
             WHERE s.id = ANY(:ids) AND e.event_json LIKE '{"type":"running"%'"""), {"ids": ids}))


def wait_done(engine, ids: list[str], procs) -> None:
    def all_done():
        with engine.connect() as conn:
            return conn.scalar(text("SELECT count(*) FROM submissions WHERE status = 'done' AND id = ANY(:ids)"),
                               {"ids": ids}) == len(ids)
    wait_for(all_done, 600, "every submission graded", procs)


def start_workers(count: int, url: str, env: dict, logs: Path, grading_seconds: float, base: str, procs: list):
    workers = [Proc(f"w{count}-{i}", [sys.executable, "-m", "tests.web.cluster_worker", "--database-url", url,
                                      "--name", f"w{count}-{i}", "--grading-seconds", str(grading_seconds)],
                    env, logs) for i in range(count)]
    wait_for(lambda: sum(w["name"].startswith(f"w{count}-") for w in healthz(base)["workers"]) == count, 120,
             f"{count} workers", procs + workers)
    return workers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url")
    parser.add_argument("--submissions", type=int, default=30, help="per worker count (default 30)")
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--grading-seconds", type=float, default=0.2)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="practice-bench-"))
    tmp.chmod(0o755)
    url = args.database_url or subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "start",
                                               str(tmp / "pg")], check=True, capture_output=True,
                                              text=True).stdout.strip()
    env = {"PRACTICE_SECRET_KEY": "bench", "PRACTICE_EXERCISES_DIR": str(FIXTURE_COURSE),
           "PRACTICE_SUBMISSIONS_PER_MINUTE": "100000",
           "PRACTICE_SUBMISSIONS_PER_MINUTE_PER_ADDRESS": "100000", "PRACTICE_MAX_QUEUED_SUBMISSIONS": "100000",
           "PRACTICE_HEARTBEAT_SECONDS": "1",
           "PRACTICE_DATA_DIR": str(tmp / "data")}
    port = free_port()
    web = Proc("web", [sys.executable, "-m", "cli.main", "serve", "--database-url", url, "--port", str(port)],
               env, tmp)
    base, procs = f"http://127.0.0.1:{port}", [web]
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        wait_for(lambda: healthz(base), 120, "web up", procs)
        print(f"one machine ({Path('/proc/cpuinfo').read_text().count('processor')} cores), fake grading of "
              f"{args.grading_seconds:g} s, {args.submissions} submissions per run, PostgreSQL + Procrastinate")
        rates, workers = {}, []
        for count in (1, 2, 3):
            for worker in workers:
                worker.stop()
            ids = post_all(base, args.submissions)  # queued while no worker runs, so none waits for HTTP
            workers = start_workers(count, url, env, tmp, args.grading_seconds, base, procs)
            wait_done(engine, ids, procs + workers)
            rates[count] = args.submissions / grading_span(engine, ids)
            print(f"{count} worker(s): {rates[count]:.2f} submissions/s  ({rates[count] / rates[1]:.2f}x of 1 worker;"
                  f" ideal {count / args.grading_seconds:.1f}/s)")
        procs += workers
        ids = post_all(base, args.burst)
        wait_done(engine, ids, procs)
        with engine.connect() as conn:
            rows = conn.execute(text("""
                SELECT EXTRACT(EPOCH FROM (min(e.created_at) - s.created_at)),
                       EXTRACT(EPOCH FROM (s.finished_at - s.created_at))
                  FROM submissions s JOIN submission_events e ON e.submission_id = s.id
                 WHERE s.id = ANY(:ids) AND e.event_json LIKE '{"type":"running"%'
                 GROUP BY s.id"""), {"ids": ids}).all()
        waits, totals = sorted(float(r[0]) for r in rows), sorted(float(r[1]) for r in rows)
        p95 = lambda xs: xs[min(len(xs) - 1, round(0.95 * len(xs)) - 1)]  # noqa: E731
        print(f"burst of {args.burst} (16 at a time) with 3 workers: "
              f"wait before grading median {statistics.median(waits):.2f} s, "
              f"p95 {p95(waits):.2f} s; submission to verdict median {statistics.median(totals):.2f} s, "
              f"p95 {p95(totals):.2f} s")
    finally:
        for proc in procs:
            proc.stop()
        engine.dispose()
        if not args.database_url:
            subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "stop", str(tmp / "pg")], check=False)


if __name__ == "__main__":
    main()
