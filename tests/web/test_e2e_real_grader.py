"""Through the real grader: the book's exercise, submitted over HTTP, streamed, stored."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.web.real_course import BOOK_EXERCISE, book_course, item_line
from tests.web.test_api_submissions import read_events
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.slow


def test_original_step_gets_graph_break_on_the_item_line(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", exercises_dir=book_course(tmp_path), sandbox="none",
                        allow_unsandboxed=True, workers=1, secret_key="e2e")
    with TestClient(create_app(settings)) as client:
        starter = client.get(f"/api/exercises/{BOOK_EXERCISE}").json()["starter"]
        created = client.post(f"/api/exercises/{BOOK_EXERCISE}/submissions", json={"source": starter})
        assert created.status_code == 202
        events = read_events(client, created.json()["events_url"])
        kinds = [e["event"] for e in events]
        assert kinds[0] == "queued" and "running" in kinds and kinds[-1] == "done"
        checks = [e["check"] for e in events if e["event"] == "check"]
        total = next(e["total_checks"] for e in events if e["event"] == "running" and e["total_checks"])
        assert len(checks) == total
        report = events[-1]["report"]
        assert report["verdict"] == "GRAPH_BREAK"
        breaks = [d for c in report["checks"] for d in c["diagnostics"] if d["kind"] == "graph_break"]
        assert breaks and breaks[0]["location"]["line"] == item_line(starter)
        assert breaks[0]["reason"]
        stored = client.get(created.json()["url"]).json()
        assert stored["status"] == "done" and stored["report"] == report
        assert client.get(f"/api/exercises/{BOOK_EXERCISE}/solution").status_code == 403
        assert client.get("/api/exercises").json()[0]["state"] == "attempted"


@pytest.mark.sandbox
@pytest.mark.xdist_group("sandbox")  # one bwrap pool at a time: uids and cgroups are per machine
def test_default_sandbox_is_bwrap_and_accepts_the_reference(tmp_path, monkeypatch):
    from sandbox.backends import unavailable_reason as unavailable
    from sandbox.settings import SandboxSettings

    # This app's pool must not share uids (and so slot cgroups) with another pool alive in this process.
    monkeypatch.setenv("PRACTICE_UID_BASE", str(SandboxSettings().uid_base + 512))  # past 4 pools x 64 slots
    monkeypatch.setenv("PRACTICE_POOL_SIZE", "1")  # it grades once: a second warm worker per pool would only cost

    reason = unavailable("bwrap")
    if reason:
        pytest.skip(reason)
    settings = Settings(data_dir=tmp_path / "data", exercises_dir=book_course(tmp_path), workers=1, secret_key="bw")
    app = create_app(settings)
    assert app.state.sandbox_name == "bwrap"
    reference = (settings.exercises_dir / BOOK_EXERCISE / "solutions" / "reference.py").read_text()
    with TestClient(app) as client:
        created = client.post(f"/api/exercises/{BOOK_EXERCISE}/submissions", json={"source": reference}).json()
        report = read_events(client, created["events_url"])[-1]["report"]
        assert report["verdict"] == "ACCEPTED", (report["summary"], report["diagnostics"])
        assert report["sandbox"].startswith("bwrap")
        assert client.get(f"/api/exercises/{BOOK_EXERCISE}/solution").status_code == 200
