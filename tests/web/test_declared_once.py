"""Each fact declared once: a setting that used to have two declarations, changed in its one place, takes effect
everywhere it applies (the source-size limit, the sandbox names, the server commands' options), and a
`PRACTICE_*` variable that nothing reads is warned about."""

from __future__ import annotations

import re
import sys
import typing
from pathlib import Path

import click
import pytest

import judge.parent.job
from cli.main import cli, main
from judge.parent.exercise import find_exercise
from judge.parent.grading import grade
from judge.reports.report import Verdict
from sandbox.backends import SANDBOXES
from sandbox.base import RunOutcome, Sandbox, SandboxError
from tests.web.conftest import FIXTURE_COURSE
from web.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


class NoSandbox(Sandbox):
    """Fails every run: a grading that reaches it was not refused for its size."""

    name = "failing"

    def run(self, job_json, limits, on_message=None, *, inbox=None, pool="default") -> RunOutcome:
        raise SandboxError("no sandbox here")


def test_the_source_limit_changed_in_the_core_holds_for_the_web_the_playground_and_grading(client, monkeypatch):
    from judge.parent.playground import run_playground

    monkeypatch.setattr(judge.parent.job, "MAX_SOURCE_BYTES", 2048)
    fits, over = "#" * 2048, "#" * 2049
    submissions = "/api/exercises/add-one/submissions"
    assert client.post(submissions, json={"source": over}).status_code == 413
    assert client.post(submissions, json={"source": fits}).status_code == 202
    assert client.post("/api/playground", json={"source": over}).status_code == 413
    add_one = find_exercise(FIXTURE_COURSE, "add-one")
    refused = grade(add_one, over, sandbox=NoSandbox())
    assert refused.verdict is Verdict.LOAD_ERROR and "2 KiB" in refused.summary
    assert grade(add_one, fits, sandbox=NoSandbox()).verdict is Verdict.INTERNAL_ERROR  # it went on to run
    assert "2 KiB" in run_playground(over, sandbox=NoSandbox()).summary


def _sandbox_choices(command: click.Command) -> tuple[str, ...]:
    (option,) = [p for p in command.params if p.name in ("sandbox", "sandbox_name")]
    return tuple(option.type.choices)


@pytest.mark.parametrize("words", [["grade"], ["playground"], ["prove"], ["serve"], ["worker"], ["regrade"]])
def test_every_command_takes_the_same_sandbox_names(words):
    command = cli.commands[words[0]]
    assert _sandbox_choices(command) == SANDBOXES
    for name in SANDBOXES:
        assert Settings(sandbox=name).sandbox == name


def test_auto_is_each_commands_own_default(monkeypatch):
    """PRACTICE_SANDBOX=auto, the server's value, no longer breaks the learner's commands."""
    ctx = cli.commands["grade"].make_context("grade", ["add-one", "--sandbox", "auto"])
    assert ctx.params["sandbox"] is None


def _choices_of(info) -> list | None:
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    if "enum" in extra:
        return list(extra["enum"])
    args = typing.get_args(info.annotation)
    if typing.get_origin(info.annotation) is typing.Literal:
        return list(args)
    if args and typing.get_origin(args[0]) is typing.Literal:
        return list(typing.get_args(args[0]))
    return None


@pytest.mark.parametrize("name", ["serve", "worker", "regrade", "db upgrade", "admin add-instructor",
                                  "lti show"])
def test_the_server_commands_options_are_the_settings_fields(name):
    """Every option of these commands that is a setting takes the field's help, choices and default from it: a
    field changed in web/settings.py changes the command."""
    command = cli
    for word in name.split():
        command = command.commands[word]
    settings = [p for p in command.params if p.name in Settings.model_fields]
    assert settings, name
    for param in settings:
        info = Settings.model_fields[param.name]
        assert info.description in param.help and f"PRACTICE_{param.name.upper()}" in param.help
        if info.default_factory is None and info.default not in (None, []):
            shown = ",".join(map(str, info.default)) if isinstance(info.default, list) else str(info.default)
            assert f"default: {shown if not isinstance(info.default, bool) else ('on' if info.default else 'off')}" \
                in param.help
        if _choices_of(info) is not None:
            assert list(param.type.choices) == _choices_of(info)
        assert param.default is None  # the settings model reads the environment and keeps the default


def test_a_changed_field_changes_its_option(monkeypatch):
    from cli.setting_options import setting_option

    monkeypatch.setattr(Settings.model_fields["port"], "default", 9123)
    monkeypatch.setattr(Settings.model_fields["port"], "description", "Where to listen.")

    @click.command()
    @setting_option("port")
    def serve_like(port):
        """A command with the port option."""

    (option,) = serve_like.params
    assert "Where to listen." in option.help and "default: 9123" in option.help


def test_an_unknown_practice_variable_is_warned_about_once_with_the_closest_name(monkeypatch, capsys):
    monkeypatch.setenv("PRACTICE_SANBOX", "docker")
    monkeypatch.setenv("PRACTICE_SANDBOX", "none")  # known: no warning
    monkeypatch.setenv("PRACTICE_POOL_SIZE", "2")  # a sandbox setting
    monkeypatch.setenv("PRACTICE_DAEMON_IDLE_SECONDS", "60")  # a background judge setting
    monkeypatch.setattr(sys, "argv", ["practice", "--lang", "zh", "daemon", "stop", "--help"])
    with pytest.raises(SystemExit):
        main()
    err = capsys.readouterr().err
    assert err.count("PRACTICE_") == 2 and "PRACTICE_SANBOX" in err and "PRACTICE_SANDBOX" in err, err
    assert "被忽略" in err  # in the language asked for


def test_every_practice_variable_the_project_names_is_known():
    """A variable read anywhere (code, scripts, docs) is in the list the warning checks, so it never warns about a
    real one."""
    from cli.environment import known

    pattern = re.compile(r"PRACTICE_[A-Z][A-Z0-9_]*[A-Z0-9]")
    named: set[str] = set()
    for folder in ("judge", "sandbox", "web", "cli", "practice", "scripts", "tests", "docs", "deploy", "benchmarks"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".sh", ".md", ".toml", ".Procfile", "") \
                    and path not in (Path(__file__).resolve(), ROOT / "cli" / "environment.py") \
                    and "node_modules" not in path.parts:
                try:
                    named |= set(pattern.findall(path.read_text(encoding="utf-8")))
                except (UnicodeDecodeError, OSError):
                    continue
    assert named - known() == set()
