"""`%practice` / `%%practice`: IPython magics over the judge (registered by `%load_ext practice`).

    %%practice EXERCISE [--lang zh|en] [--submit [--note "..."]] [--text | --json]
    (your solution: the rest of the cell)

    %practice list                 the exercises, with your state (as `practice list`)
    %practice hint EXERCISE        the next hint, gentle to explicit

The cell is graded in fresh processes (`practice.cell_grading`), or with `--submit` by your class's server
(`practice login` first): then the server's report is shown and the submission counts in the class, with
`--note` as its one-line note on the learner's timeline (docs/timeline.md). The
output carries three forms: HTML (what Jupyter shows), plain text, and the report's JSON under
`application/vnd.torch-practice.report+json` (`--json` shows the JSON itself, `--text` the text only).
"""

from __future__ import annotations

import json
import shlex

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display

from judge.reports.i18n import LANGS, T, text
from practice import words

REPORT_MIME = "application/vnd.torch-practice.report+json"


def _parse(line: str) -> tuple[list[str], dict]:
    """The words and options of a magic line; `UsageError` (IPython's own: no traceback) when malformed."""
    try:
        parts = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"{exc}: {line}") from None
    args, options, i = [], {"lang": None, "submit": False, "form": "all", "note": None}, 0
    while i < len(parts):
        part = parts[i]
        if part.startswith("--lang"):
            value = part.split("=", 1)[1] if "=" in part else (parts[i + 1] if i + 1 < len(parts) else "")
            i += 0 if "=" in part else 1
            if value not in LANGS:
                raise UsageError(f"--lang takes one of {', '.join(LANGS)}, not {value!r}")
            options["lang"] = value
        elif part == "--submit":
            options["submit"] = True
        elif part.startswith("--note"):
            if "=" not in part and i + 1 >= len(parts):
                raise UsageError("--note takes a one-line note (quote it): --note \"what I tried\"")
            options["note"] = part.split("=", 1)[1] if "=" in part else parts[i + 1]
            i += 0 if "=" in part else 1
        elif part in ("--text", "--json"):
            options["form"] = part[2:]
        elif part.startswith("-"):
            raise UsageError(f"unknown option {part}: " + text(words.USAGE, "en"))
        else:
            args.append(part)
        i += 1
    if options["note"] is not None and not options["submit"]:
        raise UsageError("--note goes with --submit: a note is kept on your class server's timeline")
    return args, options


@magics_class
class PracticeMagics(Magics):
    """The magics; the course is found as the CLI finds it (PRACTICE_EXERCISES_DIR, else the shipped one)."""

    @line_cell_magic
    def practice(self, line: str, cell: str | None = None):
        """`%%practice EXERCISE` grades the cell; `%practice list`; `%practice hint EXERCISE`."""
        args, options = _parse(line)
        lang = options["lang"] or _default_lang()
        if cell is None:
            if args[:1] == ["list"] and len(args) == 1:
                return self._list(lang)
            if args[:1] == ["hint"] and len(args) == 2:
                return self._hint(args[1], lang)
            if len(args) == 1:
                raise UsageError(text(words.NEEDS_CELL, lang))
            raise UsageError(text(words.USAGE, lang))
        if len(args) != 1:
            raise UsageError(text(words.USAGE, lang))
        # The solution file is the cell with its magic line kept as a comment: line N of the file is line N
        # of the cell as the notebook numbers it.
        source = f"# %%practice {line.strip()}\n{cell}"
        self._grade(args[0], source, lang, options)

    # ---- grading -----------------------------------------------------------------------------------------
    def _grade(self, exercise_id: str, source: str, lang: str, options: dict) -> None:
        from practice.html import progress_html

        exercise = _exercise(exercise_id, lang)
        handle = display({"text/html": progress_html(""), "text/plain": ""}, raw=True, display_id=True)
        done: list = []

        def on_event(event) -> None:
            if event.type == "check" and event.check is not None:
                done.append(event.check)
            if event.type in ("check", "running"):
                total = event.total_checks or len(done)
                last = done[-1].name if done else "…"
                message = text(T.join([start, words.progress(len(done), total, sum(not c.passed for c in done),
                                                             last)]), lang)
                handle.update({"text/html": progress_html(message), "text/plain": message}, raw=True)

        if options["submit"]:
            from cli.submitting import SubmitError, load_credentials, submit_source

            try:
                credentials = load_credentials()
            except SubmitError as exc:
                raise UsageError(text(exc.message, lang)) from None
            start = words.submitting(credentials.server, exercise.id)
            handle.update({"text/html": progress_html(text(start, lang)), "text/plain": text(start, lang)}, raw=True)
            try:
                report = submit_source(credentials, exercise.id, source, origin="notebook", lang=lang,
                                       on_event=on_event, note=options["note"])
            except SubmitError as exc:
                handle.update({"text/plain": ""}, raw=True)
                raise UsageError(text(exc.message, lang)) from None
            origin = text(words.server_verdict(credentials.server), lang)
        else:
            from judge.shared.paths import EXERCISES_DIR
            from practice.cell_grading import GradingFailed, grade_fresh

            start = words.grading(exercise.id)
            handle.update({"text/html": progress_html(text(start, lang)), "text/plain": text(start, lang)}, raw=True)
            try:
                report = grade_fresh(exercise.id, source, exercises_dir=EXERCISES_DIR, on_event=on_event)
            except GradingFailed as exc:
                handle.update({"text/plain": ""}, raw=True)
                raise UsageError(str(exc)) from None
            _record(exercise, report)
            origin = text(words.LOCAL_VERDICT, lang)
        handle.update(bundle(report, source, lang, options["form"], hints=[h.get(lang) for h in exercise.hints],
                             origin=origin), raw=True)

    # ---- list and hints ------------------------------------------------------------------------------------
    def _list(self, lang: str) -> None:
        from cli.workspace import Workspace
        from judge.parent.exercise import ExerciseError, load_course
        from judge.parent.requirements import NEEDS_CUDA, needs_cuda
        from judge.shared.paths import EXERCISES_DIR, WORKSPACE_DIR
        from practice.html import exercises_html

        try:
            course = load_course(EXERCISES_DIR)
        except ExerciseError as exc:
            raise UsageError(str(exc)) from None
        ws = Workspace(WORKSPACE_DIR)
        rows = [(e.order, e.id, e.title.get(lang), e.difficulty, ws.status(e),
                 NEEDS_CUDA if needs_cuda(e) else "") for e in course]
        plain = "\n".join(f"{o:>2}  {i:<28} {t}  {'*' * d}  {s}" for o, i, t, d, s, _ in rows)
        display({"text/html": exercises_html(rows, lang), "text/plain": plain}, raw=True)

    def _hint(self, exercise_id: str, lang: str) -> None:
        from cli.workspace import Workspace
        from judge.shared.paths import WORKSPACE_DIR
        from practice.html import hint_html

        exercise = _exercise(exercise_id, lang)
        index = Workspace(WORKSPACE_DIR).next_hint(exercise)
        note = ""
        if index is None:
            index, note = len(exercise.hints) - 1, text(words.LAST_HINT, lang)
        if index < 0:
            raise UsageError(text(words.no_hints(exercise.id), lang))
        label = text(words.hint_n(index + 1, len(exercise.hints)), lang)
        hint = exercise.hints[index].get(lang)
        display({"text/html": hint_html(label, hint, note), "text/plain": f"{note}\n{label}: {hint}".strip()},
                raw=True)


def bundle(report, source: str, lang: str, form: str = "all", *, hints=(), origin: str = "") -> dict:
    """The output's forms: HTML, plain text and the report's JSON (`form`: all, text or json)."""
    from practice.html import report_html, report_text

    data = json.loads(report.model_dump_json())
    plain = report_text(report, source, lang)
    if form == "json":
        return {"application/json": data, "text/plain": json.dumps(data, ensure_ascii=False, indent=2)}
    if form == "text":
        return {"text/plain": plain}
    return {"text/html": report_html(report, source, lang, hints=hints, origin=origin), "text/plain": plain,
            REPORT_MIME: data}


def _default_lang() -> str:
    from cli.options import default_lang

    return default_lang()


def _exercise(exercise_id: str, lang: str):
    from judge.parent.exercise import ExerciseError, find_exercise
    from judge.shared.paths import EXERCISES_DIR

    try:
        return find_exercise(EXERCISES_DIR, exercise_id)
    except ExerciseError as exc:
        raise UsageError(f"{exc} (`%practice list` lists the exercises; the course is {EXERCISES_DIR}, "
                         "PRACTICE_EXERCISES_DIR picks another)") from None


def _record(exercise, report) -> None:
    """Progress in the workspace, as `practice EXERCISE` keeps it (`%practice list` and the CLI read it)."""
    from cli.workspace import Workspace
    from judge.shared.paths import WORKSPACE_DIR
    from judge.shared.tiers import standing

    ws = Workspace(WORKSPACE_DIR)
    ws.record(exercise.id, standing(report))  # a passed CPU tier is not solved (judge/shared/tiers.py)
    ws.save_report(exercise.id, report)
