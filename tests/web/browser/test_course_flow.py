"""A graded course in a real browser, in Chinese and in English: deadlines, a changed hidden test, a regrade.

An instructor creates a class; two learners join and solve the exercise. The instructor sets a deadline, the
exercise's hidden test is tightened (in a copy of the course), the class page says both verdicts come from an
older version, the instructor regrades with a reason, and reads what changed: one verdict went from Accepted to
Wrong answer. That learner reads it, with the reason, on their own page. Grading is the in-process hidden-test
grader (tests/web/hidden_grader.py): the verdicts follow the hidden tests as they are on disk.
"""

from __future__ import annotations

import shutil

import pytest

from tests.web.browser.conftest import open_page
from tests.web.browser.test_class_flow import join, submit
from tests.web.conftest import FIXTURE_COURSE
from tests.web.hidden_grader import HiddenTestGrader
from tests.web.live import LiveServer
from tests.web.test_regrade import EXACT, SMALL_ONLY, tighten_hidden_test
from web.app import create_app

pytestmark = pytest.mark.browser
PASSWORD = "correct horse"
REASON = {"zh": "新增了大负数的测试", "en": "a test for large negative numbers was added"}
WORDS = {
    "zh": {"learners": ("王芳", "张伟"), "older": "本班有 2 个判定来自练习的旧版本", "wrong": "答案错误",
           "accepted": "通过", "reason": "原因：", "on_time": "按时"},
    "en": {"learners": ("Fang Wang", "Wei Zhang"), "older": "2 of the class's verdicts come from older versions",
           "wrong": "Wrong answer", "accepted": "Accepted", "reason": "Reason:", "on_time": "on time"},
}


@pytest.fixture
def course(tmp_path):
    return shutil.copytree(FIXTURE_COURSE, tmp_path / "course")


@pytest.fixture
def live(settings, course):
    app = create_app(settings.model_copy(update={"exercises_dir": course}), grade=HiddenTestGrader(course))
    app.state.classes.add_instructor("teacher", PASSWORD)
    with LiveServer(app) as server:
        yield server


def waiting(page) -> int:
    return int(page.locator("#version-table tr[data-exercise=add-one]").get_attribute("data-waiting"))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_instructor_sets_a_deadline_regrades_and_reads_the_changes(browser, live, course, shots, page_errors,
                                                                       lang):
    words = WORDS[lang]
    exact, small_only = words["learners"]
    teacher_context, teacher = open_page(browser, page_errors, height=1000)
    teacher.goto(f"{live.url}/signin?lang={lang}")
    teacher.fill("input[name=username]", "teacher")
    teacher.fill("input[name=password]", PASSWORD)
    teacher.click("button[type=submit].primary")
    teacher.wait_for_url(f"{live.url}/teach")
    teacher.fill("input[name=name]", "torch.compile 2026")
    teacher.click("form[action='/teach/classes'] button")
    teacher.wait_for_selector("#join-url")
    join_url = teacher.locator("#join-url").input_value()
    class_url = teacher.url

    # A deadline for the exercise, two days ahead, late submissions accepted (only marked).
    teacher.select_option("#deadline-form select[name=exercise]", "add-one")
    teacher.fill("#deadline-form input[name=due]", "2099-12-04T18:00")
    teacher.click("#deadline-form button[type=submit]")
    teacher.wait_for_selector("#deadline-table tr[data-exercise=add-one]")
    assert "2099-12-04 18:00" in teacher.locator("#deadline-table").inner_text()

    learners = []
    for name, source in ((exact, EXACT), (small_only, SMALL_ONLY)):
        context, page = join(browser, page_errors, f"{join_url}?lang={lang}", name)
        submit(page, live.url, source, "ok")
        learners.append((context, page))
    teacher.reload()
    cells = teacher.locator("#progress td[data-exercise=add-one]")
    assert [cells.nth(i).get_attribute("data-timing") for i in range(2)] == ["on_time", "on_time"]
    assert words["on_time"] in teacher.locator("#progress").inner_text()
    teacher.locator("#deadlines").scroll_into_view_if_needed()
    shots(teacher, "deadline-set")

    # The hidden test is tightened: both verdicts now come from an older version.
    tighten_hidden_test(course)
    teacher.reload()
    assert words["older"] in teacher.locator("#older-versions").inner_text()
    teacher.locator("#regrade").scroll_into_view_if_needed()
    shots(teacher, "older-versions")

    # Regrade, with the reason the learners will read.
    teacher.select_option("#regrade-form select[name=exercise]", "add-one")
    teacher.fill("#regrade-form input[name=reason]", REASON[lang])
    teacher.click("#regrade-form button[type=submit]")
    teacher.wait_for_selector("#regrade-queued")
    for _ in range(200):
        if waiting(teacher) == 0:
            break
        teacher.wait_for_timeout(100)  # an instructor reloading the page until the queue is empty
        teacher.goto(class_url + f"?lang={lang}#regrade")
    teacher.goto(class_url + f"?lang={lang}")
    changed = teacher.locator("#changes tbody tr")
    assert changed.count() == 1
    row = changed.first
    assert (row.get_attribute("data-before"), row.get_attribute("data-after")) == ("ACCEPTED", "WRONG_ANSWER")
    assert small_only in row.inner_text() and REASON[lang] in row.inner_text()
    cell = teacher.locator(f"#progress tr[data-learner='{small_only}'] td[data-exercise=add-one]")
    assert cell.get_attribute("data-before") == "ACCEPTED" and cell.get_attribute("data-last-verdict") == "WRONG_ANSWER"
    assert words["wrong"] in cell.inner_text() and words["accepted"] in cell.inner_text()
    assert "0" in teacher.locator("#older-versions").inner_text()
    teacher.locator("#progress").scroll_into_view_if_needed()
    shots(teacher, "regraded-table")
    teacher.locator("#changes").scroll_into_view_if_needed()
    shots(teacher, "changes", full_page=False)

    # The learner whose verdict changed reads it, with the reason, on their page.
    _, learner = learners[1]
    learner.goto(f"{live.url}/me?lang={lang}")
    told = learner.locator("#my-regrades").inner_text()
    assert REASON[lang] in told and words["reason"] in told and words["wrong"] in told
    shots(learner, "learner-told")
    assert learners[0][1].goto(f"{live.url}/me").ok and learners[0][1].locator("#my-regrades").count() == 0

    assert page_errors == []
    for context in [teacher_context] + [c for c, _ in learners]:
        context.close()
