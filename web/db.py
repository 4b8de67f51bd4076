"""The database: URLs, engines with clear errors, and schema migrations (Alembic, batch mode for SQLite).

    sqlite:///data/practice.db                     the embedded default (one machine, graders in the web process)
    postgresql://USER:PASSWORD@HOST:5432/DBNAME    shared by web processes and `practice worker`s

`upgrade(engine)` brings any database to the newest schema; PostgreSQL holds an advisory lock meanwhile, so
web processes that start together migrate one after the other. The app never calls `create_all`.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError

from web.errors import StartupError

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
EXAMPLES = "sqlite:///PATH/practice.db or postgresql://USER:PASSWORD@HOST:5432/DBNAME"
MIGRATION_LOCK = 7_261_337  # pg_advisory_xact_lock key held while migrating


def parse_url(url: str) -> URL:
    """A SQLAlchemy URL for SQLite or PostgreSQL (any `postgres://` spelling goes through psycopg 3)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StartupError(f"bad database URL {url!r}: expected {EXAMPLES}") from None
    backend = parsed.get_backend_name()
    if backend in ("postgresql", "postgres"):
        if not parsed.database:
            raise StartupError(f"database URL {display(parsed)} names no database: add /DBNAME at its end")
        return parsed.set(drivername="postgresql+psycopg")
    if backend == "sqlite":
        return parsed
    raise StartupError(f"unsupported database {backend!r} in {display(parsed)}: use {EXAMPLES}")


def display(url: URL | str) -> str:
    """The URL with its password hidden, for messages and start-up lines."""
    parsed = make_url(url) if isinstance(url, str) else url
    return parsed.render_as_string(hide_password=True)


def is_postgres(url: str) -> bool:
    return parse_url(url).get_backend_name() == "postgresql"


def conninfo(url: URL) -> str:
    """The libpq connection string of a PostgreSQL URL (for psycopg and Procrastinate)."""
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def make_engine(url: str | URL) -> Engine:
    """An engine for the URL, checked by one connection; `StartupError` says what to fix when it fails."""
    parsed = parse_url(url if isinstance(url, str) else url.render_as_string(hide_password=False))
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(parsed, connect_args={"check_same_thread": False, "timeout": 30})
    else:
        engine = create_engine(parsed, pool_pre_ping=True, pool_size=5, max_overflow=10,
                               connect_args={"connect_timeout": 10})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except (OperationalError, DBAPIError) as exc:
        engine.dispose()
        raise StartupError(_unreachable(parsed, exc)) from None
    return engine


def _unreachable(url: URL, exc: Exception) -> str:
    reason = str(getattr(exc, "orig", exc)).strip().splitlines()[0] if str(getattr(exc, "orig", exc)).strip() else ""
    if url.get_backend_name() == "sqlite":
        return (f"cannot open the SQLite database {url.database!r} ({reason}): "
                "does its folder exist, and may this user write there?")
    return (f"cannot connect to the database {display(url)} ({reason}): check that PostgreSQL runs and accepts "
            "connections from this machine, that the host, port, user and password are right, and that the "
            f"database exists (createdb -h {url.host or 'localhost'} {url.database})")


def _alembic_config(connection):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest schema revision this code knows."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()


def current(engine: Engine) -> str | None:
    """The database's schema revision (None: never migrated)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> tuple[str | None, str | None]:
    """Migrate to `revision`; returns (revision before, revision after). Safe to run from several processes."""
    from alembic import command

    before = current(engine)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        command.upgrade(_alembic_config(conn), revision)
    return before, current(engine)


def downgrade(engine: Engine, revision: str) -> None:
    from alembic import command

    with engine.begin() as conn:
        command.downgrade(_alembic_config(conn), revision)


def require_current(engine: Engine) -> None:
    """Refuse a database whose schema is not this code's: say which command migrates it."""
    have, want = current(engine), head()
    if have != want:
        raise StartupError(f"the database {display(engine.url)} has schema revision {have or 'none'}, this version "
                           f"needs {want}: run `practice db upgrade --database-url URL` (or start `practice serve`, "
                           "which migrates on start)")
