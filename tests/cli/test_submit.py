"""`practice login` and `practice submit` against a live server: the learner's sign-in link becomes a token
(kept 0600), the file is graded by the server's own grader, the class page shows the verdict and its origin,
and a revoked token is refused."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cli.submitting import Credentials, SubmitError, load_credentials, save_credentials, split_link
from tests.web.live import LiveServer
from tests.web.real_course import BOOK_EXERCISE, book_course
from web.app import create_app
from web.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse"


pytestmark = pytest.mark.usefixtures("cheap_passwords")  # Argon2 at its lowest cost (tests/conftest.py)


def practice(*args: str, config: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRACTICE_CONFIG_DIR": str(config), "PRACTICE_LANG": "en"}
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("url, server, token", [
    ("https://class.example/signin/link/abc-DEF_1", "https://class.example", "abc-DEF_1"),
    ("http://127.0.0.1:8000/course/signin/link/xyz/", "http://127.0.0.1:8000/course", "xyz"),
    ("https://class.example/", "https://class.example", None),
])
def test_a_sign_in_link_names_its_server_and_token(url, server, token):
    assert split_link(url) == (server, token)


def test_an_address_that_is_not_http_says_what_to_give():
    with pytest.raises(SubmitError, match="not an http"):
        split_link("class.example/signin/link/abc")


def test_credentials_are_readable_by_the_user_only(tmp_path, monkeypatch):
    monkeypatch.setenv("PRACTICE_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "credentials.json").write_text("{}")
    os.chmod(tmp_path / "config" / "credentials.json", 0o644)  # a file left readable by others
    path = save_credentials(Credentials("http://x", "tp_secret"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_credentials() == Credentials("http://x", "tp_secret")


def test_submit_without_login_says_how_to_log_in(tmp_path):
    done = practice("submit", BOOK_EXERCISE, str(ROOT / "exercises" / BOOK_EXERCISE / "starter.py"),
                    config=tmp_path / "none", timeout=60)
    assert done.returncode == 2 and "practice login LINK" in done.stderr


@pytest.mark.slow
def test_login_with_a_link_then_submit_counts_in_the_class(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", exercises_dir=book_course(tmp_path, time_factor=4),
                        sandbox="none", allow_unsandboxed=True, workers=1, secret_key="submit-e2e",
                        database_url=f"sqlite:///{tmp_path / 'practice.db'}", queue="embedded")
    app = create_app(settings)
    classes, tokens = app.state.classes, app.state.tokens
    teacher = classes.add_instructor("teacher", PASSWORD)
    klass = classes.create_class(teacher.id, "Compile 101")
    classes.join(klass.id, "learner-ann", "Ann")
    link_token = classes.issue_signin_token("learner-ann")
    config = tmp_path / "config"
    with LiveServer(app) as server:
        logged_in = practice("login", f"{server.url}/signin/link/{link_token}", config=config, timeout=60)
        assert logged_in.returncode == 0, logged_in.stderr
        assert "Compile 101 (as Ann)" in logged_in.stdout
        stored = config / "credentials.json"
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600
        assert link_token not in stored.read_text()  # a token of its own, not the link

        solution = tmp_path / "mine.py"
        solution.write_text((ROOT / "exercises" / BOOK_EXERCISE / "solutions" / "reference.py").read_text())
        sent = practice("submit", BOOK_EXERCISE, str(solution), config=config)
        assert sent.returncode == 0, sent.stdout + sent.stderr
        assert "✓ test_one_graph" in sent.stdout and "Accepted · ACCEPTED" in sent.stdout
        assert "counts in your class" in sent.stdout

        with httpx.Client(base_url=server.url) as instructor:
            assert instructor.post("/signin", data={"username": "teacher", "password": PASSWORD}).status_code == 303
            page = instructor.get(f"/teach/classes/{klass.id}?lang=en").text
        cell = re.search(rf'data-exercise="{BOOK_EXERCISE}".*?</td>', page, re.S).group(0)
        assert 'data-last-verdict="ACCEPTED"' in cell
        assert re.search(r'data-origin="cli"[^>]*>command line<', cell)
        (row,) = [s for s in app.state.store.history("learner-ann", BOOK_EXERCISE)]
        assert row.origin == "cli" and row.verdict == "ACCEPTED" and row.graded_by == "embedded"

        tokens.revoke_all("learner-ann")  # the learner revoked it on /me, or the instructor reissued it
        refused = practice("submit", BOOK_EXERCISE, str(solution), config=config, timeout=60)
        assert refused.returncode == 2
        assert "refused your token" in refused.stderr and "wrong or was revoked" in refused.stderr
        assert len(app.state.store.history("learner-ann", BOOK_EXERCISE)) == 1


def test_login_submit_logout_then_submit_is_refused(tmp_path):
    """`practice logout` revokes the token on the server and forgets it: the next `practice submit` says how to log
    in again, and the old token is a 401 at the server."""
    from tests.web.conftest import CORRECT, FIXTURE_COURSE, FakeGrader

    settings = Settings(data_dir=tmp_path / "data", exercises_dir=FIXTURE_COURSE, sandbox="none",
                        allow_unsandboxed=True, workers=1, secret_key="logout-e2e",
                        database_url=f"sqlite:///{tmp_path / 'practice.db'}", queue="embedded")
    app = create_app(settings, grade=FakeGrader())  # the server's grader: what logout changes is not grading
    classes = app.state.classes
    klass = classes.create_class(classes.add_instructor("teacher", PASSWORD).id, "Compile 101")
    classes.join(klass.id, "learner-ann", "Ann")
    config = tmp_path / "config"
    solution = tmp_path / "mine.py"
    solution.write_text(CORRECT)
    with LiveServer(app) as server:
        link = f"{server.url}/signin/link/{classes.issue_signin_token('learner-ann')}"
        assert practice("login", link, config=config, timeout=60).returncode == 0
        token = load_credentials_from(config).token
        sent = practice("submit", "add-one", str(solution), "--note", "tried x + 1\nat last", config=config)
        assert sent.returncode == 0 and "ACCEPTED" in sent.stdout, sent.stdout + sent.stderr
        (row,) = app.state.store.history("learner-ann", "add-one")
        assert (row.origin, row.note) == ("cli", "tried x + 1 at last")  # on the learner's timeline, one line

        out = practice("logout", config=config, timeout=60)
        assert out.returncode == 0 and "Signed out: the token is revoked and forgotten." in out.stdout
        assert not (config / "credentials.json").exists()
        with httpx.Client(base_url=server.url) as anyone:  # revoked on the server, not only forgotten here
            assert anyone.get("/api/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401

        refused = practice("submit", "add-one", str(solution), config=config, timeout=60)
        assert refused.returncode == 2 and "practice login LINK" in refused.stderr, refused.stderr
        again = practice("logout", config=config, timeout=60)
        assert again.returncode == 0 and "You were not signed in." in again.stdout
    assert len(app.state.store.history("learner-ann", "add-one")) == 1  # the refused submit sent nothing


def load_credentials_from(config: Path) -> Credentials:
    import json

    stored = json.loads((config / "credentials.json").read_text())
    return Credentials(stored["server"], stored["token"])
