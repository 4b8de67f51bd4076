"""`practice` / `python practice/judge.py`: translate options and errors, hand the work to the judge.

    practice                          list exercises and your progress
    practice EXERCISE [FILE]          grade FILE (default: your copy in the workspace)
    practice playground FILE [--call E]  what torch.compile does with your function and inputs (`doctor`: old name)
    practice hint EXERCISE            show the next hint
    practice show EXERCISE            the statement, your file and the hints left
    practice prove [EXERCISE...]      instructors: prove every exercise (`check` is its old name)
    practice new ID                   instructors: scaffold an exercise
    practice daemon status|stop       the background judge that keeps one-shot gradings warm
    practice serve                    the web UI
    practice worker --database-url U  a grader for `practice serve` on PostgreSQL (any machine)
    practice db upgrade               migrate the database schema
    practice admin add-instructor U   an instructor account for classes in the web UI
    practice login LINK               sign in to your class's server (your personal sign-in link)
    practice submit EXERCISE [FILE]   send FILE to that server: graded there, it counts in your class
    practice logout                   revoke the token and forget it

Exit codes: 0 accepted (or success), 1 not accepted, 2 usage or exercise error.
"""

from __future__ import annotations

import os
import sys

import click
from rich.markup import escape

from cli import author_commands, class_commands, daemon_commands, learner_commands, server_commands, submit_commands
from cli.group import ExerciseGroup
from cli.options import args_lang, err_console
from judge.reports.i18n import T, text


@click.group(cls=ExerciseGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
def cli(ctx):
    """A practice judge for torch.compile exercises. Run without arguments to list exercises."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(learner_commands.list_exercises)


for command in (learner_commands.list_exercises, learner_commands.grade, learner_commands.playground_command,
                learner_commands.hint, learner_commands.show, author_commands.prove, author_commands.check,
                author_commands.new, daemon_commands.daemon, server_commands.serve, server_commands.worker,
                server_commands.db, server_commands.admin, class_commands.regrade_command, class_commands.lti,
                submit_commands.login, submit_commands.logout, submit_commands.submit):
    cli.add_command(command)


WARNING = T("warning:")


def main() -> None:
    """The `practice` command: a warning per unknown `PRACTICE_*` variable first (cli/environment.py), then the
    command."""
    from cli.environment import unknown

    lang = args_lang(sys.argv[1:])
    for warning in unknown(os.environ):
        err_console.print(f"[yellow]{escape(text(WARNING, lang))}[/] {escape(text(warning, lang))}", soft_wrap=True)
    cli(prog_name="practice")


if __name__ == "__main__":
    main()
