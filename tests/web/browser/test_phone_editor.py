"""The editor at a phone's width, where the statement comes first and the editor opens below the fold."""

from __future__ import annotations

import pytest

from tests.web.browser.conftest import open_page
from tests.web.conftest import FakeGrader
from tests.web.live import LiveServer
from tests.web.real_course import BOOK_EXERCISE, book_course
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.browser

# Each code line's top and height, and those of its line number (the gutter's first element is a hidden
# spacer that only sizes the gutter).
ROWS = """() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, height: r.height}; };
  return {
    lines: [...document.querySelectorAll('.cm-content .cm-line')].map(box),
    numbers: [...document.querySelectorAll('.cm-lineNumbers .cm-gutterElement')]
      .filter((e) => e.style.visibility !== 'hidden').map((e) => ({text: e.textContent, ...box(e)})),
  };
}"""
# Two animation frames: CodeMirror measures in one, so its layout is settled once the second one runs.
FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


@pytest.fixture
def live(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", exercises_dir=book_course(tmp_path), sandbox="none",
                        allow_unsandboxed=True, workers=1, secret_key="browser")
    with LiveServer(create_app(settings, grade=FakeGrader())) as server:
        yield server


def test_line_numbers_line_up_with_the_code_at_phone_width(browser, live, shots, page_errors):
    context, page = open_page(browser, page_errors, width=390, height=844)
    page.goto(f"{live.url}/exercises/{BOOK_EXERCISE}?lang=en")
    page.wait_for_selector(".cm-content")
    page.evaluate(FRAMES)
    editor = page.locator("#editor").bounding_box()
    assert editor["y"] > 844, "the editor should open below the fold here, as on the phone of issue 13"
    rows = page.evaluate(ROWS)
    # The page as it opened (a full-page shot does not scroll, so the editor is still unmeasured if it was).
    shots(page, "phone-editor-below-the-fold")
    page.screenshot(path=str(shots.folder / "editor.png"), full_page=True,
                    clip={"x": 0, "y": editor["y"] - 8, "width": 390, "height": editor["height"] + 16})

    lines, numbers = rows["lines"], rows["numbers"]
    assert len(lines) >= 9 and [n["text"] for n in numbers] == [str(i) for i in range(1, len(lines) + 1)]
    misplaced = [(number["text"], round(number["top"] - line["top"], 1), round(number["height"] - line["height"], 1))
                 for number, line in zip(numbers, lines)
                 if abs(number["top"] - line["top"]) > 1 or abs(number["height"] - line["height"]) > 1]
    assert misplaced == [], f"(line, top offset px, height difference px) of numbers off their lines: {misplaced}"
    assert page.evaluate("() => window.scrollY") == 0  # lining the gutter up did not scroll the page
    assert page_errors == []
    context.close()
