"""`cli.serve.serve`: options over settings, the printed URL, startup errors as click errors."""

from __future__ import annotations

import click
import pytest

from cli.serve import serve
from tests.web.conftest import FIXTURE_COURSE


@pytest.fixture
def ran(monkeypatch):
    calls = []
    monkeypatch.setattr("uvicorn.run", lambda app, **kw: calls.append((app, kw)))
    monkeypatch.setenv("PRACTICE_EXERCISES_DIR", str(FIXTURE_COURSE))
    return calls


def test_serve_builds_the_app_and_prints_the_url(ran, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PRACTICE_ALLOW_UNSANDBOXED", "1")
    serve(host="127.0.0.1", port=8123, data_dir=tmp_path, sandbox="none", reload_exercises=False)
    (app, kw), = ran
    assert kw["host"] == "127.0.0.1" and kw["port"] == 8123
    assert app.state.sandbox_name == "none" and app.state.settings.data_dir == tmp_path
    assert "http://localhost:8123/" in capsys.readouterr().out


def test_unset_options_fall_back_to_env(ran, tmp_path, monkeypatch):
    monkeypatch.setenv("PRACTICE_PORT", "8124")
    monkeypatch.setenv("PRACTICE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("PRACTICE_SANDBOX", "none")
    monkeypatch.setenv("PRACTICE_ALLOW_UNSANDBOXED", "1")
    serve(reload_exercises=False)
    (app, kw), = ran
    assert kw["port"] == 8124 and app.state.settings.data_dir == tmp_path


def test_unsandboxed_without_permission_is_a_click_error(ran, tmp_path, monkeypatch):
    monkeypatch.delenv("PRACTICE_ALLOW_UNSANDBOXED", raising=False)
    with pytest.raises(click.ClickException, match="PRACTICE_ALLOW_UNSANDBOXED"):
        serve(port=8125, data_dir=tmp_path, sandbox="none")
    assert ran == []


def test_broken_course_is_a_click_error(ran, tmp_path, monkeypatch):
    (tmp_path / "course" / "bad").mkdir(parents=True)
    monkeypatch.setenv("PRACTICE_EXERCISES_DIR", str(tmp_path / "course"))
    monkeypatch.setenv("PRACTICE_ALLOW_UNSANDBOXED", "1")
    with pytest.raises(click.ClickException, match="exercise.toml"):
        serve(port=8126, data_dir=tmp_path, sandbox="none")


@pytest.mark.parametrize("name", ["none", "local"])
def test_every_unisolated_choice_of_the_help_serves_when_allowed(name, ran, tmp_path, monkeypatch):
    """`practice serve --sandbox local` was listed by the help and ended in a ValidationError traceback."""
    monkeypatch.setenv("PRACTICE_ALLOW_UNSANDBOXED", "1")
    serve(port=8127, data_dir=tmp_path, sandbox=name)
    (app, _), = ran
    assert app.state.sandbox_name == name


@pytest.mark.parametrize("name", ["none", "local"])
def test_an_unisolated_choice_without_permission_says_how_to_allow_it(name, ran, tmp_path, monkeypatch):
    monkeypatch.delenv("PRACTICE_ALLOW_UNSANDBOXED", raising=False)
    with pytest.raises(click.ClickException, match=f"sandbox '{name}' .*PRACTICE_ALLOW_UNSANDBOXED=1"):
        serve(port=8128, data_dir=tmp_path, sandbox=name)
    assert ran == []


def test_serve_says_in_its_terminal_what_it_warms_and_when_it_is_ready(ran, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PRACTICE_ALLOW_UNSANDBOXED", "1")
    serve(host="127.0.0.1", port=8125, data_dir=tmp_path, sandbox="none", reload_exercises=False)
    (app, _), = ran
    assert "starting the warm graders" in capsys.readouterr().out
    app.state.warm_pools.state = "ready"  # what the warm-up thread sets once uvicorn has started the app
    out = capsys.readouterr().out
    assert "torch-practice: warm graders ready after" in out and "torch-practice: warm after" in out
