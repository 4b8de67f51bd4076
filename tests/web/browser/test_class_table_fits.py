"""The class table over the whole course, at a phone's width and at a laptop's, in both languages.

The page never scrolls sideways: the table scrolls inside its own box, the learners' names stay in view
(a sticky first column), every exercise column can be scrolled to, and the headers are the exercises' numbers
with the full title beside them (a `title` and the legend). The class's exercise page and the playground fit
the phone too. Learners submit through the HTTP API to the fake grader (the judge is not what is tested).
"""

from __future__ import annotations

import httpx
import pytest

from judge.shared.paths import EXERCISES_DIR
from tests.web.browser.conftest import open_page
from tests.web.conftest import CORRECT, WRONG, FakeGrader, wait_done
from tests.web.live import LiveServer
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.browser
PASSWORD = "correct horse"
LEARNERS = ("李雷", "Meimei Han-Wilkinson", "Ann")
WIDTHS = {"phone": (390, 844), "laptop": (1280, 800)}

FITS = "() => document.documentElement.scrollWidth <= window.innerWidth"
# What sticks out of the window, outside the boxes that scroll (for the message of a failed FITS).
WIDE = """() => Array.from(document.querySelectorAll('body *'))
  .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.table-scroll'))
  .slice(0, 8).map((e) => `${e.tagName}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""
# The table's box scrolled to its end: where its last exercise column and its first (sticky) column lie.
SCROLLED = """() => {
  const box = document.getElementById('progress-box');
  box.scrollLeft = box.scrollWidth;
  const rect = (e) => e.getBoundingClientRect();
  const heads = document.querySelectorAll('#progress thead th.ex-col');
  const last = heads[heads.length - 1], name = document.querySelector('#progress tbody th');
  return {box: {left: rect(box).left, right: rect(box).right}, overflows: box.scrollWidth > box.clientWidth,
          last: {left: rect(last).left, right: rect(last).right}, name: rect(name).left, scrolled: box.scrollLeft,
          sticky: [name, document.querySelector('#progress thead th')].map((e) => getComputedStyle(e).position),
          columns: heads.length, titles: Array.from(heads).map((th) => th.title)};
}"""


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """The real course (every exercise a column), a class of three learners who tried the first, a middle and
    the last exercise."""
    tmp = tmp_path_factory.mktemp("fits")
    settings = Settings(data_dir=tmp / "data", exercises_dir=EXERCISES_DIR, sandbox="none", allow_unsandboxed=True,
                        workers=1, secret_key="browser")
    app = create_app(settings, grade=FakeGrader())
    teacher = app.state.classes.add_instructor("teacher", PASSWORD)
    klass = app.state.classes.create_class(teacher.id, "torch.compile 春季班")
    ids = [e.id for e in app.state.course.all()]
    with LiveServer(app) as server:
        for n, name in enumerate(LEARNERS):
            with httpx.Client(base_url=server.url) as learner:
                assert learner.post(f"/join/{klass.join_code}", data={"display_name": name}).status_code == 303
                for exercise in (ids[0], ids[len(ids) // 2], ids[-1])[: n + 1]:
                    made = learner.post(f"/api/exercises/{exercise}/submissions",
                                        json={"source": CORRECT if n else WRONG})
                    wait_done(learner, made.json()["id"])
        empty = app.state.classes.create_class(teacher.id, "An empty class")
        with httpx.Client(base_url=server.url) as learner:
            assert learner.post(f"/join/{empty.join_code}", data={"display_name": "Lei Li"}).status_code == 303
        server.class_path, server.exercise_ids = f"/teach/classes/{klass.id}", ids
        server.empty_path = f"/teach/classes/{empty.id}"
        yield server


def signed_in(browser, page_errors, live, width: int, height: int):
    context, page = open_page(browser, page_errors, width, height)
    page.goto(f"{live.url}/signin")
    page.fill("input[name=username]", "teacher")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit].primary")
    page.wait_for_url(f"{live.url}/teach")
    return context, page


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("device", list(WIDTHS))
def test_the_class_table_scrolls_in_its_box_and_the_page_does_not(browser, live, shots, page_errors, device, lang):
    width, height = WIDTHS[device]
    context, page = signed_in(browser, page_errors, live, width, height)
    page.goto(f"{live.url}{live.class_path}?lang={lang}")
    page.wait_for_selector("#progress")
    shots(page, f"class-{device}-{lang}")
    assert page.evaluate(FITS), page.evaluate(WIDE)

    seen = page.evaluate(SCROLLED)
    assert seen["sticky"] == ["sticky", "sticky"]
    assert seen["columns"] == len(live.exercise_ids) and all(seen["titles"])  # every exercise, titled in full
    assert seen["overflows"] and seen["scrolled"] > 0  # 21 columns do not fit even 1280 px: the box scrolls
    # Scrolled to its end, the last column lies inside the box and the names are still at its left edge.
    assert seen["box"]["left"] - 1 <= seen["last"]["left"] and seen["last"]["right"] <= seen["box"]["right"] + 1
    assert abs(seen["name"] - seen["box"]["left"]) <= 1
    assert page.evaluate(FITS) and page.evaluate("() => window.scrollX") == 0
    page.locator("#progress-box").screenshot(path=str(shots.folder / f"table-scrolled-{device}-{lang}.png"))

    legend = page.locator("#exercise-legend li")
    assert legend.count() == len(live.exercise_ids)
    assert page_errors == []
    context.close()


def test_the_exercise_statistics_and_the_playground_fit_a_phone(browser, live, shots, page_errors):
    context, page = signed_in(browser, page_errors, live, *WIDTHS["phone"])
    for path, ready in [(f"{live.class_path}/exercises/{live.exercise_ids[0]}", "#verdicts"),
                        (f"/exercises/{live.exercise_ids[0]}", ".cm-content"), ("/playground", "main h1")]:
        for lang in ("zh", "en"):
            page.goto(f"{live.url}{path}?lang={lang}")
            page.wait_for_selector(ready)
            shots(page, f"{path.rsplit('/', 1)[1]}-{lang}")
            assert page.evaluate(FITS), (path, lang, page.evaluate(WIDE))
    assert page_errors == []
    context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_class_without_submissions_shows_the_join_link_not_a_table(browser, live, shots, page_errors, lang):
    context, page = signed_in(browser, page_errors, live, *WIDTHS["phone"])
    page.goto(f"{live.url}{live.empty_path}?lang={lang}")
    assert page.locator("#progress").count() == 0 and page.locator("#version-table").count() == 0
    empty = page.locator("#no-submissions")
    assert page.locator("#join-url").input_value() in empty.inner_text() and "Lei Li" in empty.inner_text()
    shots(page, f"empty-class-{lang}")
    assert page.evaluate(FITS), page.evaluate(WIDE)
    assert page_errors == []
    context.close()
