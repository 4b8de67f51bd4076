"""Bad input gets a clear JSON error and changes nothing: 413, 422, 429 with Retry-After."""

from __future__ import annotations

import pytest

from tests.web.conftest import CORRECT, wait_done

URL = "/api/exercises/add-one/submissions"
JSON = {"content-type": "application/json"}


def assert_error(response, status, fragment, client):
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    assert fragment in response.json()["detail"]
    assert client.app.state.store.count() == 0


def test_source_over_64_kib_is_413(client):
    source = "# " + "x" * (64 * 1024 - 1)  # 64 KiB + 1 byte
    assert_error(client.post(URL, json={"source": source}), 413, "limit is 65536", client)


def test_source_of_exactly_64_kib_is_accepted(client):
    source = "#" + "é" * ((64 * 1024 - 1) // 2)  # multi-byte characters count as bytes
    assert len(source.encode()) <= 64 * 1024
    assert client.post(URL, json={"source": source}).status_code == 202


def test_huge_body_is_413_before_parsing(client):
    body = b'{"source": "' + b"x" * (1024 * 1024) + b'"}'
    assert_error(client.post(URL, content=body, headers=JSON), 413, "too large", client)


@pytest.mark.parametrize("body, fragment", [
    (b'{"source": "\xff\xfe"}', "not UTF-8"),
    (b"not json", "not JSON"),
    (b"", "not JSON"),
    (b'["source"]', "expected a JSON object"),
    (b'{"code": "x"}', "expected a JSON object"),
    (b'{"source": 42}', "must be a string"),
    (b'{"source": null}', "must be a string"),
    (b'{"source": ["a"]}', "must be a string"),
    (b'{"source": "\\ud800"}', "not valid UTF-8"),
])
def test_malformed_body_is_422(client, body, fragment):
    assert_error(client.post(URL, content=body, headers=JSON), 422, fragment, client)


def test_second_submission_while_grading_is_429(client, grader):
    grader.gate.clear()
    first = client.post(URL, json={"source": CORRECT})
    assert first.status_code == 202
    second = client.post(URL, json={"source": CORRECT})
    assert second.status_code == 429
    assert second.headers["retry-after"] == "5"
    assert "still being graded" in second.json()["detail"]
    assert client.app.state.store.count() == 1
    grader.gate.set()
    wait_done(client, first.json()["id"])
    assert client.post(URL, json={"source": CORRECT}).status_code == 202


def test_more_than_the_rate_per_minute_is_429_with_retry_after(client, settings):
    for _ in range(settings.submissions_per_minute):
        response = client.post(URL, json={"source": CORRECT})
        assert response.status_code == 202
        wait_done(client, response.json()["id"])
    refused = client.post(URL, json={"source": CORRECT})
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert client.app.state.store.count() == settings.submissions_per_minute
    client.cookies.clear()  # the limit is per learner
    assert client.post(URL, json={"source": CORRECT}).status_code == 202
