"""Commands that run or set up a class's server: serve, worker, db, admin."""

from __future__ import annotations

import click

from cli.setting_options import data_dir_option, database_url_option, setting_option


@click.command()
@setting_option("host")
@setting_option("port")
@setting_option("data_dir")
@setting_option("sandbox")
@setting_option("reload_exercises")
@setting_option("database_url")
@setting_option("queue")
def serve(**options):
    """Serve the web UI (migrates the database schema on start)."""
    from cli.serve import serve as run_server

    run_server(**options)


@click.command()
@setting_option("database_url")
@setting_option("worker_queues", "--queue")
@setting_option("workers", "--concurrency", type=click.IntRange(min=1))  # a worker that grades nothing: no
@setting_option("sandbox")
@setting_option("worker_name", "--name")
@setting_option("exercises_dir", "--exercises")
@setting_option("stalled_after_seconds", "--stalled-after")
def worker(**options):
    """Grade submissions of `practice serve` from the shared PostgreSQL database, on any machine."""
    from cli.worker import run_worker

    run_worker(**options)


@click.group()
def db():
    """The database schema: `practice db upgrade` migrates it (`practice serve` does too, on start)."""


@db.command("upgrade")
@database_url_option
@data_dir_option
def db_upgrade(database_url, data_dir):
    """Migrate the database to this version's schema."""
    from cli.worker import upgrade

    upgrade(database_url, data_dir)


@db.command("current")
@database_url_option
@data_dir_option
def db_current(database_url, data_dir):
    """Show the database's schema revision."""
    from cli.worker import current

    current(database_url, data_dir)


@click.group()
def admin():
    """Accounts for classes in the web UI: instructors sign in at /signin and see their classes."""


password_stdin_option = click.option("--password-stdin", is_flag=True,
                                     help="Read the password from the first line of standard input (for scripts).")


@admin.command("add-instructor")
@click.argument("username")
@password_stdin_option
@database_url_option
@data_dir_option
def admin_add_instructor(username, password_stdin, database_url, data_dir):
    """Create the instructor account USERNAME (asks for its password twice; migrates the database first)."""
    from cli.admin import add_instructor

    add_instructor(username, password_stdin, database_url, data_dir)


@admin.command("set-password")
@click.argument("username")
@password_stdin_option
@database_url_option
@data_dir_option
def admin_set_password(username, password_stdin, database_url, data_dir):
    """Change the password of the instructor USERNAME."""
    from cli.admin import set_password

    set_password(username, password_stdin, database_url, data_dir)
