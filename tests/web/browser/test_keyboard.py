"""The exercise page with the keyboard alone, at desktop and phone widths (fixture course, fake grader)."""

from __future__ import annotations

import pytest

from tests.web.browser.conftest import open_page
from tests.web.conftest import FakeGrader
from tests.web.live import LiveServer
from web.app import create_app

pytestmark = pytest.mark.browser


@pytest.fixture
def live(settings):
    with LiveServer(create_app(settings, grade=FakeGrader())) as server:
        yield server


def focused(page) -> str:
    return page.evaluate("() => { const e = document.activeElement; return (e.id || e.className || e.tagName); }")


def test_keyboard_only_solve(browser, live, shots, page_errors):
    context, page = open_page(browser, page_errors)
    page.goto(live.url + "/")
    shots(page, "list")
    # Tab from the top of the list page to the exercise link, Enter follows it.
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.getAttribute('href')") == "/exercises/add-one":
            break
    page.keyboard.press("Enter")
    page.wait_for_selector(".cm-content")
    # Tab reaches the hint button; Enter reveals one hint at a time.
    for _ in range(15):
        page.keyboard.press("Tab")
        if focused(page) == "show-hint":
            break
    assert focused(page) == "show-hint"
    page.keyboard.press("Enter")
    assert page.locator(".hint:visible").count() == 1
    # Tab on into the editor, edit with the keyboard, Tab indents, Ctrl+Enter submits.
    for _ in range(10):
        page.keyboard.press("Tab")
        if "cm-content" in focused(page):
            break
    assert "cm-content" in focused(page)
    page.keyboard.press("Control+End")
    page.keyboard.press("Tab")  # indents inside the editor rather than leaving it
    assert "cm-content" in focused(page)
    assert page.evaluate("() => localStorage.getItem('torch-practice:draft:add-one')").endswith("\n    ")
    page.keyboard.press("Shift+Home")
    page.keyboard.press("Backspace")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")
    page.keyboard.type("return x + 1")
    assert page.evaluate("() => localStorage.getItem('torch-practice:draft:add-one')") == \
        "def add_one(x):\n    return x + 1\n"
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".status.ok", timeout=15000)
    shots(page, "accepted")
    page.locator("#reference-code").wait_for(state="visible")
    # Escape, then Tab, leaves the editor for the rest of the page.
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert "cm-content" not in focused(page)
    # The raw output is one click away, and shown as text: the fake run printed "<b>printed</b>".
    raw = page.locator("details.raw")
    raw.locator("summary").focus()
    page.keyboard.press("Enter")
    assert raw.locator("pre").first.inner_text() == "<b>printed</b>"
    assert raw.locator("b").count() == 0
    # A previous submission opens from the history, with its code one (confirmed) step away.
    page.on("dialog", lambda dialog: dialog.accept())
    page.locator("#history .view-submission").first.focus()
    page.keyboard.press("Enter")
    load = page.get_by_role("button", name="载入这份代码")
    load.focus()
    page.keyboard.press("Enter")
    assert "return x + 1" in page.locator(".cm-content").inner_text()
    shots(page, "history-opened")
    assert page_errors == []
    context.close()


def test_phone_width_stacks_and_fits(browser, live, shots, page_errors):
    context, page = open_page(browser, page_errors, width=390, height=844)
    page.goto(live.url + "/exercises/add-one?lang=en")
    page.wait_for_selector(".cm-content")
    shots(page, "phone")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    left = page.locator(".exercise .left").bounding_box()
    right = page.locator(".exercise .right").bounding_box()
    assert right["y"] >= left["y"] + left["height"] - 1  # stacked, not side by side
    page.locator("#submit").wait_for(state="visible")
    assert page_errors == []
    context.close()


def test_api_docs_render_without_csp_errors(browser, live, shots, page_errors):
    context, page = open_page(browser, page_errors)
    page.goto(live.url + "/docs")
    page.wait_for_selector(".opblock")
    assert page.locator(".opblock").count() >= 7
    shots(page, "docs")
    assert page_errors == []
    context.close()
