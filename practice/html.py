"""A report as the notebook shows it: HTML (the verdict, each check, the graph break quoted from the cell,
hints, the compiler's view, the cost where the report has one), plain text, and the exercise list.

Rendering only: the report is the judge's (`judge.reports.report.Report`), the same the web and the CLI show. Every
value from the report or the cell is escaped (Jinja2 autoescape); line numbers are the cell's own (the
solution file is the cell with its `%%practice` line kept as a comment, so both count alike).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from judge.reports.i18n import T, text
from judge.reports.report import VERDICT_NAME, Report, localized
from judge.shared import tiers
from practice import words

TEMPLATES = Path(__file__).parent / "templates"
QUOTE_AROUND = 2  # lines of the cell shown above and below a graph break


def _prose(message: str) -> Markup:
    """A judge message: `code` spans become <code>; everything else is text."""
    parts = str(message).split("`")
    return Markup("").join(Markup("<code>{}</code>").format(p) if i % 2 else escape(p) for i, p in enumerate(parts))


def _markdown(source: str) -> Markup:
    from web.render import markdown_html  # raw HTML in it is shown as text (html=False)

    return Markup(markdown_html(source))


_ENV = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]),
                   trim_blocks=True, lstrip_blocks=True)
_ENV.filters.update(prose=_prose, markdown=_markdown)


def _words(lang: str, report: Report) -> dict:
    from cli import render as cli
    from cli.cost_render import COST_TITLE

    said = {name: text(value, lang) for name, value in {
        "self_checked": cli.SELF_CHECKED, "self_checked_why": cli.SELF_CHECKED_WHY, "warning": cli.WARNING,
        "same_failure": cli.SAME_FAILURE, "program_output": cli.PROGRAM_OUTPUT,
        "dynamo_reason": cli.DYNAMO_REASON, "guard_failures": cli.GUARD_FAILURES, "details": cli.DETAILS,
        "graph": cli.GRAPH, "compiler_view": cli.COMPILER_VIEW, "recompiles": cli.RECOMPILES,
        "guards": cli.GUARDS, "no_view": cli.NO_VIEW, "hints": words.HINTS, "cost": COST_TITLE}.items()}
    graphs = report.compiler.graphs if report.compiler else []
    said["graph_n"] = [text(T("Graph {n}", n=i), lang) for i in range(1, len(graphs) + 1)]
    said["from_lines"] = [text(T("from your lines {lines}", lines=", ".join(map(str, g.learner_lines))), lang)
                          for g in graphs]
    kernels = report.compiler.kernels if report.compiler else []
    said["kernel_n"] = [text(T("Code Inductor generated ({n}):", n=i), lang) for i in range(1, len(kernels) + 1)]
    return said


def _cost_html(report: Report, lang: str) -> Markup:
    """The report's cost section as a table (the rows `practice show ID --cost` prints), or nothing."""
    if getattr(report, "cost", None) is None:
        return Markup("")
    from cli.cost_render import COLUMNS, GPU_COLUMNS
    from judge.costs import view as cost_view

    rows = cost_view.rows(report.cost)
    timed = any(r.gpu_time for r in rows)
    columns = COLUMNS + (GPU_COLUMNS if timed else ())
    head = Markup("").join(Markup("<th>{}</th>").format(text(c, lang)) for c in columns)
    body = []
    for row in rows:
        if row.unavailable is not None:
            cells = [text(row.label, lang), text(row.unavailable, lang)] + [""] * (len(columns) - 2)
        else:
            cells = [text(row.label, lang), row.eager_ops, row.eager_bytes, row.kernels, row.compiled_bytes,
                     row.saving, row.compiling] + ([row.gpu_time, row.cpu_per_step] if timed else [])
        body.append(Markup("<tr data-who=\"{}\">{}</tr>").format(
            row.who, Markup("").join(Markup("<td>{}</td>").format(c) for c in cells)))
    names = Markup("").join(Markup("<p class=\"tp-muted\"><b>{}</b>: {}</p>").format(text(r.label, lang),
                                                                                    r.kernel_names)
                            for r in rows if r.kernel_names)
    note = Markup("<p class=\"tp-muted\">{}</p>").format(text(cost_view.note(report.cost), lang))
    if any(r.compiling for r in rows):
        note += Markup("<p class=\"tp-muted\">{}</p>").format(text(cost_view.compile_note(), lang))
    return Markup("<table class=\"tp-cost\"><tr>{}</tr>{}</table>{}{}").format(head, Markup("").join(body), names,
                                                                               note)


def report_html(report: Report, source: str, lang: str, *, hints: list[str] = (), origin: str = "") -> str:
    """The report in `lang` as one self-contained HTML fragment; `source` is the graded cell (for quotes)."""
    shown = localized(report, lang)
    lines = source.splitlines()
    said = _words(lang, shown)

    def quote(line: int) -> Markup:
        first, last = max(1, line - QUOTE_AROUND), min(len(lines), line + QUOTE_AROUND)
        rows = Markup("").join(
            Markup('<tr class="{}"><td class="tp-ln">{}</td><td>{}</td></tr>').format(
                "tp-hit" if n == line else "", n, lines[n - 1]) for n in range(first, last + 1))
        return Markup('<table class="tp-quote">{}</table>').format(rows) if rows else Markup("")

    def mismatch_label(d) -> str:
        label = T("first mismatches of {what}:", what=d.what) if d.what else T("first mismatches:")
        return text(label, lang)

    def mismatch_rows(d) -> str:
        return text(T("; "), lang).join(
            text(T("{index}: expected {expected}, got {actual}", index=m.index, expected=m.expected,
                   actual=m.actual), lang) for m in d.first_mismatches[:3])

    from cli.render import same_failure_as

    helpers = dict(words=said, cell_line=lambda n: text(words.at_line(n), lang), quote=quote,
        mismatch_label=mismatch_label, mismatch_rows=mismatch_rows)
    diagnostics_template = _ENV.get_template("diagnostics.html")

    def diagnostics(ds, said_already: str) -> Markup:
        return Markup(diagnostics_template.render(ds=ds, said=said_already or "", **helpers))

    # As the web page: the first failure open, later ones folded (often the same cause), a repeated message
    # said once; the summary left out when it only repeats the first failure's message.
    seen: set[str] = set()
    checks, first = [], shown.first_failure()
    for check in shown.checks:
        same = "" if check.passed else text(same_failure_as(check.same_as), lang) if check.same_as \
            else said["same_failure"] if check.message in seen else ""
        seen.add(check.message)
        checks.append((check, same, first is not None and check is not first))
    summary_repeats = bool(first and first.message and shown.summary.endswith(first.message))
    footer = text(T("{seconds} s · torch {torch} · sandbox {sandbox}", seconds=format(report.duration_s, ".1f"),
                    torch=report.torch_version, sandbox=shown.sandbox), lang)
    verdict_name = text(tiers.PASSED_TITLE if tiers.waits_for_gpu(report)
                        else VERDICT_NAME.get(report.verdict, T.same(report.verdict.value)), lang)
    return _ENV.get_template("report.html").render(
        r=shown, lang=lang, checks=checks, summary_repeats=summary_repeats, verdict_name=verdict_name,
        verdict_code=tiers.standing(report), waiting=tiers.waits_for_gpu(report),
        hints=[] if report.accepted else list(hints), cost=_cost_html(shown, lang), origin=origin, footer=footer,
        diagnostics=diagnostics, **helpers)


def report_text(report: Report, source: str, lang: str, width: int = 100) -> str:
    """The report as the terminal shows it (`practice EXERCISE`), as plain text, lines quoted from the cell."""
    import tempfile

    from rich.console import Console

    from cli.render import print_report

    out = io.StringIO()
    # force_jupyter=False: in a kernel, rich would otherwise show each line as an output of its own
    console = Console(file=out, width=width, color_system=None, highlight=False, force_terminal=False,
                      force_jupyter=False)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cell.py"
        path.write_text(source, encoding="utf-8")
        print_report(console, report, path, lang=lang)
    return re.sub(r"[ \t]+\n", "\n", out.getvalue())


def progress_html(message: str) -> str:
    return str(Markup('<div class="tp-progress" style="color:#57606a;font-family:system-ui,sans-serif">⏳ {}'
                      '</div>').format(message))


def exercises_html(rows: list[tuple], lang: str) -> str:
    """rows: (order, id, title, difficulty, state, note) as `practice list` prints them."""
    from cli.render import STATE_TEXT

    head = "".join(f"<th style='text-align:left;padding:.2em .8em .2em 0'>{escape(text(c, lang))}</th>"
                   for c in (T.same("#"), T("id"), T("title"), T("difficulty"), T("state")))
    body = []
    for order, exercise_id, title, difficulty, state, note in rows:
        note_html = f" <span style='color:#9a6700'>({escape(text(note, lang))})</span>" if note else ""
        colour = {"solved": "#1e8449", "failing": "#c0392b"}.get(state, "#6e7781")
        body.append(f"<tr><td>{order}</td><td><code>{escape(exercise_id)}</code></td><td>{escape(title)}{note_html}"
                    f"</td><td>{'★' * difficulty}</td><td style='color:{colour}'>"
                    f"{escape(text(STATE_TEXT.get(state, T.same(state)), lang))}</td></tr>")
    return (f"<table class='tp-list' style='font-family:system-ui,sans-serif;font-size:14px'><tr>{head}</tr>"
            + "".join(body) + "</table>")


def hint_html(label: str, hint: str, note: str = "") -> str:
    extra = Markup("<p style='color:#6e7781'>{}</p>").format(note) if note else Markup("")
    return str(Markup("<div class='tp-hint' style='font-family:system-ui,sans-serif;font-size:14px'>{}"
                      "<b>{}</b> {}</div>").format(extra, label, _markdown(hint)))
