"""Settings from the environment, the sandbox choice, and exercises reloaded after edits."""

from __future__ import annotations

import shutil
import time

import pytest

from sandbox.backends import unavailable_reason as unavailable
from tests.web.conftest import FIXTURE_COURSE
from web.course import Course
from web.graders import StartupError, choose_sandbox
from web.settings import Settings


def test_env_vars_override_defaults(monkeypatch, tmp_path):
    monkeypatch.setenv("PRACTICE_PORT", "9123")
    monkeypatch.setenv("PRACTICE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("PRACTICE_ALLOW_UNSANDBOXED", "1")
    monkeypatch.setenv("PRACTICE_SUBMISSIONS_PER_MINUTE", "3")
    settings = Settings()
    assert (settings.port, settings.data_dir, settings.allow_unsandboxed) == (9123, tmp_path, True)
    assert settings.submissions_per_minute == 3
    assert settings.resolved_database_url() == f"sqlite:///{tmp_path.resolve() / 'practice.db'}"


def test_every_setting_has_help_text():
    assert all(field.description for field in Settings.model_fields.values())


def test_secret_key_is_generated_once_and_kept(tmp_path):
    first = Settings(data_dir=tmp_path).resolved_secret_key()
    assert len(first) == 64 and Settings(data_dir=tmp_path).resolved_secret_key() == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


BWRAP_MISSING = "bubblewrap is not installed"


@pytest.mark.parametrize("name, allow, bwrap, expected", [
    ("auto", False, None, "bwrap"),
    ("auto", True, None, "bwrap"),
    ("auto", True, BWRAP_MISSING, "none"),
    ("none", True, None, "none"),
    ("docker", False, None, "docker"),
    ("bwrap", False, None, "bwrap"),
])
def test_sandbox_choice(monkeypatch, name, allow, bwrap, expected):
    monkeypatch.setattr("web.graders.unavailable_reason", lambda n: bwrap if n == "bwrap" else None)
    assert choose_sandbox(Settings(sandbox=name, allow_unsandboxed=allow)) == expected


@pytest.mark.parametrize("name, bwrap", [("none", None), ("auto", BWRAP_MISSING)])
def test_unsandboxed_is_refused_unless_allowed(monkeypatch, name, bwrap):
    monkeypatch.setattr("web.graders.unavailable_reason", lambda n: bwrap if n == "bwrap" else None)
    with pytest.raises(StartupError, match="PRACTICE_ALLOW_UNSANDBOXED"):
        choose_sandbox(Settings(sandbox=name, allow_unsandboxed=False))


def test_an_unavailable_backend_is_refused_at_startup(monkeypatch):
    monkeypatch.setattr("web.graders.unavailable_reason",
                        lambda n: "the engine does not answer" if n == "docker" else None)
    with pytest.raises(StartupError, match="'docker' is unavailable: the engine does not answer"):
        choose_sandbox(Settings(sandbox="docker"))


def test_unknown_sandbox_name_is_a_settings_error():
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Settings(sandbox="chroot")


def test_unavailable_asks_the_backend():
    from sandbox import bwrap_backend

    assert unavailable("none") is None
    assert unavailable("bwrap") == bwrap_backend.available()


def wait_for(predicate, timeout=15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_reload_picks_up_edits_and_keeps_the_course_when_an_edit_is_broken(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(FIXTURE_COURSE, root)
    course = Course(root, reload=True)
    try:
        toml = root / "add-one" / "exercise.toml"
        time.sleep(0.3)  # let the watcher start
        toml.write_text(toml.read_text().replace('en = "Add one"', 'en = "Add one, edited"'))
        assert wait_for(lambda: course.get("add-one").title.en == "Add one, edited")
        toml.write_text(toml.read_text().replace("difficulty = 1", "difficulty = 9"))
        time.sleep(1.5)
        assert course.get("add-one").title.en == "Add one, edited"  # the broken edit is not loaded
    finally:
        course.close()


def test_without_reload_edits_are_not_seen(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(FIXTURE_COURSE, root)
    course = Course(root)
    toml = root / "add-one" / "exercise.toml"
    toml.write_text(toml.read_text().replace('en = "Add one"', 'en = "Changed"'))
    time.sleep(0.5)
    assert course.get("add-one").title.en == "Add one"
