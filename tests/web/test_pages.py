"""The HTML pages: exercise list, exercise page, language switch, reference after acceptance."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.web.conftest import CORRECT, WRONG, FakeGrader, wait_done
from web.app import create_app

URL = "/api/exercises/add-one/submissions"


def test_list_shows_title_difficulty_tags_and_state(client):
    html = client.get("/").text
    assert "加一" in html and "warm-up" in html and "未开始" in html
    wait_done(client, client.post(URL, json={"source": WRONG}).json()["id"])
    assert "已尝试" in client.get("/").text
    wait_done(client, client.post(URL, json={"source": CORRECT}).json()["id"])
    assert "badge-solved" in client.get("/").text


def test_language_switch_is_remembered(client):
    assert 'lang="zh-CN"' in client.get("/").text
    english = client.get("/exercises/add-one?lang=en").text
    assert 'lang="en"' in english and "Add one" in english and "Submit" in english
    assert "Write <code>add_one(x)</code>" in english  # the English statement
    again = client.get("/exercises/add-one").text
    assert "Reset to starter" in again and "写一个函数" not in again
    assert "写一个函数" in client.get("/exercises/add-one?lang=zh").text


def test_statement_is_markdown_with_highlighted_code(client):
    html = client.get("/exercises/add-one?lang=en").text
    assert "<h1>Add one</h1>" in html
    assert '<span class="k">assert</span>' in html  # pygments
    css = client.get("/assets/pygments.css")
    assert css.status_code == 200 and ".md pre .k" in css.text


def test_hints_are_all_hidden_at_first(client):
    html = client.get("/exercises/add-one?lang=en").text
    assert html.count('class="hint md" hidden') == 2
    assert "Show next hint" in html
    assert "It is <code>return x + 1</code>." in html  # hints are Markdown


def reference_block(client) -> str:
    html = client.get("/exercises/add-one").text
    return html.split('id="reference-code"', 1)[1].split("</pre>", 1)[0]


def test_reference_appears_only_after_accepted(client):
    assert "hidden><code></code>" in reference_block(client)
    wait_done(client, client.post(URL, json={"source": WRONG}).json()["id"])
    assert "hidden><code></code>" in reference_block(client)
    wait_done(client, client.post(URL, json={"source": CORRECT}).json()["id"])
    assert reference_block(client) == ' class="code" ><code>def add_one(x):\n    return x + 1\n</code>'


def test_history_lists_previous_verdicts(client):
    wait_done(client, client.post(URL, json={"source": WRONG}).json()["id"])
    html = client.get("/exercises/add-one?lang=en").text
    assert "v-WRONG_ANSWER" in html and "Wrong answer" in html
    assert 'id="no-history" class="muted" hidden' in html


def test_unknown_exercise_page_is_404(client):
    response = client.get("/exercises/nope")
    assert response.status_code == 404 and "text/html" in response.headers["content-type"]


def test_static_bundle_is_served(client):
    response = client.get("/static/editor.bundle.js")
    assert response.status_code == 200 and "PracticeEditor" in response.text


def test_api_docs_page_is_self_hosted(client):
    html = client.get("/docs").text
    assert "/static/swagger/swagger-ui-bundle.js" in html and "/static/docs.js" in html
    assert "http" not in html.replace('"/openapi.json"', "")
    assert client.get("/static/swagger/swagger-ui-bundle.js").status_code == 200


def test_an_exercise_that_needs_cuda_says_so_in_the_list_and_on_its_page(settings, grader, tmp_path):
    import shutil

    from fastapi.testclient import TestClient

    from tests.web.conftest import FIXTURE_COURSE
    from web.app import create_app

    course = tmp_path / "gpu-course"
    shutil.copytree(FIXTURE_COURSE, course)
    toml = course / "add-one" / "exercise.toml"
    toml.write_text(toml.read_text().replace('id = "add-one"', 'id = "add-one"\nneeds_cuda = true', 1))
    with TestClient(create_app(settings.model_copy(update={"exercises_dir": course}), grade=grader)) as web:
        assert "需要 CUDA GPU" in web.get("/").text and "需要 CUDA GPU" in web.get("/exercises/add-one").text
        assert "needs a CUDA GPU" in web.get("/?lang=en").text
        assert web.get("/api/exercises").json()[0]["needs_cuda"] is True
    with TestClient(create_app(settings, grade=grader)) as web:
        assert "CUDA GPU" not in web.get("/").text
        assert web.get("/api/exercises").json()[0]["needs_cuda"] is False


def test_the_exercise_page_says_what_the_hidden_tests_are_proven_against(settings, course):
    """The battery (judge/parent/battery.py) under the hints, in the page's language; none for an exercise with no
    pinned wrong solution (the fixture course's own)."""
    with TestClient(create_app(settings, grade=FakeGrader()), base_url="http://testserver") as plain:
        assert 'id="battery"' not in plain.get("/exercises/add-one").text
    (course / "add-one" / "wrong").mkdir()
    (course / "add-one" / "wrong" / "flag.py").write_text("def add_one(x):\n    return x + 1\n", encoding="utf-8")
    toml = course / "add-one" / "exercise.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[[wrong]]\npath = "wrong/flag.py"\nverdict = "FORBIDDEN"\n'
                    'kind = "global-setting"\n', encoding="utf-8")
    settings.exercises_dir = course
    with TestClient(create_app(settings, grade=FakeGrader()), base_url="http://testserver") as tried:
        zh, en = tried.get("/exercises/add-one").text, tried.get("/exercises/add-one?lang=en").text
    assert 'id="battery"' in zh and "1 类共 1 个作弊解法" in zh and "改整个进程的编译器或 torch 设置" in zh
    assert "Proven against 1 attack(s) of 1 kind(s)" in en and "changes a process-wide compiler" in en
