"""A server stopped mid-grading re-queues what it had not finished when it starts again."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient

from tests.web.conftest import CORRECT, WRONG, FakeGrader, wait_done
from web.app import create_app

URL = "/api/exercises/add-one/submissions"


def test_restart_grades_what_was_running_and_queued(settings):
    first_grader = FakeGrader()
    first_grader.gate.clear()
    with TestClient(create_app(settings, grade=first_grader)) as client:
        running = client.post(URL, json={"source": CORRECT}).json()["id"]
        assert first_grader.started.wait(5)
        learner_a = dict(client.cookies)
        client.cookies.clear()
        queued = client.post(URL, json={"source": WRONG}).json()["id"]
        learner_b = dict(client.cookies)
        assert client.get(f"/api/submissions/{queued}").json()["status"] == "queued"
        # Stop while the first is mid-grading: the worker finishes its call but must not store it.
        threading.Timer(0.3, first_grader.gate.set).start()
    assert first_grader.graded == [running]

    second_grader = FakeGrader()
    with TestClient(create_app(settings, grade=second_grader)) as client:
        client.cookies.update(learner_a)
        assert wait_done(client, running)["verdict"] == "ACCEPTED"
        client.cookies.clear()
        client.cookies.update(learner_b)
        assert wait_done(client, queued)["verdict"] == "WRONG_ANSWER"
    assert second_grader.graded == [running, queued]  # oldest first


def test_a_finished_submission_is_not_graded_again(settings):
    grader = FakeGrader()
    with TestClient(create_app(settings, grade=grader)) as client:
        wait_done(client, client.post(URL, json={"source": CORRECT}).json()["id"])
        learner = dict(client.cookies)
    again = FakeGrader()
    with TestClient(create_app(settings, grade=again), cookies=learner) as client:
        assert client.get("/api/exercises").json()[0]["state"] == "solved"
    assert again.graded == []


def test_any_sqlalchemy_url_is_accepted(settings, tmp_path):
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    settings = settings.model_copy(update={"database_url": url})
    with TestClient(create_app(settings, grade=FakeGrader())) as client:
        wait_done(client, client.post(URL, json={"source": CORRECT}).json()["id"])
    assert (tmp_path / "elsewhere.db").stat().st_size > 0
    assert not (settings.data_dir / "practice.db").exists()
