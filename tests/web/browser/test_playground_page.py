"""The playground in a real browser, through the real runner and verifier: open it from an exercise page, run
the example, see the graph break with PyTorch's registry id and the compiles' timeline, in both languages.

Screenshots: playground-en.png and playground-zh.png, and the cost panel alone (playground-cost-en.png,
playground-cost-zh.png), in the screenshots folder (PRACTICE_SCREENSHOTS).
"""

from __future__ import annotations

import re

import pytest

from tests.web.browser.conftest import SCREENSHOTS, open_page
from tests.web.real_course import BOOK_EXERCISE

pytestmark = [pytest.mark.browser, pytest.mark.slow]
RUN_MS = 300_000  # a cold torch import plus compiles on a busy 2-core machine


@pytest.fixture(autouse=True)
def warm_playground(book_live, local):
    """The playground's runs fork from the session's warm local sandbox (a cold torch import per run is slow)."""
    from web.playground import PlaygroundRuns

    app = book_live.server.config.app
    app.state.playground = PlaygroundRuns()
    app.state.playground.sandbox = local
    yield
    app.state.playground.sandbox = None  # the session's, not the app's to close


@pytest.mark.parametrize("lang, link, breaks, pytorch", [
    ("en", "Try this in the playground", "Graph breaks", "PyTorch says:"),
    ("zh", "在试验场里试试", "图中断", "PyTorch 的说法："),
])
def test_run_the_example_from_an_exercise_page(browser, book_live, page_errors, lang, link, breaks, pytorch):
    context, page = open_page(browser, page_errors, width=1400, height=1000)
    page.goto(f"{book_live.url}/exercises/{BOOK_EXERCISE}?lang={lang}")
    page.get_by_role("link", name=link).click()
    page.wait_for_url(f"**/playground?exercise={BOOK_EXERCISE}")
    assert "__practice__" in page.locator(".cm-content").inner_text()
    page.goto(f"{book_live.url}/playground?lang={lang}")  # the example: a data-dependent branch in a loop
    page.locator("#run").click()
    page.locator(".pg-section h3", has_text=breaks).first.wait_for(timeout=RUN_MS)
    shown = page.locator("#report").inner_text()
    assert "GB0170" in shown and pytorch in shown
    assert page.locator(".timeline-table tbody tr").count() >= 2
    page.locator(".pytorch-words").first.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"playground-{lang}.png"), full_page=True)
    # the first call's cost section, in the exercise page's panel (static/cost.js): yours only, no reference
    panel = page.locator("#report .cost-view")
    assert panel.locator(".cost-table tbody tr").count() == 1 and re.search(r"\d+ B\b", panel.inner_text())
    panel.scroll_into_view_if_needed()
    panel.screenshot(path=str(SCREENSHOTS / f"playground-cost-{lang}.png"))
    assert not page_errors, page_errors
    context.close()
