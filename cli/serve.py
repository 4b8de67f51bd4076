"""`practice serve`: build the web app from settings and hand it to uvicorn."""

from __future__ import annotations

from pathlib import Path

import click


def serve(host: str | None = None, port: int | None = None, data_dir: Path | str | None = None,
          sandbox: str | None = None, reload_exercises: bool | None = None, database_url: str | None = None,
          queue: str | None = None) -> None:
    """Start the web UI; options left as None fall back to `web.settings.Settings` (env `PRACTICE_*`)."""
    import uvicorn

    from cli.worker import settings_from
    from judge.parent.exercise import ExerciseError
    from web import db
    from web.app import create_app
    from web.errors import StartupError

    settings = settings_from(host=host, port=port, data_dir=data_dir, sandbox=sandbox, database_url=database_url,
                             queue=queue, reload_exercises=reload_exercises or None)
    try:
        app = create_app(settings)
    except (StartupError, ExerciseError) as exc:
        raise click.ClickException(str(exc)) from None
    shown = "localhost" if settings.host in ("127.0.0.1", "0.0.0.0", "::") else settings.host
    from judge.parent.exercise import Limits

    limits = Limits()
    database = db.display(app.state.store.engine.url)
    if app.state.queue_kind == "procrastinate":
        click.echo(f"database: {database} (schema {db.current(app.state.store.engine)}); grading: `practice worker` "
                   "processes through the Procrastinate queue in that database")
        if settings.secret_key is None:
            click.echo("warning: every web process behind one address needs the same PRACTICE_SECRET_KEY "
                       f"(this one keeps its own in {settings.data_dir / 'secret_key'})", err=True)
    else:
        click.echo(f"database: {database}; grading: {settings.workers} thread(s) of this process")
    click.echo(f"sandbox: {app.state.sandbox_name}; default limits per submission: {limits.cpu_limit:g} s CPU "
               f"({limits.owed_idle_limit:g} s idle while owing an answer, {limits.idle_limit:g} s idle, "
               f"{limits.wall_limit:g} s wall at most), "
               f"{limits.memory_mb} MiB, {limits.pids} processes, {limits.file_size_mb} MiB files, "
               f"{limits.output_kb} KiB output (exercises may raise them)")
    if settings.host not in ("127.0.0.1", "localhost", "::1") and not (settings.base_url or settings.allowed_hosts):
        click.echo("note: this server answers only localhost and IP addresses; to reach it by a name, set "
                   "PRACTICE_BASE_URL (the address learners use) or PRACTICE_ALLOWED_HOSTS", err=True)
    graders = f"{settings.workers} worker(s)" if app.state.queue_kind == "embedded" else "graded by practice worker"
    click.echo(f"torch-practice: http://{shown}:{settings.port}/  (sandbox: {app.state.sandbox_name}, "
               f"data: {settings.data_dir.resolve()}, {graders}); Ctrl+C stops")
    from web.server import server_options
    from web.warmup import Announcer

    # What a first start warms, and when it is ready, said in this terminal as it happens (web/warmup.py).
    Announcer(app.state.warm_pools, app.state.layers, lambda line: click.echo(f"torch-practice: {line}")).attach()

    # Timeouts and limits (docs/security.md); a graceful shutdown of 5 s, else open event streams would hold a
    # Ctrl+C until their grading ends.
    uvicorn.run(app, **server_options(settings))
