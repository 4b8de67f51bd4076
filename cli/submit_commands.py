"""A learner's commands for their class's server: login, logout, submit."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape

from cli.options import (
    console,
    exercises_option,
    fail,
    lang_option,
    load,
    workspace_option,
)
from judge.reports.i18n import T, text


@click.command()
@click.argument("url")
@click.option("--token", default=None, envvar="PRACTICE_TOKEN",
              help="A token made on your /me page (then URL is the server's address, e.g. https://host/).")
@lang_option
def login(url, token, lang):
    """Sign in to your class's server with your personal sign-in link (or the server's address and --token)."""
    from cli.submitting import SubmitError, login as sign_in

    try:
        credentials, classes = sign_in(url, token)
    except SubmitError as exc:
        fail(exc.message, lang)
    where = ", ".join(T("{class_name} (as {name})", class_name=c["name"], name=c["display_name"]).render(lang)
                      for c in classes)
    done = T("Signed in to {server}: {classes}. `practice submit EXERCISE [FILE]` now counts in your class.",
             server=credentials.server, classes=where)
    console.print(escape(text(done, lang)), soft_wrap=True)


@click.command()
@lang_option
def logout(lang):
    """Revoke the stored token on its server and forget it."""
    from cli.submitting import logout as sign_out

    said = T("Signed out: the token is revoked and forgotten.") if sign_out() else T("You were not signed in.")
    console.print(escape(text(said, lang)))


@click.command()
@click.argument("exercise_id", metavar="EXERCISE")
@click.argument("file", required=False, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the server's report as JSON.")
@click.option("--note", default=None, metavar="TEXT",
              help="A one-line note on this attempt (what you tried, and why), shown on your timeline.")
@exercises_option
@workspace_option
@lang_option
def submit(exercise_id, file, as_json, note, exercises_dir, workspace, lang):
    """Send FILE (default: your copy in the workspace) to your class's server, which grades it: the report shown
    is the server's, and the submission counts in your class (`practice login` first)."""
    from cli.submitting import SubmitError, load_credentials, submit_source

    if file is None:
        from cli.workspace import Workspace

        file, _ = Workspace(workspace).ensure(load(exercises_dir, exercise_id, lang), lang)
    elif not file.is_file():
        fail(T("{path}: no such file", path=str(file)), lang)
    try:
        source = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        fail(T("{path} is not UTF-8 text", path=str(file)), lang)
    try:
        credentials = load_credentials()
        if as_json:
            report = submit_source(credentials, exercise_id, source, origin="cli", note=note)
            print(report.model_dump_json(indent=2))
        else:
            report = _submit_live(credentials, exercise_id, source, file, lang, note)
    except SubmitError as exc:
        fail(exc.message, lang)
    sys.exit(0 if report.accepted else 1)


def _submit_live(credentials, exercise_id: str, source: str, file: Path, lang: str, note: str | None = None):
    """Submit, showing each check as the server reports it, then the server's report."""
    from cli.render import print_report
    from cli.submitting import submit_source

    sent = T("Sent {file} to {server} ({exercise}); its graders are grading it…", file=file.name,
             server=credentials.server, exercise=exercise_id)
    console.print(f"[dim]{escape(text(sent, lang))}[/]", soft_wrap=True)

    def on_event(event) -> None:
        if event.type == "check" and event.check is not None:
            check = event.check
            mark = "[green]✓[/]" if check.passed else "[red]✗[/]"
            title = f" — {escape(check.title)}" if check.title else ""  # the stream is in `lang` already
            console.print(f" {mark} {escape(check.name)}{title}")

    report = submit_source(credentials, exercise_id, source, origin="cli", lang=lang, on_event=on_event, note=note)
    console.print()
    print_report(console, report, file, lang=lang)
    counted = T("Graded by {server}: this submission counts in your class.", server=credentials.server)
    console.print(f"[dim]{escape(text(counted, lang))}[/]", soft_wrap=True)
    return report
