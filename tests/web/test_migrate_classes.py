"""Migration 0004 (classes) on SQLite and PostgreSQL: the learners of existing submissions keep them."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from sqlalchemy import inspect, text

from judge.reports.report import Report, Verdict
from tests.databases import BACKENDS, PostgresDatabases, postgres_server
from web import db
from web.classes import ClassStore
from web.progress import class_table
from web.store import Store

BEFORE_CLASSES = "0003"


@pytest.fixture(params=BACKENDS)
def unmigrated_url(request, tmp_path) -> str:
    """An empty database that no migration has touched: SQLite, then PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'old.db'}"
    request.applymarker(pytest.mark.postgres)
    databases = PostgresDatabases(postgres_server())
    request.addfinalizer(databases.drop_all)
    return databases.create(migrated=False)


def old_submission(conn, sid: str, learner: str, verdict: str, day: int) -> None:
    report = Report(exercise_id="add-one", verdict=Verdict(verdict), summary=verdict).model_dump_json()
    conn.execute(text(
        "INSERT INTO submissions (id, learner_id, exercise_id, source, status, verdict, report_json, created_at, "
        "finished_at, attempts, graded_by) VALUES (:id, :learner, 'add-one', 'src', 'done', :verdict, :report, "
        ":at, :at, 1, 'w1')"),
        {"id": sid, "learner": learner, "verdict": verdict, "report": report,
         "at": datetime(2026, 3, day, 9, 0, tzinfo=timezone.utc)})


def test_existing_submissions_are_carried_into_the_class_schema(unmigrated_url):
    engine = db.make_engine(unmigrated_url)
    db.upgrade(engine, BEFORE_CLASSES)
    with engine.begin() as conn:  # two anonymous learners of the version before classes
        old_submission(conn, "s1", "cookie-ann", "WRONG_ANSWER", 1)
        old_submission(conn, "s2", "cookie-ann", "ACCEPTED", 2)
        old_submission(conn, "s3", "cookie-bob", "WRONG_ANSWER", 3)

    assert db.upgrade(engine) == (BEFORE_CLASSES, db.head())
    with engine.connect() as conn:
        learners = dict(conn.execute(text("SELECT id, created_at FROM learners")).all())
    assert set(learners) == {"cookie-ann", "cookie-bob"}  # one row per learner, made at the first submission
    assert str(learners["cookie-ann"]).startswith("2026-03-01 09:00")
    foreign = inspect(engine).get_foreign_keys("submissions")
    assert [(f["referred_table"], f["constrained_columns"]) for f in foreign] == [("learners", ["learner_id"])]

    store, classes = Store(engine), ClassStore(engine)
    assert store.states("cookie-ann") == {"add-one": "solved"}  # solo use: nothing changed for them
    assert [s.id for s in store.history("cookie-bob", "add-one")] == ["s3"]
    teacher = classes.add_instructor("teacher", "correct horse")
    class_ = classes.create_class(teacher.id, "Spring")
    classes.join(class_.id, "cookie-ann", "Ann")  # the same cookie joins: its old submissions come along
    [row] = class_table(engine, class_.id, classes.members(class_.id), ["add-one"])
    cell = row.cells["add-one"]
    assert (row.member.display_name, cell.attempts, cell.last_verdict) == ("Ann", 2, "ACCEPTED")
    assert cell.first_solved_at == datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
    store.add("cookie-new", "add-one", "src")  # a new cookie's first submission makes its learner row

    db.downgrade(engine, BEFORE_CLASSES)  # back: the new tables go, every submission stays
    tables = set(inspect(engine).get_table_names())
    assert not tables & {"learners", "instructors", "classes", "class_members", "class_instructors"}
    with engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM submissions")).scalar() == 4
    assert db.upgrade(engine) == (BEFORE_CLASSES, db.head())  # and forward again
    with engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM learners")).scalar() == 3
    store.close()


def test_members_are_rekeyed_by_nfkc_and_keep_their_sessions(unmigrated_url):
    """Migration 0007: names typed in full width or decomposed sign in; cookies in use stay valid (epoch 0)."""
    engine = db.make_engine(unmigrated_url)
    db.upgrade(engine, "0006_course")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO classes (id, name, join_code, created_at) VALUES ('c1', 'A', 'j', :at)"),
                     {"at": datetime(2026, 3, 1, tzinfo=timezone.utc)})
        old_keys = [("l1", "\uff22\uff4f\uff42", "\uff42\uff4f\uff42"), ("l2", "Jose\u0301", "jose\u0301")]
        for learner, name, key in old_keys:
            conn.execute(text("INSERT INTO learners (id, created_at) VALUES (:id, :at)"),
                         {"id": learner, "at": datetime(2026, 3, 1, tzinfo=timezone.utc)})
            conn.execute(text("INSERT INTO class_members (class_id, learner_id, display_name, name_key, joined_at) "
                              "VALUES ('c1', :l, :n, :k, :at)"),
                         {"l": learner, "n": name, "k": key, "at": datetime(2026, 3, 1, tzinfo=timezone.utc)})
    db.upgrade(engine)
    with engine.connect() as conn:
        keys = dict(conn.execute(text("SELECT learner_id, name_key FROM class_members")).all())
        epochs = set(conn.execute(text("SELECT session_epoch FROM learners")).scalars())
    assert keys == {"l1": "bob", "l2": "jos\u00e9"} and epochs == {0}
    engine.dispose()
