"""`practice serve`: build the web app from settings and hand it to uvicorn."""

from __future__ import annotations

from pathlib import Path

import click


def serve(host: str | None = None, port: int | None = None, data_dir: Path | str | None = None,
          sandbox: str | None = None, reload_exercises: bool = False) -> None:
    """Start the web UI; options left as None fall back to `web.settings.Settings` (env `PRACTICE_*`)."""
    import uvicorn

    from judge.exercise import ExerciseError
    from web.app import create_app
    from web.grading import StartupError
    from web.settings import Settings

    overrides = {"host": host, "port": port, "data_dir": data_dir, "sandbox": sandbox}
    settings = Settings(**{k: v for k, v in overrides.items() if v is not None})
    if reload_exercises:
        settings.reload_exercises = True
    try:
        app = create_app(settings)
    except (StartupError, ExerciseError) as exc:
        raise click.ClickException(str(exc)) from None
    shown = "localhost" if settings.host in ("127.0.0.1", "0.0.0.0", "::") else settings.host
    from judge.exercise import Limits

    limits = Limits()
    click.echo(f"sandbox: {app.state.sandbox_name}; default limits per submission: {limits.time_seconds:g} s wall, "
               f"{limits.memory_mb} MiB, {limits.pids} processes, {limits.file_size_mb} MiB files, "
               f"{limits.output_kb} KiB output (exercises may raise them)")
    click.echo(f"torch-practice: http://{shown}:{settings.port}/  (sandbox: {app.state.sandbox_name}, "
               f"data: {settings.data_dir.resolve()}, {settings.workers} worker(s)); Ctrl+C stops")
    # Open event streams would otherwise hold a Ctrl+C until their grading ends.
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="info", timeout_graceful_shutdown=5)
