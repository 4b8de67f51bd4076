"""The playground page and API: linked from every exercise page, in both languages, rate-limited per learner as
submissions are; what a run finds is judge.parent.playground's report (tests/cli/test_playground.py runs real ones)."""

import json
import threading

import pytest

from judge.parent.playground import read_form
from web.playground import EXAMPLE, starter_form


def boot(html: str) -> dict:
    start = html.index('<script type="application/json" id="boot">') + len('<script type="application/json" id="boot">')
    return json.loads(html[start:html.index("</script>", start)])


def test_every_exercise_page_links_to_the_playground(client):
    for exercise in client.get("/api/exercises").json():
        html = client.get(f"/exercises/{exercise['id']}?lang=en").text
        assert f'href="/playground?exercise={exercise["id"]}"' in html and "Try this in the playground" in html
        assert "在试验场里试试" in client.get(f"/exercises/{exercise['id']}?lang=zh").text


@pytest.mark.parametrize("lang, title, run", [("en", "Playground", "Run"), ("zh", "试验场", "运行")])
def test_the_page_speaks_both_languages(client, lang, title, run):
    html = client.get(f"/playground?lang={lang}").text
    assert f"<h1 id=\"pg-title\">{title}</h1>" in html and f">{run}</button>" in html
    from judge.parent.comments import in_language

    assert boot(html)["source"] == in_language(EXAMPLE, lang) and read_form(EXAMPLE)["function"] == "step"


def test_from_an_exercise_the_editor_starts_with_its_starter_in_the_form(client):
    exercise = client.get("/api/exercises").json()[0]
    source = boot(client.get(f"/playground?exercise={exercise['id']}").text)["source"]
    starter = client.get(f"/api/exercises/{exercise['id']}").json()["starter"]
    assert source.startswith(starter.rstrip("\n")) and read_form(source)["calls"] == "example_calls"


def test_starter_form_makes_example_inputs_from_a_contract():
    from judge.parent.exercise import load_exercise
    from judge.shared.paths import EXERCISES_DIR

    source = starter_form(load_exercise(EXERCISES_DIR / "graph-break-step"))
    assert "return [(torch.randn(4, 4), torch.randn(4, 4), )]" in source and read_form(source)["function"] == "step"


def test_a_run_answers_in_the_asked_language(client, fake_playground):
    en = client.post("/api/playground?lang=en", json={"source": EXAMPLE}).json()
    zh = client.post("/api/playground?lang=zh", json={"source": EXAMPLE}).json()
    assert en["summary"].startswith("1 call(s) compiled") and zh["summary"].startswith("1 次调用")
    assert "verdict" not in en


def test_runs_are_rate_limited_per_learner_like_submissions(client, fake_playground, settings):
    for _ in range(settings.submissions_per_minute):
        assert client.post("/api/playground", json={"source": EXAMPLE}).status_code == 200
    refused = client.post("/api/playground", json={"source": EXAMPLE})
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert "playground runs a minute" in refused.json()["detail"]
    client.cookies.clear()  # another learner (a new cookie) is not refused
    assert client.post("/api/playground", json={"source": EXAMPLE}).status_code == 200


def test_one_run_at_a_time_per_learner(client, fake_playground):
    calls, release, started = fake_playground
    release.clear()
    client.get("/")  # the learner's cookie, shared by both requests
    first = {}
    thread = threading.Thread(target=lambda: first.update(r=client.post("/api/playground", json={"source": EXAMPLE})))
    thread.start()
    assert started.wait(10)
    second = client.post("/api/playground", json={"source": EXAMPLE})
    release.set()
    thread.join()
    assert second.status_code == 429 and "still running" in second.json()["detail"]
    assert first["r"].status_code == 200


@pytest.mark.parametrize("body, status", [(b"not json", 422), (json.dumps({"source": 3}).encode(), 422),
                                          (json.dumps({"source": "x" * (70 * 1024)}).encode(), 413)])
def test_bad_bodies_are_refused_as_submissions_are(client, fake_playground, body, status):
    assert client.post("/api/playground", content=body, headers={"content-type": "application/json"}).status_code \
        == status


@pytest.mark.postgres
def test_on_the_postgresql_queue_the_page_says_where_to_run_it_and_the_api_answers_503(postgres, tmp_path,
                                                                                       fake_playground):
    """A deployment whose web processes only defer to `practice worker`s runs no playground: the page says so (in
    its language) with Run off, and the API is a 503 with the same words; nothing is run."""
    from html import unescape

    from fastapi.testclient import TestClient

    from tests.web.conftest import FIXTURE_COURSE
    from web.app import create_app
    from web.settings import Settings

    settings = Settings(data_dir=tmp_path / "data", exercises_dir=FIXTURE_COURSE, database_url=postgres.create(),
                        sandbox="none", allow_unsandboxed=True, workers=1, secret_key="test-secret")
    with TestClient(create_app(settings), base_url="http://testserver") as web:
        assert web.app.state.queue_kind == "procrastinate"
        for lang, words in (("en", "Run `practice playground FILE` on your own machine"),
                            ("zh", "请在你自己的机器上运行 `practice playground FILE`")):
            html = unescape(web.get(f"/playground?lang={lang}").text)
            # the page's code span
            shown = words.replace("`practice playground FILE`", "<code>practice playground FILE</code>")
            assert 'id="pg-on-workers"' in html and shown in html and " disabled>" in html
            refused = web.post(f"/api/playground?lang={lang}", json={"source": EXAMPLE})
            assert refused.status_code == 503 and words in refused.json()["detail"]
    assert fake_playground[0] == []


def test_where_the_web_process_grades_the_run_button_is_on(client):
    html = client.get("/playground?lang=en").text
    assert 'id="pg-on-workers"' not in html and 'Meta+Enter">Run</button>' in html
