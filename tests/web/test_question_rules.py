"""A class's rule per exercise: "solved" needs the questions about the accepted file, or accepted is enough. The class
table shows attempts, the time to the first accepted file and the questions answered; the CSV and the LMS score
follow the rule. Only the class's instructors set it. SQLite and PostgreSQL, the fake grader of conftest.py, on a
copy of the fixture course whose add-one asks questions.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from fastapi.testclient import TestClient

from tests.web.classroom import browser, new_class, sign_in
from tests.web.conftest import CORRECT, WRONG, wait_done
from tests.web.test_questions import QUESTIONS
from web.app import create_app
from web.lti.grades import QUESTIONS_OPEN, best_score

SUBMIT = "/api/exercises/add-one/submissions"


@pytest.fixture
def client(settings, course, grader):
    toml = course / "add-one" / "exercise.toml"
    toml.write_text(toml.read_text() + '\n[questions]\nkinds = ["kernels", "node_line"]\n')
    settings.exercises_dir = course
    with TestClient(create_app(settings, grade=grader), base_url="http://testserver") as c:
        yield c


def cell(html: str) -> dict:
    """Ann's add-one cell as the class table shows it."""
    found = re.search(r'<td class="cell [^"]*" data-exercise="add-one"\s+data-solved="(\w+)" data-attempts="(\d+)"'
                      r'(.*?)</td>', html, re.S)
    body = found.group(3)
    seconds = re.search(r'data-seconds="(\d+)"', body)
    questions = re.search(r'data-answered="(\d+)" data-asked="(\d+)" data-needed="(\w+)"', body)
    return {"solved": found.group(1), "attempts": int(found.group(2)),
            "seconds": int(seconds.group(1)) if seconds else None,
            "questions": questions.groups() if questions else None}


def csv_row(teacher, class_path: str) -> dict:
    [row] = csv.DictReader(io.StringIO(teacher.get(class_path + "/progress.csv").content.decode("utf-8-sig")))
    return row


def test_the_rule_holds_solved_and_the_score_until_every_question_is_answered(client, teacher):
    class_path, join = new_class(teacher)
    ann = browser(client)
    ann.post(join, data={"display_name": "Ann"})
    wait_done(ann, ann.post(SUBMIT, json={"source": WRONG}).json()["id"])
    accepted = wait_done(ann, ann.post(SUBMIT, json={"source": CORRECT}).json()["id"])
    learner_id = client.app.state.store.get(accepted["id"]).learner_id
    engine = client.app.state.store.engine
    sent = []
    client.app.state.score_sender = lambda who, exercise: sent.append((who, exercise))

    first = cell(teacher.get(class_path).text)
    assert (first["solved"], first["attempts"], first["questions"]) == ("yes", 2, None)
    assert first["seconds"] is not None and first["seconds"] >= 0
    assert best_score(engine, learner_id, "add-one") == (1.0, "ACCEPTED")

    asked = client.app.state.questions.save(accepted["id"], QUESTIONS)
    assert cell(teacher.get(class_path).text)["questions"] == ("0", "2", "no")
    assert 'id="questions-required"' not in ann.get("/exercises/add-one").text
    set_rule = teacher.post(class_path + "/question-rules", data={"exercise": "add-one", "require": "yes"})
    assert set_rule.status_code == 303
    assert "once you have answered these questions" in ann.get("/exercises/add-one?lang=en").text
    held = cell(teacher.get(class_path).text)
    assert (held["solved"], held["questions"]) == ("no", ("0", "2", "yes"))
    row = csv_row(teacher, class_path)
    assert (row["solved"], row["questions answered"], row["questions asked"], row["solved needs the questions"]) == (
        "no", "0", "2", "yes")
    assert best_score(engine, learner_id, "add-one") == (0.0, QUESTIONS_OPEN)

    kernels, line = (a.id for a in asked)
    assert ann.post(f"/api/questions/{kernels}/answer", json={"answer": "3"}).json()["correct"] is False
    assert ann.post(f"/api/questions/{kernels}/answer", json={"answer": "2"}).json()["correct"] is True
    assert cell(teacher.get(class_path).text)["solved"] == "no"  # one of two
    assert best_score(engine, learner_id, "add-one") == (0.0, QUESTIONS_OPEN)
    assert ann.post(f"/api/questions/{line}/answer", json={"answer": "6"}).json()["correct"] is True
    done = cell(teacher.get(class_path).text)
    assert (done["solved"], done["questions"]) == ("yes", ("2", "2", "yes"))
    assert csv_row(teacher, class_path)["solved"] == "yes"
    assert best_score(engine, learner_id, "add-one") == (1.0, "ACCEPTED")
    assert sent[-1] == (learner_id, "add-one")  # the LMS is told when a right answer may change the score

    assert teacher.post(class_path + "/question-rules", data={"exercise": "add-one", "require": "no"}).status_code \
        == 303
    assert 'data-needed="no"' in teacher.get(class_path).text


def test_only_the_classs_instructors_set_the_rule(client, teacher):
    class_path, join = new_class(teacher)
    other = browser(client)
    assert sign_in(other, "other").status_code == 303
    ann = browser(client)
    ann.post(join, data={"display_name": "Ann"})
    for who in (other, ann, browser(client)):
        refused = who.post(class_path + "/question-rules", data={"exercise": "add-one", "require": "yes"})
        assert refused.status_code == 403
    assert client.app.state.questions.rules(class_path.rsplit("/", 1)[1]) == set()
    unknown = teacher.post(class_path + "/question-rules?lang=en", data={"exercise": "nope", "require": "yes"})
    assert unknown.status_code == 400 and "Choose an exercise that asks questions." in unknown.text


def test_a_rule_of_another_class_does_not_hold_back_a_learner_outside_it(client, teacher):
    class_path, _ = new_class(teacher)
    teacher.post(class_path + "/question-rules", data={"exercise": "add-one", "require": "yes"})
    loner = browser(client)
    done = wait_done(loner, loner.post(SUBMIT, json={"source": CORRECT}).json()["id"])
    learner_id = client.app.state.store.get(done["id"]).learner_id
    assert best_score(client.app.state.store.engine, learner_id, "add-one") == (1.0, "ACCEPTED")
