"""POST /api/exercises/{id}/submissions, GET /api/submissions/{id}, its events, and the solution."""

from __future__ import annotations

import json
import threading

import pytest

from tests.web.conftest import CORRECT, WRONG, wait_done

URL = "/api/exercises/add-one/submissions"


def submit(client, source=CORRECT):
    return client.post(URL, json={"source": source})


def test_submit_is_202_then_done_with_the_report(client):
    response = submit(client, WRONG)
    assert response.status_code == 202
    created = response.json()
    assert created["status"] == "queued"
    assert created["url"] == f"/api/submissions/{created['id']}"
    body = wait_done(client, created["id"])
    assert body["verdict"] == "WRONG_ANSWER" and body["source"] == WRONG
    report = body["report"]
    assert report["schema_version"] == 2 and report["verdict"] == "WRONG_ANSWER"
    assert [c["passed"] for c in report["checks"]] == [False, False]
    assert "returned 1, expected 2" in report["checks"][0]["message"]
    assert body["finished_at"] >= body["created_at"]


def test_submission_is_stored_before_grading(client, grader):
    grader.gate.clear()
    created = submit(client).json()
    assert grader.started.wait(5)
    body = client.get(created["url"]).json()
    assert body["status"] == "running" and body["report"] is None
    grader.gate.set()
    assert wait_done(client, created["id"])["verdict"] == "ACCEPTED"


def read_events(client, url) -> list[dict]:
    events = []
    with client.stream("GET", url) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        kind = None
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                events.append({"event": kind, **json.loads(line[6:])})
    return events


def test_events_stream_queued_running_each_check_then_done(client, grader):
    grader.gate.clear()
    created = submit(client, WRONG).json()
    threading.Timer(0.3, grader.gate.set).start()
    events = read_events(client, created["events_url"])
    assert [e["event"] for e in events] == ["queued", "running", "check", "check", "done"]
    assert all(e["event"] == e["type"] for e in events)
    assert events[2]["check"]["name"] == "test_add_one_1"
    assert events[-1]["report"]["verdict"] == "WRONG_ANSWER"


def test_events_of_a_finished_submission_is_just_done(client):
    created = submit(client).json()
    wait_done(client, created["id"])
    events = read_events(client, created["events_url"])
    assert [(e["event"], e["report"]["verdict"]) for e in events] == [("done", "ACCEPTED")]


def test_solution_is_403_until_accepted(client):
    assert client.get("/api/exercises/add-one/solution").status_code == 403
    wait_done(client, submit(client, WRONG).json()["id"])
    assert client.get("/api/exercises/add-one/solution").status_code == 403
    wait_done(client, submit(client, CORRECT).json()["id"])
    solution = client.get("/api/exercises/add-one/solution")
    assert solution.status_code == 200
    assert solution.json() == {"exercise_id": "add-one", "source": "def add_one(x):\n    return x + 1\n"}
    client.cookies.clear()  # another learner
    assert client.get("/api/exercises/add-one/solution").status_code == 403


def test_history_is_newest_first_and_per_learner(client):
    first = submit(client, WRONG).json()["id"]
    wait_done(client, first)
    second = submit(client, CORRECT).json()["id"]
    wait_done(client, second)
    history = client.get(URL).json()
    assert [(h["id"], h["verdict"]) for h in history] == [(second, "ACCEPTED"), (first, "WRONG_ANSWER")]
    client.cookies.clear()
    assert client.get(URL).json() == []


@pytest.mark.parametrize("url", [
    "/api/submissions/0123456789abcdef0123456789abcdef",
    "/api/submissions/0123456789abcdef0123456789abcdef/events",
    "/api/exercises/nope/solution",
    "/api/exercises/nope/submissions",
])
def test_unknown_ids_are_404(client, url):
    response = client.get(url)
    assert response.status_code == 404 and "detail" in response.json()


def test_unknown_exercise_submission_is_404_and_stores_nothing(client):
    response = client.post("/api/exercises/nope/submissions", json={"source": CORRECT})
    assert response.status_code == 404
    assert client.app.state.store.count() == 0


def test_another_learners_submission_is_404(client):
    created = submit(client).json()
    wait_done(client, created["id"])
    client.cookies.clear()
    assert client.get(created["url"]).status_code == 404
    assert client.get(created["events_url"]).status_code == 404


def test_the_report_comes_in_both_languages_or_in_the_one_asked_for(client):
    created = submit(client, WRONG).json()
    both = wait_done(client, created["id"])["report"]["checks"][0]
    assert both["message"] == "add_one(1) returned 1, expected 2"
    assert both["translations"]["zh"]["message"] == "add_one(1) 返回了 1，应为 2"
    zh = client.get(created["url"], params={"lang": "zh"}).json()["report"]["checks"][0]
    en = client.get(created["url"], params={"lang": "en"}).json()["report"]["checks"][0]
    assert (zh["title"], zh["message"]) == ("add_one(1) 加一", "add_one(1) 返回了 1，应为 2")
    assert (en["title"], en["message"]) == ("add_one(1) adds one", "add_one(1) returned 1, expected 2")
    assert client.get(created["url"], params={"lang": "fr"}).status_code == 422
    with client.stream("GET", created["url"] + "/events", params={"lang": "zh"}) as stream:
        events = [json.loads(line[6:]) for line in stream.iter_lines() if line.startswith("data: ")]
    assert events[-1]["report"]["checks"][0]["message"] == "add_one(1) 返回了 1，应为 2"
