"""The `practice` group: an exercise id stands for `grade`."""

from __future__ import annotations

from pathlib import Path

import click

from cli.options import args_lang
from judge.reports.i18n import T, text

# Former names of commands, still understood (not listed): scripts written before the playground had one name.
ALIASES = {"doctor": "playground"}


class ExerciseGroup(click.Group):
    """A group where an exercise id stands for `grade`: `practice ID [FILE]` means `practice grade ID [FILE]`.

    A word that is neither a command nor an exercise is a usage error that lists the commands (it used to
    be graded as an exercise, so `practice frobnicate --help` printed grade's help).
    """

    def resolve_command(self, ctx, args):
        if args and args[0] in ALIASES:
            args = [ALIASES[args[0]], *args[1:]]
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            folder = self._exercises_dir(ctx, args)
            if folder is None or (folder / args[0] / "exercise.toml").is_file():
                args = ["grade", *args]
            elif not ctx.resilient_parsing:  # shell completion: let click find nothing, quietly
                unknown = T("no such command or exercise '{word}'.\n"
                            "Commands: {commands} (`practice COMMAND --help` for each).\n"
                            "Exercises are the folders of {folder}: `practice list` lists them.",
                            word=args[0], commands=", ".join(self.list_commands(ctx)), folder=folder)
                raise click.UsageError(text(unknown, args_lang(args)), ctx)
        return super().resolve_command(ctx, args)

    def _exercises_dir(self, ctx, args) -> Path | None:
        """The exercises folder `grade` would use for these args (its --exercises, the environment or the
        default), read by grade's own parser; None when they do not parse, so that grade reports why."""
        try:
            grade_ctx = self.commands["grade"].make_context("grade", list(args), parent=ctx, resilient_parsing=True)
        except click.ClickException:
            return None
        folder = grade_ctx.params.get("exercises_dir")
        return Path(folder) if folder is not None else None
