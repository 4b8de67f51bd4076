"""The book's exercise solved in three attempts in a real browser, graded by the real judge: the learner's timeline
shows each attempt's facts and the diff from the one before, a note is kept, the questions about the accepted file
are answered (one wrong, then right), and the instructor's table and the learner's page show it; Chinese first,
then English. Screenshots in test-artifacts/screenshots/test_three_attempts_timeline_questions_and_the_table/.
"""

from __future__ import annotations

import re

import pytest

from tests.web.browser.conftest import open_page
from tests.web.live import LiveServer
from tests.web.real_course import BOOK_EXERCISE, book_course, item_line

pytestmark = [pytest.mark.browser, pytest.mark.slow]
expect = pytest.importorskip("playwright.sync_api").expect
GRADING_MS = 300_000  # a cold torch import plus compiles on a busy 2-core machine
PASSWORD = "correct horse"
WRONG_FIX = "h = torch.where(h.sum() >= 0, h * 2, h)"  # doubles h when the sum is exactly 0: WRONG_ANSWER
FIX = "h = torch.where(h.sum() > 0, h * 2, h)"
NOTE = "> 而不是 >=：和恰好为 0 时不翻倍 <b>"


@pytest.fixture
def live(tmp_path):
    from web.app import create_app
    from web.settings import Settings

    # Three gradings: the warm forks of `local` cost less than three pairs of fresh processes (40 -> 22 CPU-s).
    settings = Settings(data_dir=tmp_path / "data", exercises_dir=book_course(tmp_path, time_factor=4),
                        sandbox="local", allow_unsandboxed=True, workers=1, secret_key="browser")
    app = create_app(settings)
    with LiveServer(app) as server:
        server.app = app
        yield server


def replace_line(page, line: int, lines_below: int, text: str) -> None:
    """Select `line` and the `lines_below` after it in the editor and type `text` instead."""
    page.click(".cm-content")
    page.keyboard.press("Control+Home")
    for _ in range(line - 1 + lines_below):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("End")
    for _ in range(lines_below):
        page.keyboard.press("Shift+ArrowUp")
    page.keyboard.press("Shift+Home")
    page.keyboard.type(text)


def submit_and_wait(page, outcome: str, attempts: int) -> None:
    page.click("#submit")
    page.wait_for_selector(f".status.{outcome}", timeout=GRADING_MS)
    # expect() polls from outside the page: the page's CSP forbids the eval a string predicate would need.
    expect(page.locator("#timeline-box li.attempt")).to_have_count(attempts, timeout=30_000)


def attempt(page, number: int):
    return page.locator(f"#timeline-box li.attempt[data-number='{number}']")


def test_three_attempts_timeline_questions_and_the_table(browser, live, shots, page_errors):
    state = live.app.state
    teacher_row = state.classes.add_instructor("teacher", PASSWORD)
    klass = state.classes.create_class(teacher_row.id, "编译班 · spring")

    context, page = open_page(browser, page_errors)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{live.url}/join/{klass.join_code}")
    page.fill("input[name=display_name] >> nth=0", "李雷")
    page.click("#join")
    page.goto(f"{live.url}/exercises/{BOOK_EXERCISE}")
    page.wait_for_selector(".cm-content")
    assert page.locator("#timeline-box .timeline-empty").is_visible()
    assert page.locator("#questions").is_hidden()  # asked after an accepted file only
    starter = page.evaluate("() => JSON.parse(document.getElementById('boot').textContent).starter")
    line = item_line(starter)

    # 1: the starter as it is: a graph break on the .item() line.
    submit_and_wait(page, "bad", 1)
    first = attempt(page, 1)
    assert first.get_attribute("data-verdict") == "GRAPH_BREAK"
    assert first.locator(".fact-breaks").get_attribute("data-count") == "1"
    assert first.locator(".break").get_attribute("data-line") == str(line)
    assert re.fullmatch(r"GB\d{4}", first.locator(".break").get_attribute("data-gb"))
    assert first.locator(".attempt-diff").count() == 0  # nothing before it

    # 2: torch.where with >=: one graph, wrong numbers when the sum is exactly 0.
    replace_line(page, line, 1, WRONG_FIX)
    submit_and_wait(page, "bad", 2)
    second = attempt(page, 2)
    assert second.get_attribute("data-verdict") == "WRONG_ANSWER"
    assert second.locator(".fact-breaks").get_attribute("data-count") == "0"
    second.locator(".attempt-diff summary").click()
    diff = second.locator("pre.diff").inner_text()
    assert "+    " + WRONG_FIX in diff and "-    if h.sum().item() > 0:" in diff
    assert "+1 −2" in second.locator(".attempt-diff summary").inner_text()

    # 3: > instead of >=: accepted.
    replace_line(page, line, 0, FIX)
    submit_and_wait(page, "ok", 3)
    third = attempt(page, 3)
    assert third.get_attribute("data-verdict") == "ACCEPTED"
    assert third.locator(".fact-graphs").get_attribute("data-count") == "1"
    third.locator(".attempt-diff summary").click()
    assert third.locator(".d-del").inner_text().strip() == "-    " + WRONG_FIX
    assert third.locator(".d-add").inner_text().strip() == "+    " + FIX
    third.locator("input[name=note]").fill(NOTE)
    third.locator(".note-form button").click()
    page.wait_for_selector(f"#timeline-box li.attempt[data-number='3'] input[value='{NOTE}']")
    shots(page, "timeline-zh")
    page.locator("#timeline").screenshot(path=str(shots.folder / "timeline-zh-section.png"))

    # The questions about the accepted file: asked once, answered by compiling it on the trusted side.
    page.locator("#questions").wait_for(state="visible")
    page.click("#ask-questions")
    page.wait_for_selector("#question-list li.question", timeout=GRADING_MS)
    accepted_id = third.get_attribute("id").removeprefix("attempt-")
    measured = {a.question.kind: a.question for a in state.questions.asked(accepted_id)}
    assert set(measured) == {"revert", "kernels", "node_line"}
    kernels = page.locator("#question-list li.question[data-kind='kernels']")
    kernels.locator("input[type=number]").fill(str(int(measured["kernels"].answer) + 5))
    kernels.locator("button").click()
    kernels.locator(".question-feedback.bad").wait_for()
    shots(page, "question-wrong-zh")
    kernels.locator("input[type=number]").fill(measured["kernels"].answer)
    kernels.locator("button").click()
    kernels.locator(".question-feedback.ok").wait_for()
    assert "1" in kernels.locator(".question-wrong").inner_text()  # one wrong answer, kept
    revert = page.locator("#question-list li.question[data-kind='revert']")
    revert.locator("input[type=number]").fill(measured["revert"].answer)
    revert.locator("button").click()
    revert.locator(".question-feedback.ok").wait_for()
    node = page.locator("#question-list li.question[data-kind='node_line']")
    node.locator(f"input[value='{measured['node_line'].answer}']").check()
    node.locator("button").click()
    node.locator(".question-feedback.ok").wait_for()
    assert str(line) == measured["node_line"].answer  # the fix's line put torch.where into the graph
    page.locator("#questions").scroll_into_view_if_needed()
    shots(page, "questions-answered-zh")

    # The same page in English.
    page.goto(f"{live.url}/exercises/{BOOK_EXERCISE}?lang=en")
    page.wait_for_selector("#question-list li.question[data-solved='true']")
    assert page.locator("#timeline-title").inner_text() == "Your timeline"
    assert "Attempt 3" in attempt(page, 3).inner_text() and "graph breaks: 1" in attempt(page, 1).inner_text()
    assert page.locator("#question-list li.question[data-solved='true']").count() == 3
    shots(page, "timeline-and-questions-en")

    # The instructor: the table shows the attempts, the time to the accepted file and the questions answered.
    teacher_context, teacher = open_page(browser, page_errors)
    teacher.goto(f"{live.url}/signin")
    teacher.fill("input[name=username]", "teacher")
    teacher.fill("input[name=password]", PASSWORD)
    teacher.click("button[type=submit].primary")
    teacher.goto(f"{live.url}/teach/classes/{klass.id}")
    cell = teacher.locator(f"td[data-exercise='{BOOK_EXERCISE}']")
    assert cell.get_attribute("data-attempts") == "3" and cell.get_attribute("data-solved") == "yes"
    assert int(cell.locator(".time-to-solve").get_attribute("data-seconds")) > 0
    assert cell.locator(".questions-cell").get_attribute("data-answered") == "3"
    teacher.click(f"#question-rules li[data-exercise='{BOOK_EXERCISE}'] button")
    teacher.wait_for_selector(f"#question-rules li[data-exercise='{BOOK_EXERCISE}'][data-needed='yes']")
    assert teacher.locator(f"td[data-exercise='{BOOK_EXERCISE}']").get_attribute("data-solved") == "yes"
    shots(teacher, "class-table-zh")
    teacher.goto(f"{live.url}/teach/classes/{klass.id}?lang=en")
    shots(teacher, "class-table-en")

    # The learner's page: the same timeline, the note as text.
    teacher.click("#progress a:has-text('李雷')")
    teacher.wait_for_selector("#timeline li.attempt[data-number='3']")
    assert teacher.locator("#timeline li.attempt").count() == 3
    assert teacher.locator("#timeline li.attempt[data-number='3'] .note q").inner_text() == NOTE
    assert teacher.locator("#timeline .note-form").count() == 0
    shots(teacher, "learner-timeline-en")
    teacher.goto(teacher.url.split("?")[0] + "?lang=zh")
    assert "第 3 次" in teacher.locator("#timeline").inner_text()
    shots(teacher, "learner-timeline-zh")
    assert not page_errors
    teacher_context.close()
    context.close()
