"""The book's exercise in a real browser, through the real grader: the scenario of the web issue.

Open graph-break-step, type the torch.where fix, submit, see Accepted; submit the original, see the
graph break marked on the `.item()` line; switch to English; reload and find the draft kept.
"""

from __future__ import annotations

import re

import pytest

from tests.web.browser.conftest import open_page
from tests.web.real_course import BOOK_EXERCISE, item_line

pytestmark = [pytest.mark.browser, pytest.mark.slow]
GRADING_MS = 300_000  # a cold torch import plus compiles on a busy 2-core machine
FIX = "h = torch.where(h.sum() > 0, h * 2, h)"
DRAFT_KEY = f"torch-practice:draft:{BOOK_EXERCISE}"


def draft(page) -> str:
    return page.evaluate(f"() => localStorage.getItem('{DRAFT_KEY}')")


def go_to_line(page, line: int) -> None:
    page.keyboard.press("Control+Home")
    for _ in range(line - 1):
        page.keyboard.press("ArrowDown")


def test_solve_then_break_then_english_then_reload(browser, book_live, shots, page_errors):
    context, page = open_page(browser, page_errors)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{book_live.url}/exercises/{BOOK_EXERCISE}")
    page.wait_for_selector(".cm-content")
    starter = page.evaluate("() => JSON.parse(document.getElementById('boot').textContent).starter")
    line = item_line(starter)
    shots(page, "opened")

    # Type the fix: select from the `if ...item()` line through its body and type the torch.where form.
    page.click(".cm-content")
    go_to_line(page, line + 1)
    page.keyboard.press("End")
    page.keyboard.press("Shift+ArrowUp")
    page.keyboard.press("Shift+Home")
    page.keyboard.type(FIX)
    lines = starter.splitlines()
    expected = "\n".join(lines[:line - 1] + ["    " + FIX] + lines[line + 1:]) + "\n"
    assert draft(page) == expected
    shots(page, "typed-fix")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".status.busy")
    page.wait_for_selector(".status.ok", timeout=GRADING_MS)
    assert page.locator(".check.failed").count() == 0
    assert page.locator(".check.passed").count() >= 5
    page.locator("#reference-code").wait_for(state="visible")
    assert "torch.where" in page.locator("#reference-code").inner_text()
    shots(page, "accepted")
    # The compiler's view, accepted or not: the captured graph with the learner's own line above its nodes.
    page.click(".compiler-view > summary")
    first_graph = page.locator(".compiler-view details.graph pre").first
    assert "torch.where" in first_graph.inner_text() and "# File: solution.py:" in first_graph.inner_text()
    assert "编译器把你的代码变成了什么" in page.locator(".compiler-view > summary").inner_text()
    first_graph.scroll_into_view_if_needed()
    shots(page, "compiler-view")

    # Submit the original: reset (confirmed), click Submit, see the break on the .item() line.
    page.click("#reset")
    assert draft(page) == starter
    page.click("#submit")
    page.wait_for_selector(".status.bad", timeout=GRADING_MS)
    assert page.locator(".check.failed").count() >= 1
    marked = page.locator(".cm-break-line")
    assert marked.count() == 1 and ".item()" in marked.inner_text()
    marker = page.locator(".cm-break-marker")
    assert marker.count() == 1
    tooltip = marker.get_attribute("title")  # the reason, on hover, in the page's language
    dynamo_said = page.locator(".diag.graph-break p.reason").first.text_content()  # PyTorch's English, in details
    assert tooltip.startswith("GB") and re.search("[\u4e00-\u9fff]", tooltip) and dynamo_said not in tooltip
    gutter_row = marker.bounding_box()["y"]
    line_row = marked.bounding_box()["y"]
    assert abs(gutter_row - line_row) < 8  # the marker sits on that line
    page.locator(".diag.graph-break").first.wait_for(state="visible")
    page.locator(".diag.graph-break").first.scroll_into_view_if_needed()
    shots(page, "graph-break")

    # Keep a draft of our own, then switch the whole UI to English.
    page.click(".cm-content")
    page.keyboard.press("Control+End")
    page.keyboard.type("# my draft")
    page.click("#lang-switch")
    page.wait_for_selector("html[lang=en]")
    page.wait_for_selector(".cm-content")
    assert page.locator("#submit").inner_text() == "Submit"
    assert page.locator("#reset").inner_text() == "Reset to starter"
    assert page.locator("#history li").count() == 2
    assert "Graph break" in page.locator("#history").inner_text()
    assert "Accepted" in page.locator("#history").inner_text()
    shots(page, "english")

    page.reload()
    page.wait_for_selector(".cm-content")
    assert "# my draft" in page.locator(".cm-content").inner_text()
    assert draft(page).endswith("# my draft")
    assert page.locator("html").get_attribute("lang") == "en"
    page.wait_for_selector(".status.bad")  # the latest result is shown again...
    assert page.locator("#status").inner_text() == "Graph break"
    assert page.locator(".cm-break-marker").count() == 0  # ...but the edited draft is not marked
    shots(page, "reloaded-draft-kept")

    page.set_viewport_size({"width": 390, "height": 844})
    shots(page, "phone-width")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert page_errors == []
    context.close()
