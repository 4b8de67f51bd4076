"""docs/deploy.md's set-ups, run as written: the embedded default (`scripts/serve.sh`: SQLite, graders in the
web process, nothing else running) and one machine with a separate `practice worker` (deploy/one-machine.Procfile),
each grading for real with the fake course."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import FAKE_COURSE
from tests.web.live import free_port
from tests.web.procs import ROOT, Proc, argv, healthz, procfile, wait_for

pytestmark = pytest.mark.slow
REFERENCE = (FAKE_COURSE / "add-one" / "solutions" / "reference.py").read_text()
WRONG = (FAKE_COURSE / "add-one" / "wrong" / "add_two.py").read_text()


def submit_and_wait(base: str, source: str, procs: list[Proc]) -> dict:
    with httpx.Client(base_url=base, timeout=10) as client:
        created = client.post("/api/exercises/add-one/submissions", json={"source": source})
        assert created.status_code == 202, created.text
        url = created.json()["url"]
        return wait_for(lambda: (b := client.get(url).json())["status"] == "done" and b, 240, "graded", procs)


def test_the_embedded_default_serves_and_grades_with_sqlite_and_nothing_else(tmp_path, monkeypatch):
    port = free_port()
    env = {"PRACTICE_EXERCISES_DIR": str(FAKE_COURSE), "PRACTICE_SANDBOX": "none", "PRACTICE_ALLOW_UNSANDBOXED": "1",
           "PRACTICE_WORKERS": "1"}
    for name in ("PRACTICE_DATABASE_URL", "PRACTICE_QUEUE"):  # the default: no database server at all
        monkeypatch.delenv(name, raising=False)
    serve = Proc("serve", ["bash", str(ROOT / "scripts" / "serve.sh"), "--port", str(port), "--data-dir",
                           str(tmp_path / "data")], env, tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        health = wait_for(lambda: healthz(base), 300, "serve.sh up", [serve])
        assert (health["queue"], health["workers"][0]["name"]) == ("embedded", "embedded")
        assert submit_and_wait(base, REFERENCE, [serve])["verdict"] == "ACCEPTED"
        assert (tmp_path / "data" / "practice.db").stat().st_size > 0
        assert "database: sqlite:///" in serve.output()
    finally:
        serve.stop()


@pytest.mark.postgres
def test_one_machine_with_a_separate_worker(postgres, tmp_path):
    url = postgres.create()
    env = {"DATABASE_URL": url, "PORT": str(free_port()), "PRACTICE_SECRET_KEY": "deploy-secret",
           "PRACTICE_EXERCISES_DIR": str(FAKE_COURSE), "PRACTICE_SANDBOX": "none", "PRACTICE_ALLOW_UNSANDBOXED": "1",
           "PRACTICE_WORKERS": "1", "PRACTICE_DATA_DIR": str(tmp_path / "data")}
    procs = [Proc(name, argv(line, env), env, tmp_path) for name, line in procfile("one-machine.Procfile").items()]
    web, worker = procs
    base = f"http://127.0.0.1:{env['PORT']}"
    try:
        wait_for(lambda: (h := healthz(base)) and h["workers"], 120, "the worker seen by the web", procs)
        assert "queues cpu, concurrency 1, sandbox none, database postgresql+psycopg://postgres@" in worker.output()
        assert "grading: `practice worker` processes through the Procrastinate queue" in web.output()
        graded = submit_and_wait(base, REFERENCE, procs)
        assert graded["verdict"] == "ACCEPTED"
        assert submit_and_wait(base, WRONG, procs)["verdict"] == "WRONG_ANSWER"
        assert healthz(base)["workers"][0]["sandbox"] == "none"
    finally:
        for proc in procs:
            proc.stop()
