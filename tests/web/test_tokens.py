"""Learners' tokens over HTTP: traded for a sign-in link or made on /me, revoked by the learner, reissued by the
instructor; a token submits as its learner (same limits), a wrong or revoked one is a 401; origins on the class
pages. SQLite and PostgreSQL (the `client` fixture), the fake grader of conftest.py."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest

from tests.web.classroom import SUBMIT, browser
from tests.web.conftest import CORRECT, WRONG, wait_done
from web.passwords import token_hash
from web.tables import LearnerTokenRow


@pytest.fixture
def member(client, klass):
    """A learner in the class, and their personal sign-in link's token (made on /me)."""
    _, join_path = klass
    bob = browser(client)
    assert bob.post(join_path, data={"display_name": "Bob"}).status_code == 303
    link = re.search(r'id="signin-link" readonly value="([^"]+)"', bob.post("/me/signin-link").text).group(1)
    return bob, link.rsplit("/", 1)[1]


def trade(client, signin_token: str):
    return client.post("/api/tokens", json={"signin_token": signin_token, "label": "laptop"})


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def test_a_sign_in_link_becomes_a_token_that_submits_as_the_learner(client, member, klass, teacher):
    bob, signin_token = member
    made = trade(browser(client), signin_token)
    assert made.status_code == 201
    token = made.json()["token"]
    assert token.startswith("tp_") and made.json()["classes"] == [{"name": "Class A", "display_name": "Bob"}]
    cli = browser(client)  # no cookie of Bob's: only the token says who it is
    assert cli.get("/api/me", headers=bearer(token)).json()["classes"][0]["display_name"] == "Bob"
    created = cli.post(SUBMIT, json={"source": CORRECT, "origin": "notebook"}, headers=bearer(token))
    assert created.status_code == 202
    done = wait_done_with(cli, created.json()["id"], token)
    assert done["verdict"] == "ACCEPTED"
    assert bob.get("/api/exercises").json()[0]["state"] == "solved"  # the browser's learner is the same
    class_path, _ = klass
    page = teacher.get(class_path).text
    assert re.search(r'data-origin="notebook"[^>]*>notebook<|data-origin="notebook".*?>笔记本<', page, re.S)
    learner_path = re.search(r'href="(/teach/classes/[^"]+/learners/[^"]+)"', page).group(1)
    assert 'data-origin="notebook"' in teacher.get(learner_path).text


def test_the_class_csv_says_where_submissions_came_from(client, member, klass, teacher):
    import csv
    import io

    bob, signin_token = member
    token = trade(browser(client), signin_token).json()["token"]
    cli = browser(client)
    for origin in ("cli", "notebook", "cli"):
        created = cli.post(SUBMIT, json={"source": WRONG, "origin": origin}, headers=bearer(token)).json()
        wait_done_with(cli, created["id"], token)
    wait_done(bob, bob.post(SUBMIT, json={"source": CORRECT}).json()["id"])
    class_path, _ = klass
    (line,) = csv.DictReader(io.StringIO(teacher.get(class_path + "/progress.csv").content.decode("utf-8-sig")))
    assert line["exercise id"] == "add-one" and line["last origin"] == "browser"
    assert line["submissions by origin"] == "browser 1; cli 2; notebook 1"
    assert line["attempts"] == "4"


def wait_done_with(client, submission_id: str, token: str) -> dict:
    client.headers.update(bearer(token))
    try:
        return wait_done(client, submission_id)
    finally:
        del client.headers["Authorization"]


def test_only_the_hash_of_a_token_is_stored(client, member):
    _, signin_token = member
    token = trade(browser(client), signin_token).json()["token"]
    from sqlalchemy import select

    with client.app.state.store.engine.connect() as conn:
        hashes = conn.execute(select(LearnerTokenRow.token_hash)).scalars().all()
    assert hashes == [token_hash(token)] and token not in hashes


@pytest.mark.parametrize("header", ["Bearer tp_wrong", "Bearer ", "Basic dXNlcjpwdw==", "tp_no_scheme"])
def test_a_wrong_token_is_a_clear_401(client, header):
    refused = browser(client).post(SUBMIT, json={"source": CORRECT}, headers={"Authorization": header})
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
    assert "wrong or was revoked" in refused.json()["detail"] and "practice login" in refused.json()["detail"]


def test_a_link_of_no_member_gets_no_token(client):
    refused = trade(browser(client), "not-a-link-token")
    assert refused.status_code == 401 and "sign-in link does not work" in refused.json()["detail"]


def test_the_learner_revokes_a_token_on_me(client, member):
    bob, _ = member
    page = bob.post("/me/tokens", data={"label": "my laptop"}).text
    token = re.search(r'id="new-token" readonly value="([^"]+)"', page).group(1)
    assert f"practice login http://testserver --token {token}" in unescape(page)
    cli = browser(client)
    assert cli.get("/api/me", headers=bearer(token)).status_code == 200
    token_id = re.search(r'data-token-id="([0-9a-f]+)"', bob.get("/me").text).group(1)
    assert bob.post(f"/me/tokens/{token_id}/revoke").status_code == 303
    assert cli.post(SUBMIT, json={"source": CORRECT}, headers=bearer(token)).status_code == 401
    assert 'data-token-id' not in bob.get("/me").text
    stranger = browser(client)  # revoking another learner's token does nothing
    assert stranger.post(f"/me/tokens/{token_id}/revoke").status_code == 303


def test_the_instructor_reissues_the_token_and_the_old_ones_stop(client, member, klass, teacher):
    _, signin_token = member
    old = trade(browser(client), signin_token).json()["token"]
    class_path, _ = klass
    learner_path = re.search(r'href="(/teach/classes/[^"]+/learners/[^"]+)"', teacher.get(class_path).text).group(1)
    page = teacher.post(learner_path + "/token").text
    new = re.search(r'id="new-token" readonly value="([^"]+)"', page).group(1)
    cli = browser(client)
    assert cli.get("/api/me", headers=bearer(old)).status_code == 401
    assert cli.get("/api/me", headers=bearer(new)).status_code == 200
    assert browser(client).post(learner_path + "/token").status_code == 403  # not an instructor


def test_logout_revokes_the_token_presented(client, member):
    _, signin_token = member
    token = trade(browser(client), signin_token).json()["token"]
    cli = browser(client)
    assert cli.delete("/api/tokens/current", headers=bearer(token)).status_code == 204
    assert cli.get("/api/me", headers=bearer(token)).status_code == 401


def test_a_token_has_the_browsers_rate_limits(client, member, grader):
    bob, signin_token = member
    token = trade(browser(client), signin_token).json()["token"]
    grader.gate.clear()  # the first submission stays in grading
    cli = browser(client)
    first = cli.post(SUBMIT, json={"source": WRONG}, headers=bearer(token))
    assert first.status_code == 202
    assert grader.started.wait(10)
    busy = cli.post(SUBMIT, json={"source": WRONG}, headers=bearer(token))
    assert busy.status_code == 429 and busy.headers["retry-after"]
    assert bob.post(SUBMIT, json={"source": WRONG}).status_code == 429  # the browser is the same learner
    grader.gate.set()


def test_a_browser_submission_is_from_the_browser_whatever_it_says(client, member, klass, teacher):
    bob, _ = member
    done = wait_done(bob, bob.post(SUBMIT, json={"source": CORRECT, "origin": "cli"}).json()["id"])
    assert done["verdict"] == "ACCEPTED"
    submission = client.app.state.store.get(done["id"])
    assert submission.origin == "browser"


# A leaked token is not the whole account (docs/security.md, "What a token can and cannot do").

def token_of(client, member) -> str:
    return trade(browser(client), member[1]).json()["token"]


@pytest.mark.parametrize("method, path, data", [
    ("post", "/me/signin-link", None), ("post", "/me/tokens", {"label": "mine now"}), ("get", "/me", None),
    ("post", "/me/password", {"password": "taken over!!", "password2": "taken over!!"}),
    ("post", "/me/signout", None), ("get", "/api/exercises", None),
])
def test_a_token_works_only_on_the_routes_made_for_it(client, member, method, path, data):
    """A token made a sign-in link (`POST /me/signin-link` with `Authorization: Bearer`), and so the whole account:
    every route but submitting, reading one's submissions, `GET /api/me` and revoking itself now refuses it."""
    token = token_of(client, member)
    thief = browser(client)
    refused = getattr(thief, method)(path, headers=bearer(token), **({"data": data} if data else {}))
    assert refused.status_code == 403 and "a token only submits" in refused.text
    assert 'id="signin-link"' not in refused.text and 'id="new-token"' not in refused.text
    created = thief.post(SUBMIT, json={"source": CORRECT}, headers=bearer(token))
    assert created.status_code == 202 and thief.get(created.json()["url"], headers=bearer(token)).status_code == 200
    assert member[0].post("/me/signin-link").status_code == 200  # the learner's browser still may


@pytest.mark.parametrize("action", ["/me/signin-link", "/me/tokens"])
def test_a_new_link_or_token_asks_for_the_password(client, member, action):
    bob, _ = member
    assert bob.post("/me/password", data={"password": "plum kettle", "password2": "plum kettle"}).status_code == 200
    field = 'id="signin-link"' if action == "/me/signin-link" else 'id="new-token"'
    for current in ("", "wrong password"):
        refused = bob.post(action + "?lang=en", data={"current": current, "label": "x"})
        assert refused.status_code == 400 and "The current password is wrong" in refused.text
        assert field not in refused.text
    made = bob.post(action, data={"current": "plum kettle", "label": "x"})
    assert made.status_code == 200 and field in made.text


def test_a_sign_in_link_works_once(client, member):
    bob, signin_token = member
    first = browser(client)
    assert first.post(f"/signin/link/{signin_token}").status_code == 303
    again = browser(client).post(f"/signin/link/{signin_token}?lang=en")
    assert again.status_code == 404 and "it was used already" in again.text
    assert trade(browser(client), signin_token).status_code == 401
    traded = bob.post("/me/signin-link").text  # a token for the command line uses a link up too
    fresh = re.search(r'id="signin-link" readonly value="([^"]+)"', traded).group(1).rsplit("/", 1)[1]
    assert trade(browser(client), fresh).status_code == 201
    assert browser(client).post(f"/signin/link/{fresh}").status_code == 404


def test_a_sign_in_link_expires(client, member, settings):
    from sqlalchemy import update

    from web.tables import LearnerRow, now

    _, signin_token = member
    days = timedelta(days=settings.signin_link_days)
    with client.app.state.store.engine.begin() as conn:
        conn.execute(update(LearnerRow).where(LearnerRow.signin_token_hash == token_hash(signin_token))
                     .values(signin_token_issued_at=now() - days - timedelta(minutes=1)))
    assert browser(client).get(f"/signin/link/{signin_token}").status_code == 404
    assert browser(client).post(f"/signin/link/{signin_token}").status_code == 404
    assert trade(browser(client), signin_token).status_code == 401


@pytest.mark.parametrize("action, data", [
    ("/me/password", {"password": "plum kettle", "password2": "plum kettle"}), ("/me/signin-link", {}),
    ("/me/signout", {})])
@pytest.mark.parametrize("revoke", [True, False])
def test_a_new_password_or_link_or_signing_out_revokes_the_tokens_when_ticked(client, member, action, data, revoke):
    bob, _ = member
    page = bob.get("/me").text
    assert page.count('name="revoke_tokens" value="1" checked') == 3  # offered on all three forms, ticked
    token = token_of(client, member)
    assert bob.post(action, data={**data, **({"revoke_tokens": "1"} if revoke else {"keep": ""})}).status_code in (
        200, 303)
    assert browser(client).get("/api/me", headers=bearer(token)).status_code == (401 if revoke else 200)
