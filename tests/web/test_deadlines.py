"""Deadlines: per class and exercise, with one learner's extension; on time / late in the table, CSV and the
learner's page; late submissions graded unless the instructor chose to refuse them. SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timedelta, timezone
from html import unescape

import pytest

from tests.web.classroom import browser, new_class, submit
from tests.web.conftest import CORRECT

SUBMIT = "/api/exercises/add-one/submissions"


def at(delta: timedelta) -> str:
    """A due time as the page's datetime-local field sends it (UTC, minutes)."""
    return (datetime.now(timezone.utc) + delta).strftime("%Y-%m-%dT%H:%M")


def joined(client, join_path: str, name: str):
    learner = browser(client)
    assert learner.post(join_path, data={"display_name": name}).status_code == 303
    return learner


def timings(html: str) -> dict[str, str]:
    return {unescape(name): timing for name, timing in re.findall(
        r'<tr data-learner="([^"]*)">.*?data-exercise="add-one".*?data-timing="(\w*)"', html, re.S)}


def learner_id(client, class_path: str, name: str) -> str:
    members = client.app.state.classes.members(class_path.rsplit("/", 1)[1])
    return next(m.learner_id for m in members if m.display_name == name)


def test_solved_after_the_deadline_is_late_before_it_on_time(client, teacher, klass):
    class_path, join_path = klass
    early, late, idle = (joined(client, join_path, n) for n in ("Early", "Late", "Idle"))
    submit(early, CORRECT)
    # The deadline falls between Early's and Late's submissions (the form takes minutes: set it to the instant).
    client.app.state.deadlines.set(class_path.rsplit("/", 1)[1], "add-one", datetime.now(timezone.utc))
    assert submit(late, CORRECT)["verdict"] == "ACCEPTED"  # graded as ever: the deadline only marks
    page = teacher.get(class_path + "?lang=en").text
    assert timings(page) == {"Early": "on_time", "Idle": "missed", "Late": "late"}
    lines = {r["learner"]: r for r in csv.DictReader(io.StringIO(
        teacher.get(class_path + "/progress.csv").content.decode("utf-8-sig")))}
    assert lines["Late"]["timing"] == "late" and lines["Idle"]["timing"] == "missed"
    assert lines["Late"]["due at"]
    mine = late.get("/me?lang=en").text
    assert 'data-timing="late"' in mine and "late" in unescape(mine)
    assert 'data-timing="late"' in late.get("/exercises/add-one?lang=en").text
    assert "逾期" in late.get("/me?lang=zh").text


def test_early_submissions_are_on_time(client, teacher, klass):
    class_path, join_path = klass
    ann = joined(client, join_path, "Ann")
    teacher.post(class_path + "/deadlines", data={"exercise": "add-one", "due": at(timedelta(days=2))})
    submit(ann, CORRECT)
    assert timings(teacher.get(class_path).text) == {"Ann": "on_time"}
    assert 'data-timing="on_time"' in ann.get("/me").text


def test_refusing_late_submissions_and_one_learners_extension(client, teacher, klass):
    class_path, join_path = klass
    ann, bob = joined(client, join_path, "Ann"), joined(client, join_path, "Bob")
    assert teacher.post(class_path + "/deadlines", data={"exercise": "add-one", "due": at(timedelta(minutes=-5)),
                                                          "refuse_late": "1"}).status_code == 303
    refused = ann.post(SUBMIT, json={"source": CORRECT})
    assert refused.status_code == 403
    assert "your class does not take late submissions; ask your instructor for an extension" in refused.json()["detail"]
    extended = teacher.post(class_path + "/deadlines", data={
        "exercise": "add-one", "due": at(timedelta(days=1)), "learner": learner_id(client, class_path, "Bob")})
    assert extended.status_code == 303
    assert submit(bob, CORRECT)["verdict"] == "ACCEPTED"
    assert ann.post(SUBMIT, json={"source": CORRECT}).status_code == 403
    page = teacher.get(class_path).text
    assert timings(page) == {"Ann": "missed", "Bob": "on_time"}
    assert re.search(r'<tr data-exercise="add-one">.*?Bob: ', page, re.S)  # the extension is listed
    bob_page = teacher.get(f"{class_path}/learners/{learner_id(client, class_path, 'Bob')}").text
    assert 'data-timing="on_time"' in bob_page  # Bob's own (extended) deadline, on the instructor's page of Bob
    outsider = browser(client)  # in no class: no deadline applies
    assert outsider.post(SUBMIT, json={"source": CORRECT}).status_code == 202
    teacher.post(class_path + "/deadlines", data={"exercise": "add-one", "remove": "1"})
    assert ann.post(SUBMIT, json={"source": CORRECT}).status_code == 202


@pytest.mark.parametrize("fields, text", [
    ({"exercise": "add-one", "due": "next friday"}, "Give the due time as YYYY-MM-DD HH:MM (UTC)"),
    ({"exercise": "nope", "due": "2026-12-04T18:00"}, "Choose the exercise the deadline is for."),
    ({"exercise": "add-one", "due": "2026-12-04T18:00", "learner": "x" * 32}, "This learner is not in the class."),
    # out of range: these were 500s (an offset past year 9999 or before year 1 overflows)
    ({"exercise": "add-one", "due": "9999-12-31T23:59-05:00"}, "Give a due time between the years 2000 and 9998."),
    ({"exercise": "add-one", "due": "0001-01-01T00:00+05:00"}, "Give a due time between the years 2000 and 9998."),
    ({"exercise": "add-one", "due": "9999-12-31T23:59"}, "Give a due time between the years 2000 and 9998."),
])
def test_deadline_form_errors_say_what_to_fix(client, teacher, klass, fields, text):
    class_path, _ = klass
    response = teacher.post(class_path + "/deadlines?lang=en", data=fields)
    assert response.status_code == 400 and text in unescape(response.text)


def test_a_class_that_refuses_late_work_refuses_only_for_itself(client, teacher, klass):
    """A refusing deadline of class A refused the learner's submission although class B, which they are also in,
    had no deadline for the exercise: A refuses for itself only."""
    a_path, a_join = klass
    b_path, b_join = new_class(teacher, "Class B")
    ann = joined(client, a_join, "Ann")
    assert ann.post(b_join, data={"display_name": "Ann"}).status_code == 303
    assert teacher.post(a_path + "/deadlines", data={"exercise": "add-one", "due": at(timedelta(minutes=-5)),
                                                      "refuse_late": "1"}).status_code == 303
    assert submit(ann, CORRECT)["verdict"] == "ACCEPTED"  # B still takes it
    assert timings(teacher.get(a_path).text) == {"Ann": "late"}  # and A shows it late
    assert teacher.post(b_path + "/deadlines", data={"exercise": "add-one", "due": at(timedelta(minutes=-10)),
                                                      "refuse_late": "1"}).status_code == 303
    refused = ann.post(SUBMIT, json={"source": CORRECT})  # now every class of hers refuses it
    assert refused.status_code == 403 and "does not take late submissions" in refused.json()["detail"]
