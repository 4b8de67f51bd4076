"""`practice worker` and `practice db`: translate options into settings, errors into click errors."""

from __future__ import annotations

import logging
from pathlib import Path

import click


def settings_from(**options):
    """`web.settings.Settings` with the options that were given (None: the setting's env var or default); a value
    that is not allowed is one line naming the setting, where it came from and what it accepts, not a traceback."""
    from pydantic import ValidationError

    from web.settings import Settings

    given = {k: list(v) if isinstance(v, tuple) else v for k, v in options.items() if v not in (None, ())}
    try:
        return Settings(**given)
    except ValidationError as exc:
        raise click.UsageError("; ".join(_setting_problem(error, given) for error in exc.errors())) from None


def _setting_problem(error: dict, given: dict) -> str:
    name = str(error["loc"][0]) if error.get("loc") else "?"
    from cli.setting_options import FLAGS

    source = FLAGS.get(name, f"--{name.replace('_', '-')}") if name in given else f"PRACTICE_{name.upper()}"
    message = error.get("msg", "").removeprefix("Value error, ")
    return f"{source}={error.get('input')!r}: {message}"


def run_worker(**options) -> None:
    """Start a worker with these settings (`web.settings.Settings` fields; None: not given), print what it serves,
    then grade until stopped."""
    from judge.parent.exercise import ExerciseError
    from web.errors import StartupError
    from web.worker import Worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = settings_from(**options)
    if settings.database_url is None:
        raise click.ClickException("practice worker needs --database-url postgresql://USER:PASSWORD@HOST:5432/DB "
                                   "(or PRACTICE_DATABASE_URL): the database that `practice serve` uses")
    try:
        worker = Worker(settings)
    except (StartupError, ExerciseError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(worker.describe(), err=False)
    worker.run()


def migrated_engine(database_url: str | None, data_dir: Path | None):
    """(settings, engine, (revision before, revision after)) on the database migrated to this version's schema, as
    `practice serve` migrates on start; a database that cannot be reached or migrated is a click error."""
    from web import db
    from web.errors import StartupError

    settings = settings_from(database_url=database_url, data_dir=data_dir)
    url = settings.resolved_database_url()
    try:
        if url.startswith("sqlite"):
            settings.data_dir.mkdir(parents=True, exist_ok=True)
        engine = db.make_engine(url)
        revisions = db.upgrade(engine)
    except StartupError as exc:
        raise click.ClickException(str(exc)) from None
    return settings, engine, revisions


def upgrade(database_url: str | None, data_dir: Path | None) -> None:
    """Migrate the database to this version's schema and say what changed."""
    from web import db

    _, engine, (before, after) = migrated_engine(database_url, data_dir)
    where = db.display(engine.url)
    engine.dispose()
    if before == after:
        click.echo(f"{where}: schema already at revision {after}")
    else:
        click.echo(f"{where}: schema migrated from revision {before or 'none'} to {after}")


def current(database_url: str | None, data_dir: Path | None) -> None:
    from web import db
    from web.errors import StartupError

    settings = settings_from(database_url=database_url, data_dir=data_dir)
    try:
        engine = db.make_engine(settings.resolved_database_url())
        have = db.current(engine)
    except StartupError as exc:
        raise click.ClickException(str(exc)) from None
    want = db.head()
    state = "up to date" if have == want else f"behind: run `practice db upgrade` to reach {want}"
    click.echo(f"{db.display(engine.url)}: schema revision {have or 'none'} ({state})")
    engine.dispose()
