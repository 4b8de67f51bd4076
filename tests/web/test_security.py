"""Cookie, Content-Security-Policy, cross-site refusal, and escaping of what a submission carries."""

from __future__ import annotations

import pytest

from tests.web.conftest import wait_done
from web.middleware import COOKIE

URL = "/api/exercises/add-one/submissions"
EVIL = ('def add_one(x):\n    print("<script>alert(1)</script>")\n'
        '    return x  # </script><img src=x onerror=alert(2)>\n')


def test_learner_cookie_is_signed_httponly_samesite(client):
    cookie = client.get("/").headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert client.get("/").headers.get("set-cookie") is None  # kept, not reissued


@pytest.mark.parametrize("path", ["/healthz", "/static/app.js", "/static/style.css"])
def test_a_probe_or_a_stylesheet_gets_no_learner(client, path):
    # A first visit loads the page and its assets at once: each would have set a new learner, and the last
    # response to arrive would have decided whose submissions the page's next POST makes.
    assert client.get(path).headers.get("set-cookie") is None
    page = client.get("/").headers["set-cookie"]
    assert page.startswith(f"{COOKIE}=")
    assert client.get(path).headers.get("set-cookie") is None
    assert client.cookies[COOKIE] == page.split(";")[0].split("=", 1)[1]


def test_tampered_cookie_gets_a_new_learner(client):
    created = client.post(URL, json={"source": "def add_one(x):\n    return x + 1\n"}).json()
    wait_done(client, created["id"])
    value = client.cookies[COOKIE]
    # The first character: all of its bits count (the last one of a base64 signature may be padding only).
    forged = ("B" if value[0] != "B" else "C") + value[1:]
    client.cookies.set(COOKIE, forged)
    response = client.get(created["url"])
    assert response.status_code == 404
    assert response.headers["set-cookie"].startswith(f"{COOKIE}=")


@pytest.mark.parametrize("path", ["/", "/exercises/add-one", "/api/exercises", "/healthz", "/static/app.js", "/docs"])
def test_csp_allows_only_own_scripts(client, path):
    headers = client.get(path).headers
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'self'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "http" not in csp
    assert headers["x-content-type-options"] == "nosniff"


def test_pages_have_no_inline_scripts_or_external_assets(client):
    html = client.get("/exercises/add-one").text
    import re

    for tag in re.findall(r"<script[^>]*>", html):
        assert 'src="/static/' in tag or 'type="application/json"' in tag, tag
    assert "http://" not in html and "https://" not in html
    assert " on" + "click=" not in html


@pytest.mark.parametrize("headers", [
    {"origin": "https://evil.example"},
    {"origin": "null"},
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-site"},
])
def test_cross_site_posts_are_refused_and_change_nothing(client, headers):
    response = client.post(URL, json={"source": "x = 1"}, headers=headers)
    assert response.status_code == 403
    assert client.app.state.store.count() == 0


def test_same_origin_post_is_allowed(client):
    headers = {"origin": "http://testserver", "sec-fetch-site": "same-origin"}
    assert client.post(URL, json={"source": "x = 1"}, headers=headers).status_code == 202


def test_submission_content_is_escaped_in_the_history_and_api(client):
    created = client.post(URL, json={"source": EVIL}).json()
    body = wait_done(client, created["id"])
    assert body["source"] == EVIL  # JSON carries it verbatim; the page script writes it as text
    html = client.get("/exercises/add-one").text
    assert "<script>alert(1)" not in html and "onerror=alert" not in html


def test_boot_data_cannot_close_its_script_tag(client):
    # The starter travels in a JSON <script> block; tojson escapes <, > and &.
    html = client.get("/exercises/add-one").text
    block = html.split('<script type="application/json" id="boot">', 1)[1].split("</script>", 1)[0]
    assert "<" not in block and ">" not in block
