"""The database: migrations (the same on SQLite and PostgreSQL), the store's once-only results, and what
a bad or unreachable database URL tells the user to fix."""

from __future__ import annotations

import threading

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, inspect, text

from cli.main import cli
from judge.reports.report import Report, Verdict
from web import db
from web.errors import StartupError
from web.store import Store
from web.tables import Base


def report(verdict: Verdict) -> Report:
    return Report(exercise_id="add-one", verdict=verdict, summary=verdict.value)


def test_the_migrations_make_exactly_the_declared_tables(database_url):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    engine = db.make_engine(database_url)
    ours = lambda obj, name, kind, *_: kind != "table" or name in Base.metadata.tables  # noqa: E731
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"include_object": ours, "compare_type": True})
        assert compare_metadata(context, Base.metadata) == []
    assert db.current(engine) == db.head()
    engine.dispose()


def test_upgrade_twice_changes_nothing_and_downgrade_empties_the_database(database_url):
    engine = db.make_engine(database_url)
    assert db.upgrade(engine) == (db.head(), db.head())
    db.downgrade(engine, "base")
    leftovers = [t for t in inspect(engine).get_table_names() if t != "alembic_version"]
    assert leftovers == [] and db.current(engine) is None
    assert db.upgrade(engine) == (None, db.head())
    engine.dispose()


def test_the_store_stores_the_first_result_only(database_url):
    store = Store(database_url)
    submission = store.add("learner", "add-one", "def add_one(x): return x + 1")
    assert store.mark_running(submission.id, "w1").attempts == 1
    assert store.mark_running(submission.id, "w2").attempts == 2  # a second delivery, after w1 went silent
    assert store.finish(submission.id, report(Verdict.ACCEPTED), "w2") is True
    assert store.finish(submission.id, report(Verdict.WRONG_ANSWER), "w1") is False  # late: changes nothing
    assert store.mark_running(submission.id, "w3") is None  # finished: nothing to grade
    stored = store.get(submission.id)
    assert (stored.status, stored.verdict, stored.graded_by, stored.attempts) == ("done", "ACCEPTED", "w2", 2)
    store.close()


def test_the_store_refuses_a_database_that_was_not_migrated(tmp_path):
    with pytest.raises(StartupError, match=r"schema revision none, this version needs .*practice db upgrade"):
        Store(f"sqlite:///{tmp_path / 'empty.db'}")


def test_a_database_made_before_migrations_is_adopted_with_its_submissions(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_engine(url)
    with engine.begin() as conn:  # the table as create_all made it before migrations existed
        conn.execute(text("CREATE TABLE submissions (id VARCHAR(32) PRIMARY KEY, learner_id VARCHAR(64) NOT NULL, "
                          "exercise_id VARCHAR(128) NOT NULL, source TEXT NOT NULL, status VARCHAR(16) NOT NULL, "
                          "verdict VARCHAR(32), report_json TEXT, created_at DATETIME NOT NULL, finished_at DATETIME)"))
        conn.execute(text("INSERT INTO submissions VALUES ('s1', 'l1', 'add-one', 'src', 'done', 'ACCEPTED', NULL, "
                          "'2026-01-01 00:00:00', NULL)"))
    engine.dispose()
    engine = db.make_engine(url)
    assert db.upgrade(engine) == (None, db.head())
    store = Store(engine)
    assert store.get("s1").verdict == "ACCEPTED" and store.get("s1").attempts == 0
    assert store.states("l1") == {"add-one": "solved"}
    store.close()


@pytest.mark.postgres
def test_web_processes_that_start_together_migrate_one_after_the_other(postgres):
    url = postgres.create(migrated=False)
    engines = [db.make_engine(url) for _ in range(3)]
    errors = []

    def migrate(engine):
        try:
            db.upgrade(engine)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=migrate, args=(e,)) for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and {db.current(e) for e in engines} == {db.head()}
    for engine in engines:
        engine.dispose()


@pytest.mark.parametrize("url, message", [
    ("not a url", r"bad database URL 'not a url': expected sqlite:///PATH/practice.db or postgresql://"),
    ("mysql://u:secret@host/db", r"unsupported database 'mysql' in mysql://u:\*\*\*@host/db: use sqlite:///"),
    ("postgresql://u:secret@127.0.0.1:5432", r"names no database: add /DBNAME"),
    ("postgresql://u:secret@127.0.0.1:1/class", r"cannot connect to the database postgresql\+psycopg://u:\*\*\*@"
                                                r"127.0.0.1:1/class \(.*\): check that PostgreSQL runs .* "
                                                r"\(createdb -h 127.0.0.1 class\)"),
    ("sqlite:////no/such/folder/x.db", r"cannot open the SQLite database '/no/such/folder/x.db' .* does its folder "
                                       r"exist"),
])
def test_a_bad_or_unreachable_database_says_what_to_fix(url, message):
    with pytest.raises(StartupError, match=message) as caught:
        db.make_engine(url)
    assert "secret" not in str(caught.value)


def test_practice_db_upgrade_and_current(tmp_path):
    url = f"sqlite:///{tmp_path / 'class.db'}"
    runner = CliRunner()
    first = runner.invoke(cli, ["db", "upgrade", "--database-url", url])
    assert first.exit_code == 0 and f"migrated from revision none to {db.head()}" in first.output
    again = runner.invoke(cli, ["db", "upgrade", "--database-url", url])
    assert again.exit_code == 0 and f"already at revision {db.head()}" in again.output
    current = runner.invoke(cli, ["db", "current", "--database-url", url])
    assert f"schema revision {db.head()} (up to date)" in current.output


@pytest.mark.parametrize("args, message", [
    ([], "practice worker needs --database-url postgresql://"),
    (["--database-url", "sqlite:///x.db"], "needs the shared PostgreSQL database"),
    (["--database-url", "postgresql://u:pw@127.0.0.1:1/class"], "cannot connect to the database"),
])
def test_practice_worker_refuses_a_database_it_cannot_use(args, message, monkeypatch):
    monkeypatch.delenv("PRACTICE_DATABASE_URL", raising=False)
    result = CliRunner().invoke(cli, ["worker", *args])
    assert result.exit_code == 1 and message in result.output, result.output
