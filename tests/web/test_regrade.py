"""Regrades after a hidden test changes: before/after on the class page and CSV, the learner told, live first.

Each test runs on SQLite and on PostgreSQL, on a copy of the fixture course graded by its hidden tests as they
are now (`tests/web/hidden_grader.py`), so tightening a test in the copy changes verdicts and the version.
"""

from __future__ import annotations

import csv
import io
import re
import time
from html import unescape

import pytest
from fastapi.testclient import TestClient

from tests.web.classroom import PASSWORD, browser, new_class, sign_in, table
from tests.web.conftest import wait_done
from tests.web.hidden_grader import HiddenTestGrader
from web.app import create_app

SUBMIT = "/api/exercises/add-one/submissions"
EXACT = "def add_one(x):\n    return x + 1\n"
SMALL_ONLY = "def add_one(x):\n    return x + 1 if x > -100 else x\n"  # right on the tests as shipped
TIGHTER = "\n\ndef test_large_negative():\n    assert add_one(-1000) == -999\n"


# course, grader and client: tests/web/conftest.py's, graded by the course copy's hidden tests
pytestmark = pytest.mark.hidden_tests


@pytest.fixture
def teacher(client):
    client.app.state.classes.add_instructor("teacher", PASSWORD)
    t = browser(client)
    assert sign_in(t, "teacher").status_code == 303
    return t


def tighten_hidden_test(course) -> None:
    path = course / "add-one" / "tests" / "test_add_one.py"
    path.write_text(path.read_text(encoding="utf-8") + TIGHTER, encoding="utf-8")


def joined(client, join_path: str, name: str):
    learner = browser(client)
    assert learner.post(join_path, data={"display_name": name}).status_code == 303
    return learner


def submit(learner: TestClient, source: str) -> dict:
    return wait_done(learner, learner.post(SUBMIT, json={"source": source}).json()["id"])


def attr(html: str, element: str, name: str) -> str:
    return re.search(rf'<tr data-exercise="add-one"[^>]*\b{name}="([^"]*)"', html[html.index(element):]).group(1)


def wait_regraded(teacher: TestClient, class_path: str, timeout: float = 20.0) -> str:
    """The class page once no regrade of the class waits (polled, as an instructor's browser would reload)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        html = teacher.get(class_path + "?lang=en").text
        if attr(html, 'id="version-table"', "data-waiting") == "0":
            return teacher.get(class_path + "?lang=en").text  # read after the last regrade ended
        time.sleep(0.05)
    raise AssertionError("regrades still waiting")


def changes(html: str) -> list[tuple[str, str, str]]:
    """(learner, before, after) of each row of the page's table of changed verdicts."""
    return [(unescape(name), before, after) for before, after, name in re.findall(
        r'<tr data-submission="\w+" data-before="(\w+)" data-after="(\w+)">\s*<td><a [^>]*>([^<]*)</a>', html)]


def test_a_tightened_hidden_test_turns_accepted_into_wrong_answer_after_a_regrade(client, teacher, course, grader):
    class_path, join_path = new_class(teacher)
    ann, bob = joined(client, join_path, "Ann"), joined(client, join_path, "Bob")
    assert submit(ann, EXACT)["verdict"] == "ACCEPTED"
    first = submit(bob, SMALL_ONLY)
    assert first["verdict"] == "ACCEPTED" and first["report"]["fingerprint"]
    page = teacher.get(class_path + "?lang=en").text
    assert attr(page, 'id="version-table"', "data-older") == "0"

    tighten_hidden_test(course)
    page = teacher.get(class_path + "?lang=en").text
    assert attr(page, 'id="version-table"', "data-older") == "2"
    assert "2 of the class's verdicts come from older versions" in unescape(page)

    queued = teacher.post(class_path + "/regrade", data={"exercise": "add-one", "scope": "all",
                                                          "reason": "a test for large negative numbers was added"},
                          follow_redirects=False)
    assert queued.status_code == 303 and "regraded=2" in queued.headers["location"]
    page = wait_regraded(teacher, class_path)
    assert attr(page, 'id="version-table"', "data-older") == "0"
    rows = {r["learner"]: r["cells"]["add-one"] for r in table(page)}
    assert rows["Bob"]["last verdict"] == "WRONG_ANSWER" and rows["Bob"]["solved"] == "no"
    assert rows["Ann"]["last verdict"] == "ACCEPTED" and rows["Ann"]["solved"] == "yes"
    assert re.search(r'data-learner="Bob">.*?data-before="ACCEPTED" data-changed="1"', page, re.S)
    assert changes(page) == [("Bob", "ACCEPTED", "WRONG_ANSWER")]
    # The first report is kept as it was; the new one is stored beside it.
    assert bob.get(f"/api/submissions/{first['id']}").json()["verdict"] == "ACCEPTED"

    progress = list(csv.DictReader(io.StringIO(teacher.get(class_path + "/progress.csv").content.decode("utf-8-sig"))))
    by_name = {line["learner"]: line for line in progress}
    assert by_name["Bob"]["exercise id"] == "add-one" and by_name["Bob"]["last verdict"] == "WRONG_ANSWER"
    assert by_name["Bob"]["last verdict before regrade"] == "ACCEPTED"
    assert by_name["Bob"]["verdicts changed by regrade"] == "1" and by_name["Bob"]["solved"] == "no"
    assert by_name["Ann"]["last verdict before regrade"] == ""
    [change] = csv.DictReader(io.StringIO(teacher.get(class_path + "/regrades.csv").content.decode("utf-8-sig")))
    assert (change["learner"], change["before"], change["after"], change["submission"]) == (
        "Bob", "ACCEPTED", "WRONG_ANSWER", first["id"])
    assert change["reason"] == "a test for large negative numbers was added"

    told = unescape(bob.get("/me?lang=en").text)
    assert 'data-before="ACCEPTED" data-after="WRONG_ANSWER"' in told
    assert "Reason: a test for large negative numbers was added" in told
    assert "Reason: a test for large negative numbers" in unescape(bob.get("/exercises/add-one?lang=en").text)
    assert 'id="my-regrades"' not in ann.get("/me").text
    assert [e["state"] for e in bob.get("/api/exercises").json()] == ["attempted"]  # no longer solved
    assert [e["state"] for e in ann.get("/api/exercises").json()] == ["solved"]
    bob_id = next(m.learner_id for m in client.app.state.classes.members(class_path.rsplit("/", 1)[1])
                  if m.display_name == "Bob")
    seen = teacher.get(f"{class_path}/learners/{bob_id}?lang=en").text
    assert 'data-before="ACCEPTED" data-after="WRONG_ANSWER"' in seen
    assert "原因：" in unescape(bob.get("/me?lang=zh").text)

    graded = len(grader.order)
    again = teacher.post(class_path + "/regrade", data={"exercise": "add-one", "scope": "all"}, follow_redirects=False)
    assert "regraded=0" in again.headers["location"]  # every verdict is from this version: nothing to grade
    assert len(grader.order) == graded


def test_live_submissions_are_graded_before_waiting_regrades(client, teacher, course, grader):
    class_path, join_path = new_class(teacher)
    learners = [joined(client, join_path, name) for name in ("Ann", "Bob", "Cai")]
    for learner in learners:
        submit(learner, EXACT)
    tighten_hidden_test(course)
    grader.gate.clear()
    grader.started.clear()
    made = client.app.state.queue.regrade("add-one", _current(client), class_id=class_path.rsplit("/", 1)[1])
    assert len(made) == 3
    assert grader.started.wait(10)  # the first regrade is being graded; two wait
    late = joined(client, join_path, "Dan")
    live = late.post(SUBMIT, json={"source": EXACT}).json()["id"]
    grader.gate.set()
    assert wait_done(late, live)["verdict"] == "ACCEPTED"
    wait_regraded(teacher, class_path)
    assert grader.order[-4:][1] == live  # after the regrade that had started, before the two that waited


def test_regrading_only_each_learners_latest_submission(client, teacher, course, grader):
    class_path, join_path = new_class(teacher)
    ann = joined(client, join_path, "Ann")
    submit(ann, SMALL_ONLY)
    time.sleep(0.01)  # distinct creation times order the two submissions
    submit(ann, SMALL_ONLY)
    tighten_hidden_test(course)
    class_id = class_path.rsplit("/", 1)[1]
    latest = client.app.state.queue.regrade("add-one", _current(client), class_id=class_id, latest=True)
    assert len(latest) == 1
    wait_regraded(teacher, class_path)
    rest = client.app.state.queue.regrade("add-one", _current(client), class_id=class_id)
    assert len(rest) == 1 and rest[0].submission_id != latest[0].submission_id


def _current(client) -> str:
    from judge.parent.fingerprint import exercise_fingerprint

    return exercise_fingerprint(client.app.state.course.get("add-one"))


def test_regrade_jobs_wait_behind_live_jobs_in_procrastinate(postgres, tmp_path, course):
    """On PostgreSQL the regrade jobs are deferred with a lower priority than live ones (Procrastinate takes the
    highest first), in the transaction that stores their rows."""
    from sqlalchemy import text

    from web import db
    from web.course import Course
    from web.events import EventHub
    from web.pg_queue import ProcrastinateQueue
    from web.store import Store

    url = postgres.create()
    store = Store(db.make_engine(url))
    queue = ProcrastinateQueue(store, EventHub(), Course(course))
    exercise = queue._course.get("add-one")
    first = queue.add("ann", exercise, EXACT)
    from judge.reports.report import Report, Verdict

    store.finish(first.id, Report(exercise_id="add-one", verdict=Verdict.ACCEPTED, summary="ok", fingerprint="old"))
    made = queue.regrade("add-one", _fingerprint(course))
    assert len(made) == 1 and queue.regrade("add-one", _fingerprint(course)) == []
    queue.add("bob", exercise, EXACT)
    with store.engine.connect() as conn:
        jobs = conn.execute(text("SELECT task_name, priority FROM procrastinate_jobs WHERE status = 'todo' "
                                 "ORDER BY priority DESC, id")).all()
    # Both live jobs (the first, never taken here, and the one made after the regrade) come first.
    assert [tuple(j) for j in jobs] == [("grade_submission", 0), ("grade_submission", 0), ("regrade_submission", -10)]
    store.close()


def _fingerprint(course) -> str:
    from judge.parent.exercise import load_exercise
    from judge.parent.fingerprint import exercise_fingerprint

    return exercise_fingerprint(load_exercise(course / "add-one"))


@pytest.mark.postgres
def test_practice_regrade_defers_jobs_that_a_worker_takes_after_live_ones(postgres, tmp_path, course):
    """`practice regrade` on PostgreSQL defers the jobs; a `practice worker` grades a live submission made
    meanwhile before the regrades that wait, and running the command again queues nothing."""
    from click.testing import CliRunner

    from cli.main import cli
    from tests.polling import wait_until
    from tests.web.conftest import RunningWorker
    from web.settings import Settings

    url = postgres.create()
    settings = Settings(data_dir=tmp_path / "data", exercises_dir=course, database_url=url, sandbox="none",
                        allow_unsandboxed=True, workers=1, secret_key="test-secret", submissions_per_minute=50,
                        heartbeat_seconds=0.2, stalled_after_seconds=5.0)
    grader = HiddenTestGrader(course)
    with TestClient(create_app(settings), base_url="http://testserver") as web, \
            RunningWorker(settings, "w1", grader=grader):
        learners = [browser(web) for _ in range(3)]
        ids = [learner.post(SUBMIT, json={"source": SMALL_ONLY}).json()["id"] for learner in learners]
        for learner, sid in zip(learners, ids):
            assert wait_done(learner, sid, timeout=30)["verdict"] == "ACCEPTED"
        tighten_hidden_test(course)
        grader.gate.clear()
        grader.started.clear()
        args = ["regrade", "add-one", "--database-url", url, "--exercises", str(course), "--reason", "stricter"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0 and "3 regrades of add-one queued" in result.output, result.output
        assert grader.started.wait(20)  # the worker took the first regrade; two wait
        late = browser(web)
        live = late.post(SUBMIT, json={"source": EXACT}).json()["id"]
        grader.gate.set()
        assert wait_done(late, live, timeout=30)["verdict"] == "ACCEPTED"
        regrades = web.app.state.regrades
        wait_until(lambda: len(regrades.newest_done(ids)) == 3, what="three regrades done")
        assert grader.order[-4:][1] == live
        assert {r.verdict for r in regrades.newest_done(ids).values()} == {"WRONG_ANSWER"}
        again = CliRunner().invoke(cli, args)
        assert again.exit_code == 0 and "0 regrades of add-one queued" in again.output


def test_practice_regrade_on_sqlite_grades_here_and_prints_each_change(tmp_path, course, monkeypatch):
    """On SQLite (no workers) the command grades the regrades itself, one after another, and says which changed."""
    from types import SimpleNamespace

    from click.testing import CliRunner

    from cli.main import cli
    from web import db, graders
    from web.store import Store

    grader = HiddenTestGrader(course)
    monkeypatch.setattr(graders, "make_grade_fn",
                        lambda course_, sandbox: SimpleNamespace(grade=grader, warm=lambda: None, close=lambda: None))
    monkeypatch.setenv("PRACTICE_ALLOW_UNSANDBOXED", "1")
    url = f"sqlite:///{tmp_path / 'data' / 'practice.db'}"
    (tmp_path / "data").mkdir()
    engine = db.make_engine(url)
    db.upgrade(engine)
    store = Store(engine)
    for source in (EXACT, SMALL_ONLY):
        s = store.add("learner-" + str(len(source)), "add-one", source)
        store.finish(s.id, grader(s, lambda event: None))
    tighten_hidden_test(course)
    args = ["regrade", "add-one", "--database-url", url, "--exercises", str(course), "--sandbox", "none"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "2 regrades of add-one to grade here" in result.output
    assert "ACCEPTED -> WRONG_ANSWER (CHANGED)" in result.output and "ACCEPTED -> ACCEPTED (unchanged)" in result.output
    again = CliRunner().invoke(cli, args)
    assert "0 regrades of add-one to grade here" in again.output
    unknown = CliRunner().invoke(cli, ["regrade", "add-one", "--database-url", url, "--class", "nope"])
    assert unknown.exit_code != 0 and "no class has the id nope" in unknown.output
    store.close()
