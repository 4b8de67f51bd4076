"""A class on several processes: 2 web processes and 3 workers on one PostgreSQL, started from the Procfiles
of deploy/ (docs/deploy.md), 60 submissions of mixed verdicts, a worker and a web process killed with
SIGKILL in the middle. Every submission must end with its right verdict, stored once, and the live events
must reach the page from every worker, through either web process.

The workers are `tests.web.cluster_worker`: the real `practice worker` with a fake grader (no torch child
per submission, so that five processes fit on two cores); test_deploy.py runs `practice worker` itself.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter

import httpx
import pytest
from sqlalchemy import create_engine, text

from tests.web.conftest import CORRECT, FIXTURE_COURSE, WRONG
from tests.web.live import free_port
from tests.web.procs import Proc, argv, healthz, procfile, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
RAISES = "def add_one(x):\n    raise ValueError('not yet')\n"
CASES = [(CORRECT, "ACCEPTED"), (WRONG, "WRONG_ANSWER"), (RAISES, "RUNTIME_ERROR")]
N = 60


class Follower(threading.Thread):
    """A learner's page: follows one submission's event stream, reconnecting to the other web process
    when one dies (as EventSource does)."""

    def __init__(self, submission_id: str, cookies: dict, bases: list[str]):
        super().__init__(daemon=True)
        self.submission_id, self.cookies, self.bases = submission_id, cookies, bases
        self.events: list[tuple[str, dict]] = []

    def run(self) -> None:
        deadline = time.monotonic() + 90
        attempt = 0
        while time.monotonic() < deadline:
            base = self.bases[attempt % len(self.bases)]
            attempt += 1
            try:
                with httpx.stream("GET", f"{base}/api/submissions/{self.submission_id}/events",
                                  cookies=self.cookies, timeout=httpx.Timeout(5, read=30)) as response:
                    kind = None
                    for line in response.iter_lines():
                        if line.startswith("event: "):
                            kind = line[7:]
                        elif line.startswith("data: "):
                            self.events.append((kind, json.loads(line[6:])))
                            if kind == "done":
                                return
            except httpx.HTTPError:
                time.sleep(0.2)  # the web process died: try the other one

    def kinds(self) -> Counter:
        return Counter(kind for kind, _ in self.events)

    def verdict(self) -> str | None:
        return next((data["report"]["verdict"] for kind, data in self.events if kind == "done"), None)


def test_two_webs_three_workers_sixty_submissions_and_two_kills(postgres, tmp_path):
    import subprocess
    import sys

    url = postgres.create(migrated=False)
    upgraded = subprocess.run([sys.executable, "-m", "cli.main", "db", "upgrade", "--database-url", url],
                              capture_output=True, text=True, cwd=tmp_path.parent, timeout=120)
    assert upgraded.returncode == 0 and "migrated from revision none to" in upgraded.stdout, upgraded.stderr
    common = {"DATABASE_URL": url, "HOST": "127.0.0.1", "PRACTICE_SECRET_KEY": "cluster-secret",
              "PRACTICE_EXERCISES_DIR": str(FIXTURE_COURSE), "PRACTICE_SUBMISSIONS_PER_MINUTE": "1000",
              "PRACTICE_SUBMISSIONS_PER_MINUTE_PER_ADDRESS": "1000",
              "PRACTICE_HEARTBEAT_SECONDS": "0.5", "PRACTICE_STALLED_AFTER_SECONDS": "2",
              "WORKER_CONCURRENCY": "1"}
    web_line, worker_line = procfile("web.Procfile")["web"], procfile("worker.Procfile")["worker"]
    procs: list[Proc] = []
    try:
        webs = []
        for i in (1, 2):
            env = {**common, "PORT": str(free_port()), "PRACTICE_DATA_DIR": str(tmp_path / f"web{i}")}
            webs.append(Proc(f"web{i}", argv(web_line, env), env, tmp_path))
            webs[-1].base = f"http://127.0.0.1:{env['PORT']}"
        workers = []
        for i in (1, 2, 3):
            words = argv(worker_line, common)
            assert words[3] == "worker"  # python -m cli.main worker ...: the same options, a fake grader
            words = [sys.executable, "-m", "tests.web.cluster_worker", *words[4:], "--name", f"w{i}",
                     "--grading-seconds", "0.5"]
            workers.append(Proc(f"w{i}", words, common, tmp_path))
        procs = webs + workers
        for web in webs:
            wait_for(lambda: healthz(web.base), 60, f"{web.name} up", procs)  # noqa: B023 - awaited here
        wait_for(lambda: len(healthz(webs[0].base)["workers"]) == 3, 60, "3 workers seen", procs)
        assert all(w.name in w.output() and "queues cpu" in w.output() for w in workers)  # says what it serves

        engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
        submissions, followers = [], []
        killer = WorkerKiller(engine, workers[1])
        killer.start()
        for i in range(N):
            alive = [w for w in webs if w.popen.poll() is None]
            post_to = alive[i % len(alive)]
            source, expected = CASES[i % len(CASES)]
            with httpx.Client(base_url=post_to.base, timeout=10) as client:
                response = client.post("/api/exercises/add-one/submissions", json={"source": source})
                assert response.status_code == 202, response.text
                cookies = dict(client.cookies)
            sid = response.json()["id"]
            submissions.append((sid, expected))
            others = [w.base for w in alive if w is not post_to] + [post_to.base]  # listen on the other one
            followers.append(Follower(sid, cookies, others))
            followers[-1].start()
            if i == N // 2:
                webs[0].kill9()  # with streams open on it
        killer.join(60)
        assert killer.killed is not None, f"{workers[1].name} was never seen grading"
        killed_running = killer.killed
        for follower in followers:
            follower.join(120)

        def open_jobs() -> int:  # a job is marked finished just after its report is stored and streamed
            with engine.connect() as conn:
                return conn.scalar(text("SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo','doing')"))

        wait_for(lambda: open_jobs() == 0, 60, "every job finished", [w for w in workers if w is not workers[1]])
        with engine.connect() as conn:
            rows = {r.id: r for r in conn.execute(text("SELECT id, status, verdict, attempts, graded_by "
                                                       "FROM submissions"))}
            dones = Counter(r[0] for r in conn.execute(text(
                "SELECT submission_id FROM submission_events WHERE event_json LIKE '{\"type\":\"done\"%'")))
        engine.dispose()
        assert len(rows) == N
        for sid, expected in submissions:
            assert (rows[sid].status, rows[sid].verdict) == ("done", expected), sid
            assert dones[sid] == 1, f"{sid}: {dones[sid]} stored results"
        assert rows[killed_running].attempts >= 2 and rows[killed_running].graded_by in ("w1", "w3")
        for follower, (sid, expected) in zip(followers, submissions):
            assert follower.verdict() == expected, (sid, follower.events)
        graders_streamed = {rows[f.submission_id].graded_by for f in followers
                            if f.kinds()["check"] >= 2 and f.kinds()["done"] == 1}
        assert graders_streamed == {"w1", "w2", "w3"}
        health = healthz(webs[1].base)
        assert health["queue_depth"] == 0 and {"w1", "w3"} <= {w["name"] for w in health["workers"]}
    finally:
        for proc in procs:
            proc.stop()


class WorkerKiller(threading.Thread):
    """SIGKILLs `worker` once it has finished a submission and is grading another (`killed`: that one)."""

    def __init__(self, engine, worker: Proc):
        super().__init__(daemon=True)
        self.engine, self.worker, self.killed = engine, worker, None

    def run(self) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with self.engine.connect() as conn:
                finished = conn.scalar(text("SELECT count(*) FROM submissions WHERE graded_by = :w "
                                            "AND status = 'done'"), {"w": self.worker.name})
                running = conn.scalar(text("SELECT id FROM submissions WHERE graded_by = :w "
                                           "AND status = 'running'"), {"w": self.worker.name})
            if finished and running:
                self.worker.kill9()
                self.killed = running
                return
            time.sleep(0.05)
