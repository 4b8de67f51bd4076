"""One learner in two classes, against a real server: each class's instructor sees and does only their class's part.

The rule (web/class_scope.py, docs/security.md): a class sees what a member did while in it (the first class
also what they did before joining any); a sign-in link or token, which opens every class of the learner, is
issued only by an instructor who teaches all of them. Also here: display names typed in any Unicode form, the
look-alikes refused, and the paginated page of one learner. SQLite and PostgreSQL.
"""

from __future__ import annotations

import csv
import io
import json
import re
from html import unescape

import pytest

from tests.web.classroom import PASSWORD
from tests.web.conftest import CORRECT, WRONG, wait_done
from tests.web.test_sessions import browser, class_of, in_class, joined, server, signed_in_teacher  # noqa: F401
from web.store import Submission

SUBMIT = "/api/exercises/add-one/submissions"


def submit(b, source: str) -> dict:
    return wait_done(b, b.post(SUBMIT, json={"source": source}).json()["id"])


def learner_id_in(teacher, class_path: str) -> str:
    return re.search(r'/learners/(\w+)"', teacher.get(class_path).text).group(1)


@pytest.fixture
def two_classes(server):
    """Bob does a WRONG submission in A only, then joins B and submits CORRECT (made in both)."""
    server.server.config.app.state.classes.add_instructor("other", PASSWORD)
    a_teacher, b_teacher = signed_in_teacher(server), signed_in_teacher(server, "other")
    a_path, a_join = class_of(server, a_teacher)
    b_path, b_join = class_of(server, b_teacher)
    bob = joined(server, a_join)
    submit(bob, WRONG)
    assert bob.post(b_join, data={"display_name": "Bob"}).status_code == 303
    submit(bob, CORRECT)
    return {"a": (a_teacher, a_path), "b": (b_teacher, b_path), "bob": bob,
            "learner": learner_id_in(a_teacher, a_path)}


def test_joining_a_second_class_says_what_its_instructors_will_see(server):
    a_path, a_join = class_of(server, signed_in_teacher(server))
    _, b_join = class_of(server, signed_in_teacher(server))
    bob = browser(server)
    assert 'id="shared-note"' not in bob.get(a_join).text
    bob.post(a_join, data={"display_name": "Bob"})
    note = bob.get(b_join + "?lang=en").text
    assert 'id="shared-note"' in note and "will see what you submit from now on" in note


def test_each_class_sees_only_what_the_learner_did_in_it(two_classes):
    learner = two_classes["learner"]
    for key, sources in (("a", 2), ("b", 1)):
        teacher, path = two_classes[key]
        page = teacher.get(f"{path}/learners/{learner}").text
        assert page.count('class="submission"') == sources, key
        assert ("return x\n" in unescape(page)) == (key == "a")  # the WRONG one was made in A only
        rows = list(csv.DictReader(io.StringIO(teacher.get(path + "/progress.csv").content.decode("utf-8-sig"))))
        assert [r["attempts"] for r in rows] == [str(sources)]
        stats = teacher.get(path + "/exercises/add-one?lang=en").text
        assert ('data-verdict="WRONG_ANSWER"' in stats) == (key == "a")


@pytest.mark.parametrize("action", ["signin-link", "token"])
def test_an_instructor_of_one_class_cannot_hand_out_a_way_into_the_other(server, two_classes, action):
    learner, bob = two_classes["learner"], two_classes["bob"]
    for key in ("a", "b"):
        teacher, path = two_classes[key]
        refused = teacher.post(f"{path}/learners/{learner}/{action}?lang=en")
        assert refused.status_code == 403 and "also in a class you do not teach" in refused.text
        assert 'id="signin-link"' not in refused.text and 'id="new-token"' not in refused.text
    assert in_class(bob)  # nothing of Bob's ended
    a_teacher, a_path = two_classes["a"]
    b_teacher, b_path = two_classes["b"]
    assert b_teacher.post(b_path + "/instructors", data={"username": "teacher"}).status_code == 303
    assert a_teacher.post(f"{a_path}/learners/{learner}/{action}").status_code == 200  # teaches both now


def test_the_other_classs_instructor_cannot_reach_the_learners_password(server, two_classes):
    """Before: B's instructor reissued the one link, signed in with it and set the password Bob uses in A."""
    bob, learner = two_classes["bob"], two_classes["learner"]
    assert bob.post("/me/password", data={"password": "plum kettle drum", "password2": "plum kettle drum"}
                    ).status_code == 200
    b_teacher, b_path = two_classes["b"]
    assert b_teacher.post(f"{b_path}/learners/{learner}/signin-link").status_code == 403
    as_bob = browser(server)
    as_bob.cookies.update(b_teacher.cookies)  # the instructor's own browser, trying the learner's page
    change = as_bob.post("/me/password", data={"password": "taken over!!", "password2": "taken over!!"})
    assert change.status_code == 403  # not a member: the instructor's browser is nobody's learner
    a_join = re.search(r'id="join-url" readonly value="[^"]*?(/join/[^"]+)"',
                       two_classes["a"][0].get(two_classes["a"][1]).text).group(1)
    assert browser(server).post(a_join + "/signin", data={"display_name": "Bob", "password": "plum kettle drum"}
                                ).status_code == 303


def test_a_learner_in_one_class_gets_a_link_and_resets_the_password_with_it(server):
    teacher = signed_in_teacher(server)
    class_path, join_path = class_of(server, teacher)
    joined(server, join_path, password="plum kettle drum")
    page = teacher.post(f"{class_path}/learners/{learner_id_in(teacher, class_path)}/signin-link").text
    link = re.search(r'id="signin-link" readonly value="[^"]*?(/signin/link/[^"]+)"', page).group(1)
    lost = browser(server)
    lost.post(link)
    assert lost.post("/me/password", data={"password": "cedar lantern", "password2": "cedar lantern"}
                     ).status_code == 200


@pytest.mark.parametrize("taken, typed, text", [
    ("Bob", "B\u043eb", "mixes letters of different scripts"),  # a Cyrillic о
    ("Bob", "Bo\u200bb", "invisible or control characters"),
    ("Bob", "\u202eboB", "invisible or control characters"),
    ("Bob", "Bob\u3164", "invisible or control characters"),  # a Hangul filler
    ("BOB", "B0B", "looks like BOB, the name of someone in this class"),
    ("Bill", "BiII", "looks like Bill"),
    ("Jos\u00e9", "Jose\u0301", "already called José"),  # the same name, decomposed
    ("Bob", "\uff22\uff4f\uff42", "already called Ｂｏｂ"),  # fullwidth: the same name
])
def test_look_alike_and_invisible_names_are_refused_with_what_to_fix(server, taken, typed, text):
    _, join_path = class_of(server, signed_in_teacher(server))
    joined(server, join_path, name=taken)
    refused = browser(server).post(join_path + "?lang=en", data={"display_name": typed})
    assert refused.status_code == 400 and text in unescape(refused.text), unescape(refused.text)[-3000:]
    zh = browser(server).post(join_path + "?lang=zh", data={"display_name": typed})
    assert zh.status_code == 400 and ("文字" in zh.text or "字符" in zh.text or "很像" in zh.text
                                      or "已经有人叫" in zh.text)


@pytest.mark.parametrize("stored, typed", [("Jos\u00e9", "Jose\u0301"), ("Jose\u0301", "JOSÉ"),
                                           ("王小明", "王小明"), ("Anna", "\uff21\uff4e\uff4e\uff41")])
def test_a_name_signs_in_whichever_unicode_form_is_typed(server, stored, typed):
    _, join_path = class_of(server, signed_in_teacher(server))
    joined(server, join_path, name=stored, password="plum kettle drum")
    signed = browser(server).post(join_path + "/signin", data={"display_name": typed, "password": "plum kettle drum"})
    assert signed.status_code == 303


def test_the_learner_page_shows_one_page_of_submissions_with_their_reports(server, grader):
    teacher = signed_in_teacher(server)
    class_path, join_path = class_of(server, teacher)
    bob = joined(server, join_path)
    submit(bob, WRONG)
    learner = learner_id_in(teacher, class_path)
    store = server.server.config.app.state.store
    for i in range(24):
        made: Submission = store.add(learner, "add-one", f"def add_one(x):\n    return x + {i}\n")
        store.finish(made.id, grader(made, lambda event: None))
    base = f"{class_path}/learners/{learner}?lang=en"
    first, second = teacher.get(base).text, teacher.get(base + "&page=2").text
    for html, shown in ((first, 20), (second, 5)):
        assert html.count('class="submission"') == shown
        boot = json.loads(unescape(re.search(r'<script type="application/json" id="boot">(.*?)</script>', html,
                                             re.S).group(1)))
        assert len(boot["reports"]) == shown
    assert "Page 1 of 2 (25 submissions)" in first and 'id="older"' in first and 'id="newer"' not in first
    assert "return x + 23" in first and "return x\n" in unescape(second) and 'id="newer"' in second
    assert "Page 2 of 2" in teacher.get(base + "&page=99").text and "Page 1 of 2" in teacher.get(base + "&page=x").text
    one = teacher.get(base + "&exercise=add-one&page=2").text
    assert 'href="?exercise=add-one&amp;page=1"' in one


def test_any_instructor_of_the_learner_revokes_the_link_and_every_token(server, two_classes):
    """An instructor of one class could not act on a learner also in a class they do not teach, even to stop a
    leaked token; revoking hands nothing out, so any of the learner's instructors may."""
    from tests.web.test_tokens import bearer, trade

    learner, bob = two_classes["learner"], two_classes["bob"]
    link = re.search(r'id="signin-link" readonly value="[^"]*?/signin/link/([^"]+)"',
                     bob.post("/me/signin-link").text).group(1)
    token = re.search(r'id="new-token" readonly value="([^"]+)"', bob.post("/me/tokens", data={"label": "x"}).text
                      ).group(1)
    b_teacher, b_path = two_classes["b"]
    revoked = b_teacher.post(f"{b_path}/learners/{learner}/revoke?lang=en")
    assert revoked.status_code == 200 and "1 token(s) were revoked" in revoked.text
    assert browser(server).get("/api/me", headers=bearer(token)).status_code == 401
    assert trade(browser(server), link).status_code == 401
    assert in_class(bob)  # the learner's browser stays signed in
    assert browser(server).post(f"{b_path}/learners/{learner}/revoke").status_code == 403  # not an instructor
