"""What the `practice` commands share: the consoles, the common options, the language, errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from judge.parent.exercise import ExerciseError, find_exercise
from judge.reports.i18n import LANGS, T, text
from judge.shared.paths import EXERCISES_DIR, WORKSPACE_DIR
from sandbox.backends import SANDBOXES

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

exercises_option = click.option("--exercises", "exercises_dir", type=click.Path(path_type=Path),
                                 default=EXERCISES_DIR, envvar="PRACTICE_EXERCISES_DIR", show_default=True,
                                 help="Folder of exercises.")
workspace_option = click.option("--workspace", type=click.Path(path_type=Path), default=WORKSPACE_DIR,
                                envvar="PRACTICE_WORKSPACE", show_default=True,
                                help="Where your own copies of the exercises live.")
sandbox_option = click.option("--sandbox", type=click.Choice(SANDBOXES), default=None, envvar="PRACTICE_SANDBOX",
                              callback=lambda ctx, param, name: None if name == "auto" else name,
                              help="How submissions run (none: fresh processes, no isolation; local: warm forked "
                              "processes, no isolation; bwrap/docker: isolated). Default (auto) for one grading: the "
                              "background judge's warm local processes, none before it runs or with --no-daemon; "
                              "local for --watch and prove.")
# One grading needs no warm workers of its own (starting them costs ~2 s of CPU more than two fresh processes): it
# runs fresh, or in those the background judge keeps between commands; a re-grade on save, or the many gradings of
# `prove`, start from forks of warm workers of their own.
ONE_GRADING_BACKEND, MANY_GRADINGS_BACKEND = "none", "local"
# The background judge (cli/daemon.py) keeps warm workers between one-shot gradings: its sandbox.
DAEMON_BACKEND = "local"


def locale_lang() -> str:
    """zh when the locale says Chinese (LC_ALL, else LC_MESSAGES, else LANG, as POSIX orders them), else en."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if os.environ.get(name):
            return "zh" if os.environ[name].lower().startswith("zh") else "en"
    return "en"


def default_lang() -> str:
    """PRACTICE_LANG when it names a language, else the locale's (click reads the variable itself for a command
    given on the command line, but not for `practice` alone, which invokes `list`)."""
    return os.environ["PRACTICE_LANG"] if os.environ.get("PRACTICE_LANG") in LANGS else locale_lang()


lang_option = click.option("--lang", type=click.Choice(LANGS), default=default_lang, envvar="PRACTICE_LANG",
                           show_default="PRACTICE_LANG, else from the locale: LC_ALL, LC_MESSAGES or LANG",
                           help="Language of what you read: statements, hints, reports, messages.")


def args_lang(args: list[str]) -> str:
    """The language these (not yet parsed) args ask for, as `--lang` would read it: the option, else
    PRACTICE_LANG, else the locale."""
    for i, arg in enumerate(args):
        if arg.startswith("--lang=") and arg.split("=", 1)[1] in LANGS:
            return arg.split("=", 1)[1]
        if arg == "--lang" and i + 1 < len(args) and args[i + 1] in LANGS:
            return args[i + 1]
    return default_lang()




ERROR = T("error:")


def fail(message, lang: str = "en") -> None:
    """`error: MESSAGE` (a T or a plain string, in `lang`) on stderr, then exit 2. The message is printed as
    written (no markup) and never wrapped: a path in it stays whole for the learner to copy, and the terminal
    folds a long line itself."""
    err_console.print(f"[red]{escape(text(ERROR, lang))}[/] {escape(text(message, lang))}", soft_wrap=True)
    sys.exit(2)


def load(exercises_dir: Path, exercise_id: str, lang: str = "en"):
    try:
        return find_exercise(exercises_dir, exercise_id)
    except ExerciseError as exc:
        fail(str(exc), lang)
