"""`practice` / `python practice/judge.py`: translate options and errors, hand the work to the judge.

    practice                          list exercises and your progress
    practice EXERCISE [FILE]          grade FILE (default: your copy in the workspace)
    practice doctor FILE [--call E]   the playground: what torch.compile does with your function and inputs
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
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from judge.exercise import ExerciseError, find_exercise, load_course
from judge.i18n import LANGS, T, text
from judge.paths import EXERCISES_DIR, WORKSPACE_DIR
from sandbox.backends import BACKENDS, SERVER_SANDBOXES

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

exercises_option = click.option("--exercises", "exercises_dir", type=click.Path(path_type=Path),
                                 default=EXERCISES_DIR, envvar="PRACTICE_EXERCISES_DIR", show_default=True,
                                 help="Folder of exercises.")
workspace_option = click.option("--workspace", type=click.Path(path_type=Path), default=WORKSPACE_DIR,
                                envvar="PRACTICE_WORKSPACE", show_default=True,
                                help="Where your own copies of the exercises live.")
sandbox_option = click.option("--sandbox", type=click.Choice(BACKENDS), default=None, envvar="PRACTICE_SANDBOX",
                              help="How submissions run (none: fresh processes, no isolation; local: warm forked "
                              "processes, no isolation; bwrap/docker: isolated). Default for one grading: the "
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


class ExerciseGroup(click.Group):
    """A group where an exercise id stands for `grade`: `practice ID [FILE]` means `practice grade ID [FILE]`.

    A word that is neither a command nor an exercise is a usage error that lists the commands (it used to
    be graded as an exercise, so `practice frobnicate --help` printed grade's help).
    """

    def resolve_command(self, ctx, args):
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


@click.group(cls=ExerciseGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
def cli(ctx):
    """A practice judge for torch.compile exercises. Run without arguments to list exercises."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_exercises)


NEEDS_CUDA = T("needs a CUDA GPU")  # web.requirements.NEEDS_CUDA, in the learner's language
GRADE_ONE = T("Grade one:")


@cli.command("list")
@exercises_option
@workspace_option
@lang_option
@click.option("--topics", is_flag=True, help="What the course covers: each exercise's section, idea and tags.")
def list_exercises(exercises_dir, workspace, lang, topics):
    """List exercises with your state: not started, failing, solved."""
    from cli.render import print_exercise_list
    from cli.workspace import Workspace

    try:
        course = load_course(exercises_dir)
    except ExerciseError as exc:
        fail(str(exc), lang)
    if topics:
        from rich.table import Table

        from cli.topics import topic_rows

        table = Table("section", "exercise", "idea", "tags")
        for row in topic_rows(course, lang):
            table.add_row(*(escape(cell) for cell in row))
        console.print(table)
        return
    from web.requirements import needs_cuda

    ws = Workspace(workspace)
    print_exercise_list(console, [(e.order, e.id, e.title.get(lang), e.difficulty, ws.status(e),
                                   NEEDS_CUDA if needs_cuda(e) else "") for e in course], lang)
    console.print(f"{escape(text(GRADE_ONE, lang))} [bold]{escape('python practice/judge.py EXERCISE [FILE]')}[/]")


@cli.command()
@click.argument("exercise_id", metavar="EXERCISE")
@click.argument("file", required=False, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--watch", is_flag=True, help="Grade again on every save.")
@click.option("--no-daemon", is_flag=True, help="Grade in fresh processes, without the background judge (which "
                                                "keeps warm workers between gradings; PRACTICE_DAEMON=0 does the "
                                                "same; `practice daemon --help`).")
@exercises_option
@workspace_option
@sandbox_option
@lang_option
def grade(exercise_id, file, as_json, watch, no_daemon, exercises_dir, workspace, sandbox, lang):
    """Grade FILE (default: your copy of the exercise in the workspace, created from the starter)."""
    from cli.terminal_grading import grade_file, watch_file
    from cli.workspace import Workspace

    exercise = load(exercises_dir, exercise_id, lang)
    ws = Workspace(workspace)
    if file is None:
        file, created = ws.ensure(exercise, lang)
        if created and not as_json:
            from cli.showing import show_exercise

            show_exercise(console, exercise, file, lang, ws)
    elif not file.is_file():
        fail(T("{path}: no such file", path=str(file)), lang)
    from web.requirements import backend_for, cannot_grade_here, cuda_missing

    if cannot_grade_here(exercise):
        fail(T("{exercise} needs a CUDA GPU ({reason}): grade it on a machine with one (the web app sends it "
               "to a GPU grader).", exercise=exercise.id, reason=cuda_missing()), lang)
    asked = sandbox
    sandbox = backend_for(exercise, sandbox or (MANY_GRADINGS_BACKEND if watch else ONE_GRADING_BACKEND))
    if watch:
        watch_file(console, exercise, file, ws, sandbox, lang=lang)
        return
    # The background judge serves the default way (its sandbox is `local`); any other --sandbox is honoured here.
    grader = None
    if not no_daemon and asked in (None, DAEMON_BACKEND) and backend_for(exercise, DAEMON_BACKEND) == DAEMON_BACKEND:
        grader = _daemon_grader(exercise, sandbox, lang)
    accepted = grade_file(console, exercise, file, ws, sandbox, as_json, lang=lang, grader=grader)
    for note in grader.notes if grader is not None else []:
        err_console.print(f"[dim]{escape(text(note, lang))}[/]", soft_wrap=True)
    sys.exit(0 if accepted else 1)


def _daemon_grader(exercise, sandbox_name: str, lang: str):
    """The background judge's client for this exercise (grading in `sandbox_name` when it cannot), or None when
    PRACTICE_DAEMON=0 turns it off."""
    from cli.daemon import DaemonGrader

    settings = _daemon_settings(lang)
    if not settings.enabled:
        return None

    def fresh():
        from judge.grading import make_sandbox

        return make_sandbox(sandbox_name)

    return DaemonGrader(exercise, settings, fresh)


def _daemon_settings(lang: str):
    from cli.daemon_protocol import DaemonSettings

    try:
        return DaemonSettings.from_env()
    except ValueError as exc:
        fail(str(exc), lang)


@cli.command("doctor")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--call", "calls", multiple=True, metavar="EXPR",
              help="A call of your function on example inputs, e.g. \"step(torch.randn(8), 2)\" (repeat it for "
                   "several calls); without it, the file's __practice__ block says what to compile (judge/doctor.py).")
@click.option("--json", "as_json", is_flag=True, help="Print what was found as JSON.")
@sandbox_option
@lang_option
def doctor_command(file, calls, as_json, sandbox, lang):
    """The playground: compile FILE's function on its example inputs and show the graph breaks, the recompiles
    with the line behind each guard, and what the compiler made of it. No verdict."""
    from cli.doctor import doctor_file
    from judge.doctor import FormError

    if not file.is_file():
        fail(T("{path}: no such file", path=str(file)), lang)
    try:
        sys.exit(doctor_file(console, file, list(calls), sandbox or ONE_GRADING_BACKEND, as_json, lang))
    except FormError as exc:
        fail(T("{path}: {error}", path=str(file), error=exc.message), lang)


@cli.command()
@click.argument("exercise_id", metavar="EXERCISE")
@exercises_option
@workspace_option
@lang_option
def hint(exercise_id, exercises_dir, workspace, lang):
    """Show the next hint for EXERCISE (hints go from gentle to explicit)."""
    from cli.workspace import Workspace

    exercise = load(exercises_dir, exercise_id, lang)
    index = Workspace(workspace).next_hint(exercise)
    if index is None:
        index = len(exercise.hints) - 1
        last = T("That was the last hint; here it is again.")
        console.print(f"[dim]{escape(text(last, lang))}[/]")
    if index < 0:
        fail(T("{exercise} has no hints", exercise=exercise.id), lang)
    label = T("Hint {number}/{count}:", number=index + 1, count=len(exercise.hints))
    console.print(f"[bold]{escape(text(label, lang))}[/] {exercise.hints[index].get(lang)}")


@cli.command()
@click.argument("exercise_id", metavar="EXERCISE")
@exercises_option
@workspace_option
@lang_option
@click.option("--graphs", is_flag=True, help="Show what the compiler made of your code in the last grading: each "
                                             "graph Dynamo captured, recompile reasons, guards, Inductor's code.")
@click.option("--cost", "cost", is_flag=True, help="Show what compiling bought in the last grading: ATen ops and "
                                                  "bytes eager, kernels and Inductor's byte estimate compiled, for "
                                                  "yours, the reference and the original.")
def show(exercise_id, exercises_dir, workspace, lang, graphs, cost):
    """Show the statement of EXERCISE, your file and the hints (with --graphs: the compiler's view; with --cost:
    the cost figures)."""
    from cli.cost_render import print_cost
    from cli.render import print_compiler_view, program, prose
    from cli.showing import show_exercise
    from cli.workspace import Workspace

    exercise = load(exercises_dir, exercise_id, lang)
    ws = Workspace(workspace)
    if graphs or cost:
        report = ws.last_report(exercise.id)
        if report is None:
            first = T("{exercise} has not been graded here yet: run `{program} {exercise}` first.",
                      exercise=exercise.id, program=program())
            console.print(f"[yellow]{prose(first, lang)}[/]", soft_wrap=True)
            sys.exit(1)
        if graphs:
            print_compiler_view(console, report.compiler, lang)
        if cost:
            print_cost(console, report.cost, lang)
        return
    path, _ = ws.ensure(exercise, lang)
    show_exercise(console, exercise, path, lang, ws)


@cli.command()
@click.argument("exercise_ids", nargs=-1, metavar="[EXERCISE...]")
@exercises_option
@sandbox_option
@lang_option
@click.option("--verbose", "-v", is_flag=True, help="Also print the raw exception of every failing proof.")
def prove(exercise_ids, exercises_dir, sandbox, lang, verbose):
    """Instructors: prove exercises (format, reference passes, starter and wrong solutions fail as pinned)."""
    from cli.proving import check_exercises

    sys.exit(check_exercises(console, exercises_dir, list(exercise_ids), sandbox or MANY_GRADINGS_BACKEND, lang,
                             verbose))


@cli.group()
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

    settings = _daemon_settings(lang)
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
        pid = stop(_daemon_settings(lang))
    except Unusable as exc:
        fail(str(exc), lang)
    said = T("Stopped the background judge (pid {pid}).", pid=pid) if pid else T("No background judge is running.")
    console.print(escape(text(said, lang)))


# The proving command's first name (a check is one hidden test of an exercise): still typed, so still served.
cli.add_command(click.Command("check", params=prove.params, callback=prove.callback, hidden=True,
                              help="The old name of `practice prove`."))


@cli.command()
@click.argument("exercise_id", metavar="ID")
@exercises_option
def new(exercise_id, exercises_dir):
    """Instructors: scaffold exercises/ID with every file and a failing hidden test to fill in."""
    from cli.scaffold import scaffold

    try:
        folder = scaffold(exercises_dir, exercise_id)
    except ExerciseError as exc:
        fail(str(exc))
    console.print(f"Created [bold]{escape(str(folder))}[/]. Fill in the files, then run: "
                  f"practice prove {exercise_id}", soft_wrap=True)


@cli.command()
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


@cli.command()
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


@cli.group()
def db():
    """The database schema: `practice db upgrade` migrates it (`practice serve` does too, on start)."""


database_url_option = click.option("--database-url", default=None, envvar="PRACTICE_DATABASE_URL",
                                   help="sqlite:///PATH or postgresql://USER:PASSWORD@HOST:5432/DB "
                                        "(default: SQLite in the data dir).")
data_dir_option = click.option("--data-dir", type=click.Path(path_type=Path), default=None,
                               envvar="PRACTICE_DATA_DIR", help="Where the SQLite database lives (default: ./data).")


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


@cli.group()
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


@cli.command("regrade")
@click.argument("exercise_id", metavar="EXERCISE")
@click.option("--class", "class_id", default=None, help="Only this class's learners (the id that ends its page's "
                                                         "address); default: every submission.")
@click.option("--all", "scope", flag_value="all", default=True, help="Every finished submission (default).")
@click.option("--latest", "scope", flag_value="latest", help="Only each learner's latest submission.")
@click.option("--reason", default="", help="Why (learners whose verdict changes read it).")
@database_url_option
@data_dir_option
@click.option("--exercises", "exercises_dir", type=click.Path(path_type=Path), default=None,
              envvar="PRACTICE_EXERCISES_DIR", help="Folder of exercises (the course the web serves).")
@click.option("--sandbox", type=click.Choice(["auto", *BACKENDS]), default=None, envvar="PRACTICE_SANDBOX",
              help="SQLite only, where this command grades: how submissions run (default auto: bwrap).")
def regrade_command(exercise_id, class_id, scope, reason, database_url, data_dir, exercises_dir, sandbox):
    """Grade EXERCISE's stored submissions again under its current version (those graded under it are skipped)."""
    from cli.course import regrade

    regrade(exercise_id, class_id, scope == "latest", reason, database_url, data_dir, exercises_dir, sandbox)


@cli.group()
def lti():
    """LTI 1.3: register the LMS platforms and deployments that launch into classes (see docs/lti.md)."""


@lti.command("add-platform")
@click.option("--issuer", required=True, help="The platform's issuer (iss), e.g. https://canvas.instructure.com.")
@click.option("--client-id", required=True, help="The client id the platform gave this tool.")
@click.option("--auth-login-url", required=True, help="The platform's OIDC authorization URL.")
@click.option("--token-url", required=True, help="The platform's OAuth 2 token URL (for grade passback).")
@click.option("--jwks-url", required=True, help="The platform's public keyset URL.")
@database_url_option
@data_dir_option
def lti_add_platform(issuer, client_id, auth_login_url, token_url, jwks_url, database_url, data_dir):
    """Register an LMS that launches this tool."""
    from cli.course import add_platform

    add_platform(issuer, client_id, auth_login_url, token_url, jwks_url, database_url, data_dir)


@lti.command("add-deployment")
@click.option("--issuer", required=True, help="The registered platform's issuer.")
@click.option("--client-id", default=None, help="Its client id (needed when the issuer is registered twice).")
@click.option("--deployment-id", required=True, help="The deployment id the platform shows for this tool.")
@click.option("--class", "class_id", required=True, help="The class its launches join (the id ending its page).")
@database_url_option
@data_dir_option
def lti_add_deployment(issuer, client_id, deployment_id, class_id, database_url, data_dir):
    """Send a deployment's launches into a class (registering it again moves it to another class)."""
    from cli.course import add_deployment

    add_deployment(issuer, client_id, deployment_id, class_id, database_url, data_dir)


@lti.command("show")
@click.option("--base-url", default="http://127.0.0.1:8000", show_default=True,
              help="Where `practice serve` is reached from browsers.")
@database_url_option
@data_dir_option
def lti_show(base_url, database_url, data_dir):
    """The URLs and keys to enter in the LMS, and the platforms registered here."""
    from cli.course import show

    show(base_url, database_url, data_dir)
@cli.command()
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


@cli.command()
@lang_option
def logout(lang):
    """Revoke the stored token on its server and forget it."""
    from cli.submitting import logout as sign_out

    said = T("Signed out: the token is revoked and forgotten.") if sign_out() else T("You were not signed in.")
    console.print(escape(text(said, lang)))


@cli.command()
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


def main() -> None:
    cli(prog_name="practice")


if __name__ == "__main__":
    main()
