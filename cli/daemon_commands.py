"""`practice daemon status|stop`: the background judge."""

from __future__ import annotations

import click
from rich.markup import escape

from cli.options import (
    console,
    fail,
    lang_option,
)
from judge.reports.i18n import T, text


def daemon_settings(lang: str):
    from cli.daemon_protocol import DaemonSettings

    try:
        return DaemonSettings.from_env()
    except ValueError as exc:
        fail(str(exc), lang)


@click.group()
def daemon():
    """The background judge: `practice EXERCISE` starts it after a first grading and grades through it from then
    on (warm workers: no torch import per grading). It stops after 15 idle minutes (PRACTICE_DAEMON_IDLE_SECONDS);
    --no-daemon or PRACTICE_DAEMON=0 grades without it."""


DAEMON_STATES = {"warming up": T("warming up"), "ready": T("ready"), "failed": T("failed")}


@daemon.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON (null when none runs).")
@lang_option
def daemon_status(as_json, lang):
    """Whether the background judge runs: its pid, state, gradings, and whether it runs this code."""
    import json
    import time

    from cli.daemon import log_path, status
    from cli.daemon_protocol import SOCKET_NAME, Unusable

    settings = daemon_settings(lang)
    try:
        found = status(settings)
    except Unusable as exc:
        fail(str(exc), lang)
    if as_json:
        print(json.dumps(found, indent=2))
        return
    if found is None:
        console.print(escape(text(T("No background judge is running."), lang)))
        return
    state = DAEMON_STATES.get(found.get("state"), T.same(str(found.get("state"))))
    running = T("The background judge is running: pid {pid}, {state}, {gradings} grading(s) in the {minutes} "
                "minutes since it started; it stops after {idle} idle minutes.", pid=found.get("pid"),
                state=state, gradings=found.get("gradings"),
                minutes=f"{(time.time() - float(found.get('started') or time.time())) / 60:.0f}",
                idle=f"{float(found.get('idle_seconds') or 0) / 60:g}")
    console.print(escape(text(running, lang)), soft_wrap=True)
    if not found["current"]:
        other = T("It runs other code than this command (an edit or an upgrade since it started): the next "
                  "grading replaces it.")
        console.print(f"[yellow]{escape(text(other, lang))}[/]", soft_wrap=True)
    where = T("Socket: {socket}; log: {log}", socket=str(settings.folder() / SOCKET_NAME), log=str(log_path(settings)))
    console.print(f"[dim]{escape(text(where, lang))}[/]", soft_wrap=True)


@daemon.command("stop")
@lang_option
def daemon_stop(lang):
    """Stop the background judge (the next grading runs in fresh processes and starts it again)."""
    from cli.daemon import stop
    from cli.daemon_protocol import Unusable

    try:
        pid = stop(daemon_settings(lang))
    except Unusable as exc:
        fail(str(exc), lang)
    said = T("Stopped the background judge (pid {pid}).", pid=pid) if pid else T("No background judge is running.")
    console.print(escape(text(said, lang)))
