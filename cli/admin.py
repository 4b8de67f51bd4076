"""`practice admin`: instructor accounts for classes (they sign in at /signin of `practice serve`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cli.worker import migrated_engine


def _password(from_stdin: bool, username: str = "") -> str:
    """The new password, from stdin or asked twice; asked, it is checked (web.password_policy) after the first
    entry, so a password that would be refused is refused before it is typed again."""
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    from web.errors import InputError
    from web.password_policy import check_new_password

    def checked(value: str) -> str:
        try:
            check_new_password(value, (username,))
        except InputError as exc:
            raise click.BadParameter(str(exc)) from None
        return value

    return click.prompt("Password", hide_input=True, confirmation_prompt=True, value_proc=checked)


def _classes(database_url: str | None, data_dir: Path | None):
    """The accounts store on the database (migrated first, as `practice serve` does on start)."""
    from web.classes import ClassStore

    _, engine, _ = migrated_engine(database_url, data_dir)
    return engine, ClassStore(engine)


def add_instructor(username: str, password_stdin: bool, database_url: str | None, data_dir: Path | None) -> None:
    from web import db
    from web.errors import InputError

    engine, classes = _classes(database_url, data_dir)
    try:
        instructor = classes.add_instructor(username, _password(password_stdin, username))
    except InputError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        engine.dispose()
    click.echo(f"instructor {instructor.username} added to {db.display(engine.url)}: sign in at /signin")


def set_password(username: str, password_stdin: bool, database_url: str | None, data_dir: Path | None) -> None:
    from web import db
    from web.errors import InputError

    engine, classes = _classes(database_url, data_dir)
    try:
        classes.set_instructor_password(username, _password(password_stdin, username))
    except InputError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        engine.dispose()
    click.echo(f"password of instructor {username.strip().lower()} changed in {db.display(engine.url)}")
