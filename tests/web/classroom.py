"""Helpers of the class tests (tests/web): instructors and learners in their own browsers, a class, its table."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient

from tests.web.conftest import wait_done

PASSWORD = "correct horse"
SUBMIT = "/api/exercises/add-one/submissions"


def browser(client: TestClient) -> TestClient:
    """Another browser on the same app: its own cookies."""
    return TestClient(client.app, base_url="http://testserver", follow_redirects=False)


def sign_in(client: TestClient, username: str, password: str = PASSWORD):
    return client.post("/signin", data={"username": username, "password": password}, follow_redirects=False)


def new_class(client: TestClient, name: str = "Class A") -> tuple[str, str]:
    """The class page's path and its join path."""
    created = client.post("/teach/classes", data={"name": name}, follow_redirects=False)
    assert created.status_code == 303, created.text
    class_path = created.headers["location"]
    join_url = re.search(r'id="join-url" readonly value="([^"]+)"', client.get(class_path).text).group(1)
    return class_path, join_url.removeprefix("http://testserver")


def submit(client: TestClient, source: str) -> dict:
    return wait_done(client, client.post(SUBMIT, json={"source": source}).json()["id"])


def message(html: str, element_id: str) -> str:
    return unescape(re.search(rf'id="{element_id}">([^<]*)<', html).group(1))


def table(html: str) -> list[dict]:
    """The class table as the page shows it: one dict per learner row, cells from their data attributes. A class
    nobody has submitted to shows no table, only the learners who joined: each is a row without cells."""
    joined = re.search(r'<ul class="joined" id="joined-learners">(.*?)</ul>', html, re.S)
    if joined:
        return [{"learner": unescape(name), "cells": {}} for name in re.findall(r"<li><a [^>]*>(.*?)</a></li>",
                                                                                 joined.group(1), re.S)]
    rows = []
    for row in re.findall(r'<tr data-learner="([^"]*)">(.*?)</tr>', html, re.S):
        name, body = row
        cells = {m[0]: {"solved": m[1], "attempts": m[2], "last verdict": m[3], "first solved at": m[4]}
                 for m in re.findall(r'data-exercise="([^"]+)"\s+data-solved="(\w+)" data-attempts="(\d+)" '
                                     r'data-last-verdict="(\w*)"\s+data-first-solved="([^"]*)"', body)}
        rows.append({"learner": unescape(name), "cells": cells})
    return rows
