"""GET /api/exercises, /api/exercises/{id}, /healthz and the OpenAPI page."""

from __future__ import annotations

import pytest

from tests.web.conftest import CORRECT, WRONG, wait_done


def test_list_gives_title_difficulty_tags_and_state(client):
    body = client.get("/api/exercises").json()
    assert [e["id"] for e in body] == ["add-one"]
    assert body[0]["title"] == {"zh": "加一", "en": "Add one"}
    assert body[0]["difficulty"] == 1 and body[0]["tags"] == ["warm-up"]
    assert body[0]["state"] == "not_started"


@pytest.mark.parametrize("sources, state", [
    ([WRONG], "attempted"),
    ([WRONG, CORRECT], "solved"),
    ([CORRECT, WRONG], "solved"),
])
def test_state_follows_this_learners_verdicts(client, sources, state):
    for source in sources:
        wait_done(client, client.post("/api/exercises/add-one/submissions", json={"source": source}).json()["id"])
    assert client.get("/api/exercises").json()[0]["state"] == state
    assert client.get("/api/exercises/add-one").json()["state"] == state


def test_state_is_per_learner(client):
    wait_done(client, client.post("/api/exercises/add-one/submissions", json={"source": CORRECT}).json()["id"])
    client.cookies.clear()
    assert client.get("/api/exercises").json()[0]["state"] == "not_started"


def test_detail_has_statement_starter_hints_but_no_hidden_files(client):
    body = client.get("/api/exercises/add-one").json()
    assert body["statement"]["en"].startswith("# Add one")
    assert body["statement"]["zh"].startswith("# 加一")
    assert body["starter"] == "def add_one(x):\n    return x\n"
    assert [h["en"] for h in body["hints"]] == ["Return x + 1.", "It is `return x + 1`."]
    text = client.get("/api/exercises/add-one").text
    assert "return x + 1\\n" not in text  # the reference solution's source
    assert "test_negative" not in text and "from submission import" not in text  # hidden tests
    assert not {"reference", "tests", "wrong", "solutions", "root"} & body.keys()


def test_unknown_exercise_is_404_json(client):
    response = client.get("/api/exercises/no-such-thing")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert "no-such-thing" in response.json()["detail"]


def test_healthz(client):
    health = client.get("/healthz").json()
    assert {k: health[k] for k in ("status", "exercises", "sandbox", "queue", "queue_depth", "queues")} == {
        "status": "ok", "exercises": 1, "sandbox": "none", "queue": "embedded", "queue_depth": 0,
        "queues": {"embedded": 0}}
    (grader,) = health["workers"]
    assert (grader["name"], grader["concurrency"], grader["queues"]) == ("embedded", 1, ["cpu", "gpu"])


def test_openapi_documents_every_route(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/healthz", "/api/exercises", "/api/exercises/{exercise_id}", "/api/exercises/{exercise_id}/submissions",
            "/api/exercises/{exercise_id}/solution", "/api/submissions/{submission_id}",
            "/api/submissions/{submission_id}/events"} <= paths.keys()
    post = paths["/api/exercises/{exercise_id}/submissions"]["post"]
    assert "source" in post["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert {"202", "413", "422", "429"} <= post["responses"].keys()
