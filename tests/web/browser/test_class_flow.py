"""A class in a real browser, in Chinese and in English: the scenario of issue 11.

An instructor signs in and creates a class; two learners join through its link (the second first picks a
name that is taken and is told what to fix); one solves the exercise, the other gets a graph break. The
instructor's table shows both, the CSV download matches the table, the exercise's page shows the verdicts
and the failing check with the learner's submission, and that submission opens with its source and report.

A fake grader stands in for the judge (real grading costs 5-10 s of CPU here): it publishes progress like
the judge and returns realistic reports, an ACCEPTED one and a GRAPH_BREAK one whose check fails with the
graph-break diagnostic (line, reason, explanation) that the real judge produces.
"""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.reports.report import CheckResult, GraphBreakDiagnostic, ProgressEvent, Report, SourceLocation, Verdict
from tests.web.browser.conftest import open_page
from tests.web.conftest import FIXTURE_COURSE
from tests.web.live import LiveServer
from web.app import create_app
from web.store import Submission

pytestmark = pytest.mark.browser
PASSWORD = "correct horse"
SOLVES = "def add_one(x):\n    return x + 1\n"
BREAKS = "def add_one(x):\n    print(x)\n    return x + 1\n"
GRAPH_CHECK = "test_one_graph"
BREAK_MESSAGE = ("graph break at line 2 (`print(x)`): print() writes to the terminal, so Dynamo cannot put it in a "
                 "graph. Remove the print, or move it out of the compiled function.")
WORDS = {  # what each language's pages say, and the names the learners choose
    "zh": {"learners": ("李雷", "韩梅梅"), "accepted": "通过", "graph_break": "图中断", "class": "torch.compile 春季班",
           "taken": "班里已经有人叫 李雷", "progress": "进度"},
    "en": {"learners": ("Lei Li", "Meimei Han"), "accepted": "Accepted", "graph_break": "Graph break",
           "class": "torch.compile, spring", "taken": "Someone in this class is already called Lei Li",
           "progress": "Progress"},
}


class ClassGrader:
    """Realistic reports without the judge: ACCEPTED for `SOLVES`, GRAPH_BREAK (failing `test_one_graph`) otherwise."""

    def __call__(self, submission: Submission, publish: Callable[[ProgressEvent], None]) -> Report:
        publish(ProgressEvent(type="running", total_checks=2))
        numbers = CheckResult(name="test_matches_eager[small]", title="Matches eager", passed=True, duration_s=0.42)
        publish(ProgressEvent(type="check", check=numbers, total_checks=2))
        if submission.source == SOLVES:
            graph = CheckResult(name=GRAPH_CHECK, title="One graph, no breaks", passed=True, duration_s=1.31)
        else:
            diagnostic = GraphBreakDiagnostic(
                reason="Unsupported: builtin print [LazyVariableTracker] False",
                explanation="print() writes to the terminal, so Dynamo cannot put it in a graph.",
                location=SourceLocation(file="solution.py", line=2, text="print(x)", function="add_one"))
            graph = CheckResult(name=GRAPH_CHECK, title="One graph, no breaks", passed=False,
                                verdict=Verdict.GRAPH_BREAK, message=BREAK_MESSAGE, duration_s=1.27,
                                diagnostics=[diagnostic])
        publish(ProgressEvent(type="check", check=graph, total_checks=2))
        verdict = Verdict.ACCEPTED if graph.passed else Verdict.GRAPH_BREAK
        summary = "All 2 checks passed." if graph.passed else BREAK_MESSAGE
        return Report(exercise_id=submission.exercise_id, verdict=verdict, summary=summary, checks=[numbers, graph],
                      duration_s=3.4, torch_version="2.13.0", sandbox="fake")


def two_exercise_course(tmp_path: Path) -> Path:
    """The fixture course plus a second exercise (a copy of add-one), so the table has two columns."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE_COURSE, course)
    second = course / "add-two"
    shutil.copytree(course / "add-one", second)
    toml = (second / "exercise.toml").read_text(encoding="utf-8")
    toml = toml.replace('id = "add-one"', 'id = "add-two"').replace("order = 1", "order = 2")
    (second / "exercise.toml").write_text(toml.replace('zh = "加一"', 'zh = "再加一"').replace(
        'en = "Add one"', 'en = "Add one again"'), encoding="utf-8")
    return course


@pytest.fixture
def live(settings, tmp_path):
    app = create_app(settings.model_copy(update={"exercises_dir": two_exercise_course(tmp_path)}),
                     grade=ClassGrader())
    app.state.classes.add_instructor("teacher", PASSWORD)
    with LiveServer(app) as server:
        yield server


def table_from_page(page) -> list[dict]:
    """The class table as shown: per learner row, its name and each cell's data, in the page's order."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('#progress tbody tr')).map((tr) => ({
        learner: tr.querySelector('th').innerText.trim(),
        solved: tr.querySelector('[data-col=solved]').innerText.trim(),
        attempts: tr.querySelector('[data-col=attempts]').innerText.trim(),
        cells: Object.fromEntries(Array.from(tr.querySelectorAll('td.cell')).map((td) => [td.dataset.exercise, {
            solved: td.dataset.solved, attempts: td.dataset.attempts, 'last verdict': td.dataset.lastVerdict,
            'first solved at': td.dataset.firstSolved}]))}))""")


def join(browser, page_errors, url: str, name: str, password: str = "", expect_error: str | None = None):
    context, page = open_page(browser, page_errors)
    page.goto(url)
    page.fill("input[name=display_name] >> nth=0", name)
    if password:
        page.fill("input[name=password] >> nth=0", password)
    page.click("#join")
    if expect_error:
        page.wait_for_selector("#join-error")
        assert expect_error in page.locator("#join-error").inner_text()
        return context, page
    page.wait_for_selector("#memberships")
    return context, page


def submit(page, base: str, source: str, outcome: str) -> None:
    """Open add-one with `source` as the saved draft, submit it, wait for the verdict (`ok` or `bad`)."""
    page.goto(base + "/exercises/add-one")
    page.evaluate("(source) => localStorage.setItem('torch-practice:draft:add-one', source)", source)
    page.reload()
    page.wait_for_selector(".cm-content")
    page.click("#submit")
    page.wait_for_selector(f".status.{outcome}", timeout=20000)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_class_from_creation_to_failure_statistics(browser, live, shots, page_errors, tmp_path, lang):
    words = WORDS[lang]
    first, second = words["learners"]

    # The instructor signs in (a wrong password first: the page says what to check) and creates the class.
    teacher_context, teacher = open_page(browser, page_errors)
    teacher.goto(f"{live.url}/signin?lang={lang}")
    teacher.fill("input[name=username]", "teacher")
    teacher.fill("input[name=password]", "not the password")
    teacher.click("button[type=submit].primary")
    teacher.wait_for_selector("#signin-error")
    shots(teacher, "wrong-password")
    teacher.fill("input[name=password]", PASSWORD)
    teacher.click("button[type=submit].primary")
    teacher.wait_for_url(f"{live.url}/teach")
    teacher.fill("input[name=name]", words["class"])
    teacher.click("form[action='/teach/classes'] button")
    teacher.wait_for_selector("#join-url")
    assert teacher.locator("#class-name").inner_text() == words["class"]
    join_url = teacher.locator("#join-url").input_value()
    assert join_url.startswith(live.url + "/join/")
    shots(teacher, "class-created")

    # Two learners join in browsers of their own; the second first picks the first one's name.
    first_context, learner1 = join(browser, page_errors, f"{join_url}?lang={lang}", first)
    shots(learner1, "joined")
    second_context, learner2 = join(browser, page_errors, f"{join_url}?lang={lang}", first,
                                    expect_error=words["taken"])
    shots(learner2, "name-taken")
    learner2.fill("input[name=display_name] >> nth=0", second)
    learner2.fill("input[name=password] >> nth=0", "meimei's password")
    learner2.click("#join")
    learner2.wait_for_selector("#memberships")

    submit(learner1, live.url, SOLVES, "ok")
    assert learner1.locator("#status").inner_text() == words["accepted"]
    shots(learner1, "solved")
    submit(learner2, live.url, BREAKS, "bad")
    assert learner2.locator("#status").inner_text() == words["graph_break"]
    learner2.locator(".diag.graph-break").first.wait_for(state="visible")
    shots(learner2, "graph-break")

    # The instructor's table: one solved, one graph break; the second exercise untouched.
    teacher.reload()
    teacher.wait_for_selector("#progress")
    shown = {row["learner"]: row for row in table_from_page(teacher)}
    assert set(shown) == {first, second}
    solved, broke = shown[first]["cells"]["add-one"], shown[second]["cells"]["add-one"]
    assert (solved["solved"], solved["attempts"], solved["last verdict"]) == ("yes", "1", "ACCEPTED")
    assert solved["first solved at"].startswith("20")
    assert (broke["solved"], broke["attempts"], broke["last verdict"], broke["first solved at"]) == \
        ("no", "1", "GRAPH_BREAK", "")
    assert shown[first]["cells"]["add-two"]["attempts"] == "0"
    row = teacher.locator(f"#progress tbody tr[data-learner='{second}']")
    assert words["graph_break"] in row.locator("td[data-exercise=add-one]").inner_text()
    assert words["progress"] in teacher.locator("#progress-title").inner_text()
    shots(teacher, "table")

    # Sorted by the number solved, most first; the CSV download is the table, in the same order.
    teacher.click("th[data-key=solved] a.sort")
    teacher.wait_for_url("**sort=solved&dir=desc")
    rows = table_from_page(teacher)
    assert [r["learner"] for r in rows] == [first, second]
    with teacher.expect_download() as download:
        teacher.click("#csv")
    text = Path(download.value.path()).read_bytes().decode("utf-8-sig")
    lines = list(csv.DictReader(io.StringIO(text)))  # one line per learner and exercise
    assert [(line["learner"], line["exercise id"]) for line in lines] == \
        [(r["learner"], exercise) for r in rows for exercise in r["cells"]]
    for row in rows:
        mine = [line for line in lines if line["learner"] == row["learner"]]
        assert sum(line["solved"] == "yes" for line in mine) == int(row["solved"])
        assert sum(int(line["attempts"]) for line in mine) == int(row["attempts"])
        for line in mine:
            assert {field: line[field] for field in row["cells"][line["exercise id"]]} == \
                row["cells"][line["exercise id"]], line["exercise id"]
    shots(teacher, "sorted-by-solved")

    # The exercise's page: the verdicts and the check that failed, with the failing submission as a sample.
    teacher.click("th[data-key=add-one] a:not(.sort)")
    teacher.wait_for_selector("#verdicts")
    verdicts = teacher.evaluate("""() => Object.fromEntries(Array.from(document.querySelectorAll('#verdicts tbody tr'))
        .map((tr) => [tr.dataset.verdict, tr.querySelector('td.num').innerText]))""")
    assert verdicts == {"ACCEPTED": "1", "GRAPH_BREAK": "1"}
    failing = teacher.locator(f"#failing tr[data-check='{GRAPH_CHECK}']")
    assert failing.count() == 1 and teacher.locator("#failing tbody tr").count() == 1
    assert second in failing.inner_text() and "print()" in failing.inner_text()
    assert words["graph_break"] in failing.inner_text()
    shots(teacher, "exercise-failures")

    # The sample opens the learner's submission with its source and its report (drawn by report.js).
    failing.locator("ul.samples a").first.click()
    teacher.wait_for_selector("#learner-name")
    assert teacher.locator("#learner-name").inner_text() == second
    opened = teacher.locator("li.submission details[open]").first
    assert "print(x)" in opened.locator("pre.source").inner_text()
    opened.locator(".report .diag.graph-break").first.wait_for(state="visible")
    assert BREAK_MESSAGE.replace("`", "") in opened.locator(".report").inner_text()  # code spans shown as code
    shots(teacher, "learner-submission")

    # No CSP violation, no script error on any page; the browser notes only the two refused forms.
    assert page_errors == [f"Failed to load resource: the server responded with a status of {status}"
                           for status in ("401 (Unauthorized)", "400 (Bad Request)")]
    for context in (teacher_context, first_context, second_context):
        context.close()
