"""`%%practice` in a real notebook: executed by nbclient in a kernel of this virtualenv, graded in fresh
processes. The book's exercise: the original code breaks the graph on the cell's own `.item()` line, the fix
is accepted, and the HTML lists the same checks as the report the web shows."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from judge.reports.report import Report, localized
from practice.magic import REPORT_MIME
from tests.notebook.conftest import execute
from tests.web.real_course import book_course

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "exercises" / "graph-break-step"
MAGIC = "%%practice graph-break-step"


def last_output(cell) -> dict:
    (output,) = [o for o in cell.outputs if o.output_type in ("display_data", "execute_result")][-1:]
    return output["data"]


def checks_in(html: str) -> list[str]:
    return re.findall(r'<li class="tp-check [^"]*" data-check="([^"]+)"', html)


@pytest.mark.slow
def test_the_book_exercise_solved_through_the_magic(kernel_name, tmp_path, monkeypatch):
    # the book's exercise alone, with a longer time limit: a busy machine must not make it TIME_LIMIT here
    monkeypatch.setenv("PRACTICE_EXERCISES_DIR", str(book_course(tmp_path, time_factor=4)))
    starter, fixed = (BOOK / "starter.py").read_text(), (BOOK / "solutions" / "reference.py").read_text()
    broken_cell, fixed_cell = f"{MAGIC} --lang en\n{starter}", f"{MAGIC} --lang zh\n{fixed}"
    nb = execute(["%load_ext practice", broken_cell, fixed_cell, "%practice hint graph-break-step --lang en",
                  "%practice list --lang en", "%practice graph-break-step"], kernel_name, tmp_path)
    loaded, broken, accepted, hint, listing, no_cell = nb.cells
    assert not any(o.output_type == "error" for o in loaded.outputs)

    data = last_output(broken)
    report = Report.model_validate(data[REPORT_MIME])
    html = data["text/html"]
    item_line = next(n for n, line in enumerate(broken_cell.splitlines(), 1) if ".item()" in line)
    assert report.verdict.value == "GRAPH_BREAK"
    breaks = [d for c in report.checks for d in c.diagnostics if d.kind == "graph_break"]
    assert breaks and {d.location.line for d in breaks} == {item_line}
    assert f'data-cell-line="{item_line}"' in html and f"cell line {item_line}" in html
    assert re.search(rf'<tr class="tp-hit"><td class="tp-ln">{item_line}</td><td>\s*if h\.sum\(\)\.item\(\)', html)
    assert 'data-verdict="GRAPH_BREAK"' in html and "Graph break · GRAPH_BREAK" in html
    # The same checks, in the same order, with the same titles as the report the web page renders.
    assert checks_in(html) == [c.name for c in report.checks]
    for check in localized(report, "en").checks:
        assert check.title in unescape(html)
    assert "GRAPH_BREAK" in data["text/plain"] and f"❱  {item_line}" in data["text/plain"]
    assert "What the compiler made of your code" in html and "Hints" in html

    data = last_output(accepted)
    report = Report.model_validate(data[REPORT_MIME])
    assert report.verdict.value == "ACCEPTED" and 'data-verdict="ACCEPTED"' in data["text/html"]
    assert checks_in(data["text/html"]) == [c.name for c in report.checks]
    assert all(f'data-check="{c.name}" data-passed="true"' in data["text/html"] for c in report.checks)
    assert "通过 · ACCEPTED" in data["text/html"]  # --lang zh

    assert "Hint 1/" in last_output(hint)["text/plain"]
    assert re.search(r"graph-break-step\s+.*solved", last_output(listing)["text/plain"])
    assert len(last_output(listing)["text/plain"].splitlines()) == 1  # the course of PRACTICE_EXERCISES_DIR
    said = "".join(o.text for o in no_cell.outputs if o.output_type == "stream" and o.name == "stderr")
    assert "UsageError" in said and "grades the cell below it" in said  # IPython's usage error: no traceback
