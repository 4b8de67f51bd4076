"""The newest exercises proven through the web app: submitted over its API, graded by its own grader, the stored
report at the verdict (and failing check) the exercise pins.

What the web adds to a grading (queueing, the events stream, storing the report) is the same for every solution of
an exercise, and tests/test_exercises.py already proves each pinned solution's verdict through the background judge,
which grades with the same `grade()`. So this file submits only each exercise's reference and one pinned wrong
solution (`WEB_WRONG`: one the grading's counts or drawn inputs decide, where the exercise has one), through one app
whose grader forks warm workers (`local`): ten gradings, not the 88 proofs of the five
exercises (references, second solutions, starters, wrong solutions).
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from judge.parent.exercise import load_exercise
from tests.web.real_course import real_course
from tests.web.test_api_submissions import read_events
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.slow

# The wrong solution each exercise sends through the web: its pinned verdict and check come from exercise.toml.
WEB_WRONG = {
    "recompile-budget": "wrong/statement_shapes.py",  # RECOMPILE, only on the requests drawn per grading
    "unbacked-sizes": "wrong/bound_to_statement.py",  # RUNTIME_ERROR, only on the sizes drawn per grading
    "regional-compile": "wrong/two_blocks.py",        # WRONG_ANSWER on the numbers
    "scan-cumulative": "wrong/pad_to_256.py",         # WRONG_ANSWER: its graph grows with the length
    "aot-compile-artifact": "wrong/compile_on_load.py",  # WRONG_ANSWER: Dynamo traces in the fresh process
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("web-proofs")
    settings = Settings(data_dir=tmp / "data", exercises_dir=real_course(tmp, *WEB_WRONG),
                        sandbox="local", allow_unsandboxed=True, workers=1, secret_key="web-proofs",
                        submissions_per_minute=100)
    with TestClient(create_app(settings)) as client:
        yield client, settings.exercises_dir


def _cases():
    for exercise_id, wrong in WEB_WRONG.items():
        yield pytest.param(exercise_id, "solutions/reference.py", id=f"{exercise_id}:reference")
        yield pytest.param(exercise_id, wrong, id=f"{exercise_id}:{wrong}")


@pytest.mark.parametrize("exercise_id, path", list(_cases()))
def test_a_submission_through_the_web_gets_its_pinned_verdict(client, exercise_id, path):
    client, course = client
    exercise = load_exercise(course / exercise_id)
    pinned = next((w for w in exercise.wrong if w.path == path), None)
    created = client.post(f"/api/exercises/{exercise_id}/submissions", json={"source": exercise.read(path)})
    assert created.status_code == 202, created.text
    report = read_events(client, created.json()["events_url"])[-1]["report"]
    failed = next((c["name"] for c in report["checks"] if not c["passed"]), None)
    if pinned is None:
        assert report["verdict"] == "ACCEPTED", (report["summary"], failed)
    else:
        assert (report["verdict"], failed) == (pinned.verdict.value, pinned.check), report["summary"]
    stored = client.get(created.json()["url"]).json()
    assert stored["status"] == "done" and stored["report"] == report
