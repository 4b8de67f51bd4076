"""Questions about an accepted submission over HTTP: the measured answer stays on the server until found, each
distinct answer counts once, a solved question stays solved, and no other learner reads or answers them.

The questions here are stored as judge/parent/questions.py makes them (what is under test is the web's part: storage,
checking, who may do what); tests/core/test_questions.py makes them by compiling real files. SQLite and PostgreSQL.
"""

from __future__ import annotations

import json

import pytest

from judge.parent.questions import Choice, Question
from tests.web.classroom import browser
from tests.web.conftest import CORRECT, WRONG, wait_done

SUBMIT = "/api/exercises/add-one/submissions"
QUESTIONS = [
    Question(kind="kernels", prompt={"en": "How many kernels?", "zh": "几个内核？"}, answer="2",
             explanation={"en": "Inductor generated: k0, k1.", "zh": "Inductor 生成的内核：k0, k1。"}),
    Question(kind="node_line", prompt={"en": "Which line?", "zh": "哪一行？"}, answer="6",
             choices=[Choice(value=str(n), label={"en": f"line {n}", "zh": f"第 {n} 行"}) for n in (5, 6, 7)],
             explanation={"en": "Line 6.", "zh": "第 6 行。"}),
]


def submit(b, source: str) -> dict:
    return wait_done(b, b.post(SUBMIT, json={"source": source}).json()["id"])


@pytest.fixture
def asked(client):
    """Alice's accepted submission with its questions stored: (alice's browser, submission id, question ids)."""
    alice = browser(client)
    done = submit(alice, CORRECT)
    stored = client.app.state.questions.save(done["id"], QUESTIONS)
    return alice, done["id"], [q.id for q in stored]


def answer(b, question_id: str, value) -> dict:
    response = b.post(f"/api/questions/{question_id}/answer?lang=en", json={"answer": value})
    assert response.status_code == 200, response.text
    return response.json()


def test_the_answer_is_never_sent_before_it_is_found(asked):
    alice, submission_id, _ = asked
    listed = alice.get(f"/api/submissions/{submission_id}/questions?lang=zh").json()
    assert listed["status"] == "ready" and [q["prompt"] for q in listed["questions"]] == ["几个内核？", "哪一行？"]
    assert all("answer" not in q and "explanation" not in q for q in listed["questions"])
    assert "Inductor generated" not in json.dumps(listed) and '"2"' not in json.dumps(listed)


def test_wrong_then_right_each_distinct_answer_counted_once(asked):
    alice, submission_id, (kernels, line) = asked
    assert answer(alice, kernels, "3")["question"]["wrong"] == 1
    again = answer(alice, kernels, " 3")  # the same answer sent twice counts once
    assert again["correct"] is False and again["question"]["wrong"] == 1
    assert answer(alice, kernels, 4)["question"]["wrong"] == 2
    right = answer(alice, kernels, "2")
    assert right["correct"] is True and right["question"]["solved"] is True
    assert right["question"]["answer"] == "2" and right["question"]["explanation"] == "Inductor generated: k0, k1."
    after = answer(alice, kernels, "5")  # a solved question stays solved, and counts no more wrong answers
    assert after["correct"] is False and after["question"]["solved"] is True and after["question"]["wrong"] == 2
    assert answer(alice, line, "6")["question"] == {**answer(alice, line, "6")["question"]}
    listed = alice.get(f"/api/submissions/{submission_id}/questions?lang=en").json()["questions"]
    assert [(q["solved"], q["wrong"]) for q in listed] == [(True, 2), (True, 0)]
    progress = alice.app.state.questions.progress()
    assert [(p.solved, p.total) for p in progress.values()] == [(2, 2)]


@pytest.mark.parametrize("value", ["4", "line 6", "", "6.0", True, ["6"], None, {"a": 1}])
def test_an_answer_not_among_the_choices_is_refused_and_not_counted(asked, value):
    alice, _, (_, line) = asked
    refused = alice.post(f"/api/questions/{line}/answer", json={"answer": value})
    assert refused.status_code == 422
    assert answer(alice, line, "5")["question"]["wrong"] == 1  # the refused one did not count


@pytest.mark.parametrize("value", ["-1", "1e3", "0x2", "٢", "99999999999", "2 2"])
def test_a_number_answer_is_a_plain_whole_number(asked, value):
    alice, _, (kernels, _) = asked
    assert alice.post(f"/api/questions/{kernels}/answer", json={"answer": value}).status_code == 422


def test_another_learner_can_neither_read_nor_answer_nor_make_them(client, asked):
    alice, submission_id, (kernels, _) = asked
    mallory = browser(client)
    submit(mallory, CORRECT)
    assert mallory.get(f"/api/submissions/{submission_id}/questions").status_code == 404
    assert mallory.post(f"/api/submissions/{submission_id}/questions").status_code == 404
    assert mallory.post(f"/api/questions/{kernels}/answer", json={"answer": "2"}).status_code == 404
    assert browser(client).post(f"/api/questions/{kernels}/answer", json={"answer": "2"}).status_code == 404
    assert alice.get(f"/api/submissions/{submission_id}/questions").json()["questions"][0]["solved"] is False
    token = client.app.state.tokens.issue(client.app.state.store.get(submission_id).learner_id, "laptop")
    with_token = browser(client).post(f"/api/questions/{kernels}/answer", json={"answer": "2"},
                                      headers={"Authorization": f"Bearer {token}"})
    assert with_token.status_code == 403  # a token submits and reads submissions; it answers nothing


def test_questions_are_made_for_an_accepted_submission_of_an_exercise_that_has_them(client):
    alice = browser(client)
    wrong = submit(alice, WRONG)
    accepted = submit(alice, CORRECT)
    for done in (wrong, accepted):  # the fixture course's add-one has no [questions]
        assert alice.post(f"/api/submissions/{done['id']}/questions").status_code == 409
    assert alice.get(f"/api/submissions/{accepted['id']}/questions").json() == {"status": "none", "questions": []}


def test_a_second_set_never_replaces_the_first(client, asked):
    _, submission_id, ids = asked
    again = client.app.state.questions.save(submission_id, QUESTIONS[:1])
    assert [q.id for q in again] == ids
