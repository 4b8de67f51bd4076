"""`practice regrade` and `practice lti`: a graded course from the command line (options in, click errors out)."""

from __future__ import annotations

import json
from pathlib import Path

import click


def _engine(database_url: str | None, data_dir: Path | None):
    """The settings and an engine on the migrated database (as `practice serve` migrates on start)."""
    from cli.worker import migrated_engine

    settings, engine, _ = migrated_engine(database_url, data_dir)
    return settings, engine


def regrade(exercise_id: str, class_id: str | None, latest: bool, reason: str, database_url: str | None,
            data_dir: Path | None, exercises_dir: Path | None, sandbox: str | None) -> None:
    """Queue regrades of EXERCISE's finished submissions not graded under its current version.

    On PostgreSQL the jobs go to `practice worker`s (after live submissions); on SQLite this command grades them
    itself, one after another, in the sandbox the settings choose."""
    from judge.parent.exercise import ExerciseError, find_exercise
    from judge.parent.fingerprint import exercise_fingerprint
    from web import db
    from web.classes import ClassStore
    from web.regrade import Regrades

    settings, engine = _engine(database_url, data_dir)
    if exercises_dir is not None:
        settings.exercises_dir = exercises_dir
    if sandbox is not None:
        settings.sandbox = sandbox
    try:
        if class_id is not None and ClassStore(engine).get_class(class_id) is None:
            raise click.ClickException(f"no class has the id {class_id}: the class page's address ends with it")
        exercise = find_exercise(settings.exercises_dir, exercise_id)
        fingerprint = exercise_fingerprint(exercise)
        options = dict(class_id=class_id, latest=latest, reason=reason, requested_by="cli")
        if db.is_postgres(settings.resolved_database_url()):
            from judge.parent.requirements import queue_for
            from web.pg_queue import defer_regrade, procrastinate_app

            app = procrastinate_app(engine)
            made = Regrades(engine).request(exercise.id, fingerprint, **options, also=lambda conn, r: defer_regrade(
                app, conn, r.id, queue_for(exercise)))
            click.echo(f"{len(made)} regrades of {exercise.id} queued for `practice worker`s (version {fingerprint})")
            return
        made = Regrades(engine).request(exercise.id, fingerprint, **options)
        click.echo(f"{len(made)} regrades of {exercise.id} to grade here (version {fingerprint})")
        if made:
            _grade_here(settings, engine, [r.id for r in made])
    except ExerciseError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        engine.dispose()


def _grade_here(settings, engine, regrade_ids: list[str]) -> None:
    """Grade the regrades in this process, through the graders' one loop (`web.grading_loop`): a regrade the
    grader fails is graded again after the others, until its attempts run out."""
    from collections import deque

    from web.course import Course
    from web.errors import StartupError
    from web.events import EventHub
    from web.graders import choose_sandbox, make_grade_fn
    from web.grading_loop import GradingLoop
    from web.lti.grades import GradeSender
    from web.store import Store

    try:
        sandbox = choose_sandbox(settings)
    except StartupError as exc:
        raise click.ClickException(str(exc)) from None
    course = Course(settings.exercises_dir)
    grading = make_grade_fn(course, sandbox)
    pending = deque(regrade_ids)
    store = Store(engine)
    loop = GradingLoop(store, EventHub(), grading.grade, "cli", [GradeSender(engine)],
                       requeue_regrade=pending.append)
    try:
        while pending:
            regrade_id = pending.popleft()
            if loop.regrade(regrade_id) is None:
                continue
            regrade = loop.regrades.get(regrade_id)
            submission = store.get(regrade.submission_id)
            change = "unchanged" if regrade.verdict == submission.verdict else "CHANGED"
            click.echo(f"  {submission.id} {submission.created_at:%Y-%m-%d %H:%M} {submission.verdict} -> "
                       f"{regrade.verdict} ({change})")
    finally:
        grading.close()
        course.close()


def _registry(database_url: str | None, data_dir: Path | None):
    from web.lti.registry import LtiRegistry

    _, engine = _engine(database_url, data_dir)
    return engine, LtiRegistry(engine)


def _input_errors(fn):
    """Run `fn`, turning a person's input error into a click error."""
    from web.errors import InputError

    try:
        return fn()
    except InputError as exc:
        raise click.ClickException(str(exc)) from None


def add_platform(issuer, client_id, auth_login_url, token_url, jwks_url, database_url, data_dir) -> None:
    engine, registry = _registry(database_url, data_dir)
    try:
        platform = _input_errors(lambda: registry.add_platform(issuer, client_id, auth_login_url, token_url, jwks_url))
        click.echo(f"platform {platform.issuer} (client id {platform.client_id}) registered as {platform.id}; "
                   "now register its deployments with `practice lti add-deployment`")
    finally:
        engine.dispose()


def add_deployment(issuer, client_id, deployment_id, class_id, database_url, data_dir) -> None:
    engine, registry = _registry(database_url, data_dir)
    try:
        platform = registry.find_platform(issuer, client_id)
        if platform is None:
            raise click.ClickException(f"no single platform with issuer {issuer!r}"
                                       + (f" and client id {client_id!r}" if client_id else "")
                                       + ": register it with `practice lti add-platform` (or give --client-id)")
        _input_errors(lambda: registry.add_deployment(platform.id, deployment_id, class_id))
        click.echo(f"deployment {deployment_id} of {issuer}: its launches join class {class_id}")
    finally:
        engine.dispose()


def show(base_url: str | None, database_url, data_dir) -> None:
    """What to enter in the LMS, and the platforms registered here: the URLs under `base_url` (else the setting's,
    else the address `practice serve` listens on)."""
    from web.lti.registry import LtiRegistry

    settings, engine = _engine(database_url, data_dir)
    registry = LtiRegistry(engine)
    try:
        base = (base_url or settings.base_url or f"http://{settings.host}:{settings.port}").rstrip("/")
        click.echo(f"OIDC login initiation URL: {base}/lti/login")
        click.echo(f"redirect (launch) URL:     {base}/lti/launch")
        click.echo(f"public keyset (JWKS) URL:  {base}/lti/jwks")
        click.echo("target link URI:           " + base + "/exercises/EXERCISE_ID (or custom parameter exercise=ID)")
        for p in registry.platforms():
            click.echo(f"platform {p.issuer} client id {p.client_id}: login {p.auth_login_url}, token "
                       f"{p.auth_token_url}, keys {p.jwks_url}")
        click.echo("tool public keys: " + json.dumps(registry.jwks()))
    finally:
        engine.dispose()
