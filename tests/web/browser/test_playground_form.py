"""The playground page with a file that has no `__practice__` block: it is told what to add, in the page's
language, and nothing after that claims a result (no "no graph break" when nothing ran). Nothing is compiled,
so no warm sandbox is needed.

Screenshots: playground-no-form-en.png and playground-no-form-zh.png in the screenshots folder.
"""

from __future__ import annotations

import json

import pytest

from tests.web.browser.conftest import SCREENSHOTS, open_page

pytestmark = [pytest.mark.browser]
NO_BLOCK = "import torch\n\n\ndef step(x, n):\n    return x * n\n"


@pytest.mark.parametrize("lang, told, all_clear", [
    ("en", "no __practice__ block", ["No graph break", "No recompile", "Graph breaks"]),
    ("zh", "没有 __practice__ 块", ["没有 graph break", "没有重新编译", "Graph break", "图中断"]),
])
def test_a_file_without_the_form_is_told_what_to_add_and_nothing_more(browser, book_live, page_errors, lang, told,
                                                                       all_clear):
    context, page = open_page(browser, page_errors, width=1400, height=900)
    page.add_init_script(f"localStorage.setItem('torch-practice:draft:playground', {json.dumps(NO_BLOCK)});")
    page.goto(f"{book_live.url}/playground?lang={lang}")
    page.locator("#run").click()
    page.locator("#report .summary").wait_for(timeout=60_000)
    shown = page.locator("#report").inner_text()
    assert told in shown and "--call" not in shown
    assert not [words for words in all_clear if words in shown], shown
    assert page.locator("#report .pg-section").count() == 0 and page.locator("#report .compiler-view").count() == 0
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".result").screenshot(path=str(SCREENSHOTS / f"playground-no-form-{lang}.png"))
    assert not page_errors, page_errors
    context.close()
