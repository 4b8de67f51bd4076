"""Commands that run or set up a class's server: serve, worker, db, admin."""

from __future__ import annotations

from pathlib import Path

import click

from cli.options import (
    data_dir_option,
    database_url_option,
)
from sandbox.backends import SERVER_SANDBOXES


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, envvar="PRACTICE_HOST")
@click.option("--port", default=8000, show_default=True, type=int, envvar="PRACTICE_PORT")
@click.option("--data-dir", type=click.Path(path_type=Path), default=None, envvar="PRACTICE_DATA_DIR",
              help="Where the database lives (default: ./data).")
@click.option("--sandbox", "sandbox_name", type=click.Choice(SERVER_SANDBOXES), default=None,
              envvar="PRACTICE_SANDBOX", help="How submissions run (default auto: bwrap when it runs here; none and "
                                              "local need PRACTICE_ALLOW_UNSANDBOXED=1).")
@click.option("--reload-exercises", is_flag=True, help="Pick up edits to exercises/ without a restart.")
@click.option("--database-url", default=None, envvar="PRACTICE_DATABASE_URL",
              help="sqlite:///PATH or postgresql://USER:PASSWORD@HOST:5432/DB (default: SQLite in the data dir).")
@click.option("--queue", "queue_kind", type=click.Choice(["auto", "embedded", "procrastinate"]), default=None,
              envvar="PRACTICE_QUEUE", help="Who grades (default auto: `practice worker`s on PostgreSQL, "
                                             "this process on SQLite).")
def serve(host, port, data_dir, sandbox_name, reload_exercises, database_url, queue_kind):
    """Serve the web UI (migrates the database schema on start)."""
    from cli.serve import serve as run_server

    run_server(host=host, port=port, data_dir=data_dir, sandbox=sandbox_name, reload_exercises=reload_exercises,
               database_url=database_url, queue=queue_kind)


@click.command()
@click.option("--database-url", default=None, envvar="PRACTICE_DATABASE_URL",
              help="The PostgreSQL database of `practice serve`: postgresql://USER:PASSWORD@HOST:5432/DB.")
@click.option("--queue", "queues", multiple=True, type=click.Choice(["cpu", "gpu"]),
              help="Queue to serve; repeat for both (default: cpu; gpu needs a CUDA device).")
@click.option("--concurrency", type=click.IntRange(min=1), default=None, envvar="PRACTICE_WORKERS",
              help="Submissions graded at once (default: the number of CPUs).")
@click.option("--sandbox", type=click.Choice(SERVER_SANDBOXES), default=None, envvar="PRACTICE_SANDBOX",
              help="How submissions run (default auto: bwrap when it runs here; none and local need "
                   "PRACTICE_ALLOW_UNSANDBOXED=1).")
@click.option("--name", default=None, envvar="PRACTICE_WORKER_NAME", help="Worker name (default: HOST-PID).")
@click.option("--exercises", "exercises_dir", type=click.Path(path_type=Path), default=None,
              envvar="PRACTICE_EXERCISES_DIR", help="Folder of exercises (the same course as the web's).")
@click.option("--stalled-after", type=click.FloatRange(min=0, min_open=True), default=None,
              envvar="PRACTICE_STALLED_AFTER_SECONDS",
              help="Seconds of silence after which a worker's jobs go to another worker (default 30).")
def worker(database_url, queues, concurrency, sandbox, name, exercises_dir, stalled_after):
    """Grade submissions of `practice serve` from the shared PostgreSQL database, on any machine."""
    from cli.worker import run_worker

    run_worker(database_url, queues, concurrency, sandbox, name, exercises_dir, stalled_after)


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
