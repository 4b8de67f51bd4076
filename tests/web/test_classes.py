"""Classes over HTTP: instructors sign in, learners join and sign back in, and only a class's instructors see it.

Each test runs on SQLite and on PostgreSQL (the `client` fixture), with the fake grader of conftest.py.
"""

from __future__ import annotations

import csv
import io
import re
from html import unescape

import pytest

from tests.web.classroom import PASSWORD, browser, message, new_class, sign_in, submit, table
from tests.web.conftest import CORRECT, WRONG
from web.progress import CSV_HEAD
from web.sessions import INSTRUCTOR_COOKIE, LEARNER_COOKIE


def test_instructor_signs_in_and_out(client):
    client.app.state.classes.add_instructor("teacher", PASSWORD)
    t = browser(client)
    assert t.get("/teach").headers["location"] == "/signin?next=/teach"
    for username, password in [("teacher", "wrong password"), ("nobody", PASSWORD)]:
        refused = sign_in(t, username, password)
        assert refused.status_code == 401 and INSTRUCTOR_COOKIE not in refused.headers.get("set-cookie", "")
        assert message(refused.text, "signin-error").startswith("用户名或密码不对")  # Chinese by default
    signed = sign_in(t, "teacher")
    assert signed.status_code == 303 and signed.headers["location"] == "/teach"
    cookie = signed.headers["set-cookie"]
    assert cookie.startswith(f"{INSTRUCTOR_COOKIE}=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert t.get("/teach").status_code == 200
    out = t.post("/signout")
    assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
    assert t.get("/teach").status_code == 303


def test_wrong_password_messages_in_both_languages(client):
    client.app.state.classes.add_instructor("teacher", PASSWORD)
    t = browser(client)
    zh = t.post("/signin?lang=zh", data={"username": "teacher", "password": "nope nope"})
    assert message(zh.text, "signin-error").startswith("用户名或密码不对")
    en = t.post("/signin?lang=en", data={"username": "teacher", "password": "nope nope"})
    assert message(en.text, "signin-error").startswith("Wrong user name or password: check both and try again")


def test_an_old_instructor_session_is_signed_out(teacher, klass, monkeypatch):
    monkeypatch.setattr(teacher.app.state.cookies, "instructor_max_age", -1)
    assert teacher.get(klass[0]).status_code == 403


@pytest.mark.parametrize("target, landing", [
    ("/teach/classes/abc", "/teach/classes/abc"),
    ("//evil.example/x", "/teach"),
    ("https://evil.example/", "/teach"),
    ("/\\evil.example", "/teach"),
])
def test_sign_in_sends_back_only_within_the_site(client, target, landing):
    client.app.state.classes.add_instructor("teacher", PASSWORD)
    response = browser(client).post("/signin", data={"username": "teacher", "password": PASSWORD, "next": target})
    assert response.headers["location"] == landing


def test_a_class_needs_a_name(teacher):
    response = teacher.post("/teach/classes?lang=en", data={"name": "   "})
    assert response.status_code == 400 and "Enter a name for the class." in response.text


def test_joining_keeps_earlier_submissions_and_the_table_shows_them(client, teacher, klass):
    class_path, join_path = klass
    learner = browser(client)
    submit(learner, WRONG)  # anonymous, before joining
    page = learner.get(join_path)
    assert page.status_code == 200 and "Class A" in page.text
    joined = learner.post(join_path, data={"display_name": "  Bob   Li ", "password": ""})
    assert joined.status_code == 303 and joined.headers["location"] == "/me"
    assert "Class A" in learner.get("/me").text and "Bob Li" in learner.get("/").text  # the header names them
    solved = submit(learner, CORRECT)
    [row] = table(teacher.get(class_path).text)
    assert row["learner"] == "Bob Li"
    cell = row["cells"]["add-one"]
    assert cell["solved"] == "yes" and cell["attempts"] == "2" and cell["last verdict"] == "ACCEPTED"
    assert cell["first solved at"] == solved["created_at"][:19] + "+00:00"


@pytest.mark.parametrize("path_kind, fields, status, text", [
    ("unknown", {"display_name": "Ann"}, 404, "This join link matches no class: check that you copied the whole link"),
    ("join", {"display_name": "bob"}, 400, "Someone in this class is already called bob: add your family name"),
    ("join", {"display_name": "   "}, 400, "Enter a display name: the name your instructor will see."),
    ("join", {"display_name": "x" * 41}, 400, "The display name is too long: use at most 40 characters."),
    ("join", {"display_name": "Ann", "password": "short"}, 400, "The password is too short: use at least 10"),
])
def test_join_errors_say_what_to_fix(client, klass, path_kind, fields, status, text):
    _, join_path = klass
    bob = browser(client)
    assert bob.post(join_path, data={"display_name": "Bob"}).status_code == 303
    path = "/join/no-such-code" if path_kind == "unknown" else join_path
    response = browser(client).post(path + "?lang=en", data=fields)
    assert response.status_code == status and text in unescape(response.text), response.text
    again = bob.post(join_path + "?lang=en", data={"display_name": "Bob 2"})
    assert again.status_code == 400 and "You are in this class already." in again.text


def test_a_learner_signs_in_elsewhere_with_display_name_and_password(client, klass):
    _, join_path = klass
    home = browser(client)
    home.post(join_path, data={"display_name": "Bob", "password": "bobs password"})
    submit(home, CORRECT)
    elsewhere = browser(client)
    wrong = elsewhere.post(join_path + "/signin?lang=en", data={"display_name": "Bob", "password": "nope nope"})
    assert wrong.status_code == 401 and "Wrong display name or password for this class" in message(wrong.text,
                                                                                                     "signin-error")
    signed = elsewhere.post(join_path + "/signin", data={"display_name": "bob", "password": "bobs password"})
    assert signed.status_code == 303 and signed.headers["set-cookie"].startswith(f"{LEARNER_COOKIE}=")
    assert elsewhere.get("/api/exercises").json()[0]["state"] == "solved"
    assert "Bob" in elsewhere.get(join_path).text and 'id="joined"' in elsewhere.get(join_path).text


def test_the_instructor_reissues_a_personal_sign_in_link(client, teacher, klass):
    class_path, join_path = klass
    home = browser(client)
    home.post(join_path, data={"display_name": "Bob"})
    submit(home, CORRECT)
    learner_id = client.app.state.classes.members(class_path.rsplit("/", 1)[1])[0].learner_id
    learner_page = f"{class_path}/learners/{learner_id}"

    def reissue() -> str:
        page = teacher.post(learner_page + "/signin-link")
        assert page.status_code == 200
        return re.search(r'id="signin-link" readonly value="([^"]+)"', page.text).group(1).removeprefix(
            "http://testserver")

    first = reissue()
    elsewhere = browser(client)
    confirm = elsewhere.get(first)
    assert confirm.status_code == 200 and "Bob" in confirm.text and 'id="continue"' in confirm.text
    assert elsewhere.get("/api/exercises").json()[0]["state"] == "not_started"  # opening it changes nothing
    signed = elsewhere.post(first)
    assert signed.status_code == 303 and signed.headers["set-cookie"].startswith(f"{LEARNER_COOKIE}=")
    assert elsewhere.get("/api/exercises").json()[0]["state"] == "solved"
    second = reissue()
    gone = browser(client).get(first + "?lang=en")
    assert gone.status_code == 404 and "This sign-in link does not work any more" in unescape(gone.text)
    assert browser(client).post(second).status_code == 303


def test_a_learner_sets_a_password_on_their_page(client, klass):
    _, join_path = klass
    home = browser(client)
    assert "You are in no class" in home.get("/me?lang=en").text
    assert home.post("/me/password", data={"password": "plum kettle", "password2": "plum kettle"}).status_code == 403
    home.post(join_path, data={"display_name": "Bob"})
    differ = home.post("/me/password?lang=en", data={"password": "plum kettle", "password2": "plum kettlX"})
    assert differ.status_code == 400 and "The two passwords differ" in message(differ.text, "password-error")
    assert home.post("/me/password", data={"password": "plum kettle", "password2": "plum kettle"}).status_code == 200
    elsewhere = browser(client)
    signed_in = elsewhere.post(join_path + "/signin", data={"display_name": "Bob", "password": "plum kettle"})
    assert signed_in.status_code == 303
    link = re.search(r'id="signin-link" readonly value="([^"]+)"',
                     home.post("/me/signin-link", data={"current": "plum kettle"}).text).group(1)
    assert browser(client).get(link.removeprefix("http://testserver")).status_code == 200


CLASS_PAGES = [("get", ""), ("get", "/progress.csv"), ("get", "/learners/{learner}"), ("get", "/exercises/add-one"),
               ("post", "/learners/{learner}/signin-link"), ("post", "/instructors")]


@pytest.mark.parametrize("method, suffix", CLASS_PAGES)
@pytest.mark.parametrize("visitor", ["anonymous", "learner", "other instructor"])
def test_only_the_class_instructors_see_it(client, teacher, klass, method, suffix, visitor):
    class_path, join_path = klass
    learner = browser(client)
    learner.post(join_path, data={"display_name": "Bob"})
    learner_id = client.app.state.classes.members(class_path.rsplit("/", 1)[1])[0].learner_id
    path = class_path + suffix.format(learner=learner_id)
    who = {"anonymous": browser(client), "learner": learner, "other instructor": browser(client)}[visitor]
    if visitor == "other instructor":
        sign_in(who, "other")
        new_class(who, "Other class")
    response = getattr(who, method)(path + "?lang=en", **({"data": {"username": "other"}} if method == "post" else {}))
    assert response.status_code == 403, response.text
    assert "text/html" in response.headers["content-type"] and "instructors" in response.text
    assert 'id="progress"' not in response.text and "learner,solved" not in response.text
    assert 'id="learner-name"' not in response.text and 'id="signin-link"' not in response.text
    assert 'id="verdicts"' not in response.text and "content-disposition" not in response.headers
    assert getattr(teacher, method)(path, **({"data": {"username": "other"}} if method == "post" else {})
                                    ).status_code in (200, 303)


def test_an_added_instructor_sees_the_class_and_an_unknown_one_is_named(client, teacher, klass):
    class_path, _ = klass
    other = browser(client)
    sign_in(other, "other")
    assert other.get(class_path).status_code == 403
    unknown = teacher.post(class_path + "/instructors?lang=en", data={"username": "nobody"})
    assert unknown.status_code == 400 and "No instructor is named nobody: check the spelling" in unescape(unknown.text)
    assert teacher.post(class_path + "/instructors", data={"username": "other"}).status_code == 303
    assert other.get(class_path).status_code == 200
    assert teacher.get("/teach/classes/" + "0" * 32).status_code == 404


def test_the_csv_matches_the_table_in_its_order(client, teacher, klass):
    class_path, join_path = klass
    for name, sources in [("Zoe", [WRONG, CORRECT]), ("=HYPERLINK(1)", [WRONG]), ("Adam", [])]:
        learner = browser(client)
        learner.post(join_path, data={"display_name": name})
        for source in sources:
            submit(learner, source)
    for query in ["", "?sort=solved&dir=desc", "?sort=add-one&dir=asc", "?sort=attempts&dir=desc"]:
        shown = table(teacher.get(class_path + query).text)
        response = teacher.get(class_path + "/progress.csv" + query)
        assert response.headers["content-type"] == "text/csv; charset=utf-8"
        assert "attachment" in response.headers["content-disposition"]
        lines = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
        # One line per learner and exercise, the learners in the table's order, each cell's fields as shown.
        assert [(line["learner"].removeprefix("'"), line["exercise id"]) for line in lines] == \
            [(row["learner"], exercise) for row in shown for exercise in row["cells"]]
        for line, (name, cell) in zip(lines, [(r["learner"], c) for r in shown for c in r["cells"].values()]):
            assert {field: line[field] for field in cell} == cell, name
    assert [r["learner"] for r in table(teacher.get(class_path + "?sort=solved&dir=desc").text)][0] == "Zoe"
    assert [r["learner"] for r in table(teacher.get(class_path + "?sort=name&dir=desc").text)] == \
        ["Zoe", "Adam", "=HYPERLINK(1)"]
    formula = teacher.get(class_path + "/progress.csv").content.decode("utf-8-sig")
    assert "'=HYPERLINK(1)" in formula  # a spreadsheet shows it as text, never runs it


@pytest.mark.parametrize("lang, title", [("en", "Add one"), ("zh", "加一")])
def test_the_csv_has_a_line_per_learner_and_exercise(client, teacher, klass, lang, title):
    class_path, join_path = klass
    for name, sources in [("Ann", [WRONG, CORRECT]), ("Bob", [])]:
        learner = browser(client)
        learner.post(join_path, data={"display_name": name})
        for source in sources:
            submit(learner, source)
    text = teacher.get(class_path + f"/progress.csv?lang={lang}").content.decode("utf-8-sig")
    head, *lines = list(csv.reader(io.StringIO(text)))
    assert head == CSV_HEAD  # a few columns, whatever the size of the course
    ann, bob = (dict(zip(head, line)) for line in lines)
    assert ann["first solved at"].startswith("20") and ann["last origin"] == "browser"
    assert ann["seconds to solve"].isdigit()  # from the first submission to the accepted one
    assert {k: v for k, v in ann.items() if k not in ("first solved at", "last origin", "seconds to solve")} == {
        "learner": "Ann", "exercise id": "add-one", "exercise number": "1", "exercise title": title, "solved": "yes",
        "attempts": "2", "last verdict": "ACCEPTED", "last verdict before regrade": "",
        "verdicts changed by regrade": "0", "due at": "", "timing": "", "submissions by origin": "browser 2",
        "questions answered": "", "questions asked": "", "solved needs the questions": "no"}
    assert (bob["learner"], bob["exercise id"], bob["solved"], bob["attempts"], bob["last verdict"]) == (
        "Bob", "add-one", "no", "0", "")


def test_a_class_without_submissions_says_how_to_invite_learners(client, teacher, klass):
    class_path, join_path = klass
    empty = unescape(teacher.get(class_path + "?lang=en").text)
    assert 'id="progress"' not in empty and 'id="no-learners"' in empty
    assert f'href="http://testserver{join_path}"' in empty  # the join link, in the empty state
    assert 'id="version-table"' not in empty and "1 exercise has no verdict in this class yet." in empty

    learner = browser(client)
    learner.post(join_path, data={"display_name": "Ann"})
    joined = unescape(teacher.get(class_path + "?lang=en").text)
    assert 'id="progress"' not in joined and 'id="no-submissions"' in joined and 'id="no-learners"' not in joined
    assert "1 learner has joined; nobody has submitted yet." in joined
    assert re.search(r'<li><a href="/teach/classes/\w+/learners/\w+">Ann</a></li>', joined)  # their page
    assert f'href="http://testserver{join_path}"' in joined
    assert "已有 1 名学员加入，还没有人提交" in teacher.get(class_path + "?lang=zh").text
    assert teacher.get(class_path + "/progress.csv").status_code == 200  # the download stays, with a line for Ann

    submit(learner, WRONG)
    shown = teacher.get(class_path + "?lang=en").text
    assert 'id="progress"' in shown and 'id="no-submissions"' not in shown
    assert [r["learner"] for r in table(shown)] == ["Ann"]
    assert 'id="version-table"' in shown and 'id="ungraded-exercises"' not in shown
    assert re.search(r'<th scope="col"\s+data-key="add-one" class="ex-col" title="1\. Add one">', shown)
    assert 'id="exercise-legend"' in shown


def test_an_exercise_shows_its_verdicts_and_the_checks_that_fail(client, teacher, klass):
    class_path, join_path = klass
    for name, sources in [("Ann", [WRONG, WRONG, CORRECT]), ("Bob", [WRONG, "def add_one(x):\n    return 1 / 0\n"])]:
        learner = browser(client)
        learner.post(join_path, data={"display_name": name})
        for source in sources:
            submit(learner, source)
    html = teacher.get(class_path + "/exercises/add-one?lang=en").text
    verdicts = dict(re.findall(r'<tr data-verdict="(\w+)">.*?<td class="num">(\d+)</td>', html, re.S))
    assert verdicts == {"WRONG_ANSWER": "3", "RUNTIME_ERROR": "1", "ACCEPTED": "1"}
    assert "1 of 2 learners solved it; 2 tried it." in html
    checks = re.findall(r'<tr data-check="([^"]*)">.*?<td class="num">(\d+)</td>\s*<td class="num">(\d+)</td>\s*'
                        r'<td class="num">(\d+)</td>', html, re.S)
    # (check, failed first, failed at all, learners): every failing submission failed test_add_one_1 first, and
    # test_add_one_-5 after it, so 1 is the cause to look at and -5 only its symptom.
    assert checks == [("test_add_one_1", "4", "4", "2"), ("test_add_one_-5", "0", "4", "2")]
    samples = html.split('data-check="test_add_one_1"', 1)[1].split("</ul>", 1)[0]
    assert samples.count("<li>") == 2  # one sample per message (Ann's three wrong answers say the same), newest first
    assert "division by zero" in samples and "add_one(1) returned 1, expected 2" in samples
    symptom = html.split('data-check="test_add_one_-5"', 1)[1].split("</ul>", 1)[0]
    assert "<li>" not in symptom  # its failures are shown under the check that failed first


def test_a_learners_submissions_show_source_and_report(client, teacher, klass):
    class_path, join_path = klass
    learner = browser(client)
    learner.post(join_path, data={"display_name": "Bob"})
    submit(learner, WRONG)
    learner_id = client.app.state.classes.members(class_path.rsplit("/", 1)[1])[0].learner_id
    html = teacher.get(f"{class_path}/learners/{learner_id}?exercise=add-one").text
    assert "def add_one(x):\n    return x\n" in html
    assert '"verdict": "WRONG_ANSWER"' in html.replace('\\"', '"') or '"verdict":"WRONG_ANSWER"' in html
    assert '<script src="/static/report.js">' in html


@pytest.mark.parametrize("path", ["/signin", "/join/code", "/teach/classes", "/me/password", "/signout"])
def test_cross_site_form_posts_are_refused(client, path):
    response = client.post(path, data={"x": "1"}, headers={"origin": "https://evil.example"})
    assert response.status_code == 403


def test_pages_speak_both_languages(client, teacher, klass):
    class_path, join_path = klass
    assert "进度" in teacher.get(class_path + "?lang=zh").text and "下载 CSV" in teacher.get(class_path).text
    english = teacher.get(class_path + "?lang=en").text
    assert "Progress" in english and "Download CSV" in english and "进度" not in english
    assert "加入班级" in browser(client).get(join_path + "?lang=zh").text
    assert "Join the class" in browser(client).get(join_path + "?lang=en").text
