"""Sessions against a real server (uvicorn on a loopback port, httpx as the browsers): expiry, sign-out, revocation.

Each test runs on SQLite and on PostgreSQL. A "copied cookie" is the cookie value replayed by another client,
as someone who read it off a shared computer would.
"""

from __future__ import annotations

import re

import httpx
import pytest

from tests.web.classroom import PASSWORD
from tests.web.conftest import CORRECT
from tests.web.live import LiveServer
from web.app import create_app
from web.sessions import INSTRUCTOR_COOKIE, LEARNER_COOKIE

LEARNER_PASSWORD = "plum kettle drum"


@pytest.fixture
def server(settings, grader):
    app = create_app(settings, grade=grader)
    app.state.classes.add_instructor("teacher", PASSWORD)
    with LiveServer(app) as live:
        yield live


def browser(server, **cookies) -> httpx.Client:
    return httpx.Client(base_url=server.url, cookies=cookies, follow_redirects=False, timeout=10)


def signed_in_teacher(server, username: str = "teacher") -> httpx.Client:
    t = browser(server)
    assert t.post("/signin", data={"username": username, "password": PASSWORD}).status_code == 303
    return t


def class_of(server, teacher: httpx.Client) -> tuple[str, str]:
    class_path = teacher.post("/teach/classes", data={"name": "A"}).headers["location"]
    join = re.search(r'id="join-url" readonly value="([^"]+)"', teacher.get(class_path).text).group(1)
    return class_path, join.removeprefix(server.url).removeprefix("http://127.0.0.1")


def joined(server, join_path: str, name: str = "Bob", password: str = "") -> httpx.Client:
    b = browser(server)
    assert b.post(join_path, data={"display_name": name, "password": password}).status_code == 303
    return b


def in_class(b: httpx.Client) -> bool:
    return 'id="memberships"' in b.get("/me").text


def link_of(html: str) -> str:
    return re.search(r'id="signin-link" readonly value="[^"]*?(/signin/link/[^"]+)"', html).group(1)


def test_a_learner_cookie_expires_unused_and_is_renewed_in_use(server):
    b = browser(server)
    first = b.get("/").headers["set-cookie"]
    assert f"Max-Age={90 * 24 * 3600}" in first and first.startswith(f"{LEARNER_COOKIE}=")
    b.post("/api/exercises/add-one/submissions", json={"source": CORRECT})
    assert b.get("/").headers.get("set-cookie") is None  # fresh: not signed again
    server.server.config.app.state.cookies.learner_max_age = -1  # every cookie is now older than the limit
    assert b.get("/api/exercises").json()[0]["state"] == "not_started"  # a new learner


def test_reissuing_the_link_ends_every_session_made_before(server):
    teacher = signed_in_teacher(server)
    class_path, join_path = class_of(server, teacher)
    home = joined(server, join_path)
    learner_id = re.search(r'/learners/(\w+)"', teacher.get(class_path).text).group(1)
    first = link_of(teacher.post(f"{class_path}/learners/{learner_id}/signin-link").text)
    assert not in_class(home)  # the instructor's new link ended the join session
    elsewhere = browser(server)
    assert elsewhere.post(first).status_code == 303 and in_class(elsewhere)
    copied = browser(server, **{LEARNER_COOKIE: elsewhere.cookies[LEARNER_COOKIE]})
    assert in_class(copied)
    link_of(teacher.post(f"{class_path}/learners/{learner_id}/signin-link").text)
    assert not in_class(elsewhere) and not in_class(copied)


def test_the_learners_own_new_link_keeps_their_browser_and_ends_the_others(server):
    _, join_path = class_of(server, signed_in_teacher(server))
    home = joined(server, join_path)
    other = browser(server)
    assert other.post(link_of(home.post("/me/signin-link").text)).status_code == 303
    assert in_class(home) and in_class(other)
    home.post("/me/signin-link")
    assert in_class(home) and not in_class(other)


def test_a_new_password_asks_for_the_current_one_and_ends_the_other_sessions(server):
    _, join_path = class_of(server, signed_in_teacher(server))
    home = joined(server, join_path, password=LEARNER_PASSWORD)
    other = browser(server)
    signin = other.post(join_path + "/signin", data={"display_name": "Bob", "password": LEARNER_PASSWORD})
    assert signin.status_code == 303 and in_class(other)
    assert 'id="current-password"' in home.get("/me").text
    new = {"password": "cedar lantern", "password2": "cedar lantern"}
    wrong = home.post("/me/password?lang=en", data={**new, "current": "not my password"})
    assert wrong.status_code == 400 and "The current password is wrong" in wrong.text
    missing = home.post("/me/password?lang=en", data=new)
    assert missing.status_code == 400 and in_class(other)
    saved = home.post("/me/password", data={**new, "current": LEARNER_PASSWORD})
    assert saved.status_code == 200 and in_class(home) and not in_class(other)
    assert browser(server).post(join_path + "/signin", data={"display_name": "Bob", "password": "cedar lantern"}
                                ).status_code == 303


def test_a_sign_in_link_resets_a_lost_password_for_a_few_minutes_only(server, monkeypatch):
    _, join_path = class_of(server, signed_in_teacher(server))
    home = joined(server, join_path, password=LEARNER_PASSWORD)
    link = link_of(home.post("/me/signin-link", data={"current": LEARNER_PASSWORD}).text)
    lost = browser(server)
    lost.post(link)
    assert 'id="reset-note"' in lost.get("/me").text
    assert lost.post("/me/password", data={"password": "cedar lantern", "password2": "cedar lantern"}
                     ).status_code == 200
    monkeypatch.setattr("web.join.LINK_RESET_S", -1)
    late = browser(server)
    late.post(link_of(lost.post("/me/signin-link", data={"current": "cedar lantern"}).text))
    refused = late.post("/me/password?lang=en", data={"password": "maple harbour", "password2": "maple harbour"})
    assert refused.status_code == 400 and "The current password is wrong" in refused.text


def test_a_learner_signs_out_everywhere_and_a_copied_cookie_stops_working(server):
    _, join_path = class_of(server, signed_in_teacher(server))
    home = joined(server, join_path, password=LEARNER_PASSWORD)
    assert 'id="learner-signout"' in home.get("/me").text
    copied = browser(server, **{LEARNER_COOKIE: home.cookies[LEARNER_COOKIE]})
    cross = home.post("/me/signout", headers={"origin": "https://evil.example"})
    assert cross.status_code == 403 and in_class(copied)
    out = home.post("/me/signout")
    assert out.status_code == 303 and f"{LEARNER_COOKIE}=;" in out.headers["set-cookie"]
    assert not in_class(home) and not in_class(copied)
    assert browser(server).post("/me/signout").status_code == 403  # an anonymous learner has nothing to end


def test_an_instructors_copied_cookie_ends_at_sign_out_and_at_a_new_password(server):
    teacher = signed_in_teacher(server)
    copied = browser(server, **{INSTRUCTOR_COOKIE: teacher.cookies[INSTRUCTOR_COOKIE]})
    assert copied.get("/teach").status_code == 200
    assert teacher.post("/signout").status_code == 303
    assert copied.get("/teach").status_code == 303  # to /signin
    again = signed_in_teacher(server)
    server.server.config.app.state.classes.set_instructor_password("teacher", "a whole new passphrase")
    assert again.get("/teach").status_code == 303


def test_a_cookie_of_the_older_format_is_kept_and_signed_anew(server):
    from itsdangerous import Signer

    legacy = Signer("test-secret", salt="practice-learner").sign("a" * 32).decode()
    b = browser(server, **{LEARNER_COOKIE: legacy})
    renewed = b.get("/").headers["set-cookie"]
    assert renewed.startswith(f"{LEARNER_COOKIE}=") and legacy not in renewed
    value = renewed.split(";", 1)[0].split("=", 1)[1]
    assert server.server.config.app.state.cookies.learner({LEARNER_COOKIE: value}).learner_id == "a" * 32


def test_a_cookie_of_the_older_format_is_refused_after_its_last_day(monkeypatch):
    """An older cookie has no signing time, so only a date can end it: a copied one does not live for ever."""
    from itsdangerous import Signer

    from web import sessions

    cookies = sessions.Cookies("test-secret")
    legacy = {LEARNER_COOKIE: Signer("test-secret", salt="practice-learner").sign("a" * 32).decode()}
    monkeypatch.setattr(sessions.time, "time", lambda: sessions.LEGACY_COOKIES_UNTIL - 1)
    assert cookies.learner(legacy).learner_id == "a" * 32
    monkeypatch.setattr(sessions.time, "time", lambda: sessions.LEGACY_COOKIES_UNTIL)
    assert cookies.learner(legacy) is None


@pytest.mark.parametrize("who", ["instructor", "learner"])
def test_password_guessing_backs_off_per_name_without_telling_which_names_exist(server, who):
    teacher = signed_in_teacher(server)
    _, join_path = class_of(server, teacher)
    joined(server, join_path, password=LEARNER_PASSWORD)
    path, field, known = (("/signin", "username", "teacher") if who == "instructor"
                          else (join_path + "/signin", "display_name", "Bob"))
    right = PASSWORD if who == "instructor" else LEARNER_PASSWORD
    guesser = browser(server)
    for name in (known, "nobody at all"):
        statuses = [guesser.post(path + "?lang=en", data={field: name, "password": f"guess {i}"}).status_code
                    for i in range(5)]
        assert statuses == [401] * 5
        blocked = guesser.post(path + "?lang=en", data={field: name, "password": right})
        assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) > 0
        assert "Too many failed sign-ins for this name or from this network" in blocked.text
    zh = guesser.post(path + "?lang=zh", data={field: known, "password": right})
    assert zh.status_code == 429 and "登录失败次数过多" in zh.text


def test_one_address_guessing_many_names_is_stopped(server):
    guesser = browser(server)
    for i in range(20):
        assert guesser.post("/signin", data={"username": f"name{i}", "password": "guess guess"}).status_code == 401
    assert guesser.post("/signin", data={"username": "teacher", "password": PASSWORD}).status_code == 429


def test_a_success_forgets_the_names_failures(server):
    b = browser(server)
    for _ in range(4):
        b.post("/signin", data={"username": "teacher", "password": "guess guess"})
    assert b.post("/signin", data={"username": "teacher", "password": PASSWORD}).status_code == 303
    for _ in range(4):
        assert b.post("/signin", data={"username": "teacher", "password": "guess guess"}).status_code == 401


def from_address(server, address: str) -> httpx.Client:
    """A browser at another client address (the test server trusts X-Forwarded-For from 127.0.0.1, as behind a
    proxy)."""
    b = browser(server)
    b.headers["X-Forwarded-For"] = address
    return b


def test_a_stranger_cannot_lock_the_owner_out(server):
    """Five wrong passwords from anywhere blocked the name everywhere: the owner's right password got 429. The
    name is now counted per address: the stranger is blocked where they are, the owner is not, from a known
    address or a new one."""
    _, join_path = class_of(server, signed_in_teacher(server))
    joined(server, join_path, password=LEARNER_PASSWORD)
    owner = {"display_name": "Bob", "password": LEARNER_PASSWORD}
    assert from_address(server, "10.0.0.1").post(join_path + "/signin", data=owner).status_code == 303
    stranger = from_address(server, "10.0.0.2")
    for i in range(5):
        assert stranger.post(join_path + "/signin", data={**owner, "password": f"guess {i}"}).status_code == 401
    assert stranger.post(join_path + "/signin", data=owner).status_code == 429  # guessing is still slowed
    assert from_address(server, "10.0.0.1").post(join_path + "/signin", data=owner).status_code == 303
    assert from_address(server, "10.0.0.3").post(join_path + "/signin", data=owner).status_code == 303
    for i in range(5):  # likewise for an instructor
        stranger.post("/signin", data={"username": "teacher", "password": f"guess {i}"})
    assert from_address(server, "10.0.0.1").post("/signin", data={"username": "teacher", "password": PASSWORD}
                                                 ).status_code == 303


def test_guessing_spread_over_addresses_blocks_the_name_except_where_the_owner_signed_in(server):
    server.server.config.app.state.classes.throttle.per_name_anywhere = 6
    _, join_path = class_of(server, signed_in_teacher(server))
    home = joined(server, join_path, password=LEARNER_PASSWORD)
    owner = {"display_name": "Bob", "password": LEARNER_PASSWORD}
    assert from_address(server, "10.0.0.1").post(join_path + "/signin", data=owner).status_code == 303
    for i in range(6):  # one guess from each of six addresses: no address reaches its own limit
        guess = from_address(server, f"10.0.1.{i}").post(join_path + "/signin", data={**owner, "password": "guess"})
        assert guess.status_code == 401
    assert from_address(server, "10.0.2.1").post(join_path + "/signin", data=owner).status_code == 429
    assert from_address(server, "10.0.0.1").post(join_path + "/signin", data=owner).status_code == 303  # known
    link = link_of(home.post("/me/signin-link", data={"current": LEARNER_PASSWORD}).text)
    assert from_address(server, "10.0.2.1").post(link).status_code == 303  # a sign-in link is never blocked
