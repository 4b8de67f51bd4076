"""Databases for the tests: SQLite in a temporary folder, and PostgreSQL when scripts/test.sh started one.

`PRACTICE_TEST_DATABASE_URL` names a PostgreSQL server's maintenance database (scripts/postgres.sh prints
one); each test gets a database of its own, copied from a template migrated once per test process.
Without it PostgreSQL tests skip, unless `PRACTICE_REQUIRE_POSTGRES=1` (scripts/test.sh) makes them fail.
"""

from __future__ import annotations

import atexit
import os
import uuid

import pytest

PG_ENV = "PRACTICE_TEST_DATABASE_URL"
BACKENDS = ["sqlite", "postgresql"]


def postgres_server() -> str:
    url = os.environ.get(PG_ENV)
    if not url:
        if os.environ.get("PRACTICE_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{PG_ENV} is not set although PRACTICE_REQUIRE_POSTGRES=1 (scripts/test.sh starts one)")
        pytest.skip(f"no PostgreSQL: set {PG_ENV} (scripts/postgres.sh start DIR prints one)")
    return url


def _admin(server: str):
    import psycopg

    from web.db import conninfo, parse_url

    return psycopg.connect(conninfo(parse_url(server)), autocommit=True)


def _with_database(server: str, name: str) -> str:
    from web.db import parse_url

    return parse_url(server).set(database=name).render_as_string(hide_password=False)


_template: dict[str, str] = {}


def _migrated_template(server: str) -> str:
    """A database at the newest schema, made once per test process, to copy from."""
    if server not in _template:
        from web import db

        name = f"practice_tpl_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}"
        with _admin(server) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        engine = db.make_engine(_with_database(server, name))
        db.upgrade(engine)
        engine.dispose()
        _template[server] = name
        atexit.register(_drop, server, name)
    return _template[server]


def _drop(server: str, name: str) -> None:
    try:
        with _admin(server) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except Exception:  # noqa: BLE001 - the server stopped first: the cluster goes with it
        pass


class PostgresDatabases:
    """Creates fresh databases on the test server and drops them all at the end."""

    def __init__(self, server: str):
        self.server = server
        self.made: list[str] = []

    def create(self, migrated: bool = True) -> str:
        name = f"practice_test_{uuid.uuid4().hex[:12]}"
        template = f' TEMPLATE "{_migrated_template(self.server)}"' if migrated else ""
        with _admin(self.server) as conn:
            conn.execute(f'CREATE DATABASE "{name}"{template}')
        self.made.append(name)
        return _with_database(self.server, name)

    def drop_all(self) -> None:
        with _admin(self.server) as conn:
            for name in self.made:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.made.clear()


@pytest.fixture
def postgres():
    """A factory of fresh PostgreSQL databases (`postgres.create()` -> URL), dropped after the test."""
    databases = PostgresDatabases(postgres_server())
    yield databases
    databases.drop_all()


_sqlite_file: list = []


def _sqlite_template(tmp_path_factory) -> os.PathLike:
    """A SQLite file at the newest schema, migrated once per test process: each test copies it (a copy takes a
    millisecond, a migration a tenth of a second)."""
    if not _sqlite_file:
        from web import db

        path = tmp_path_factory.mktemp("sqlite-template") / "practice.db"
        engine = db.make_engine(f"sqlite:///{path}")
        db.upgrade(engine)
        engine.dispose()
        _sqlite_file.append(path)
    return _sqlite_file[0]


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path, tmp_path_factory) -> str:
    """The URL of an empty, migrated database: SQLite, then PostgreSQL (each test runs on both)."""
    if request.param == "sqlite":
        import shutil

        shutil.copyfile(_sqlite_template(tmp_path_factory), tmp_path / "practice.db")
        return f"sqlite:///{tmp_path / 'practice.db'}"
    request.applymarker(pytest.mark.postgres)
    databases = PostgresDatabases(postgres_server())
    request.addfinalizer(databases.drop_all)
    return databases.create()
