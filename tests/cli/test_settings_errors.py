"""Settings given on the command line or in the environment: a bad value is one line that names the option and
what it accepts, never a traceback; the `--sandbox` choices are the ones each command accepts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cli.main import cli
from sandbox.backends import BACKENDS, SANDBOXES
from tests.web.conftest import FIXTURE_COURSE
from web.settings import Settings


def invoke(*args: str, **env: str):
    return CliRunner().invoke(cli, list(args), env={"PRACTICE_EXERCISES_DIR": str(FIXTURE_COURSE), **env})


def one_line_error(result) -> str:
    assert result.exit_code != 0 and result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert "Traceback" not in result.output and "ValidationError" not in result.output, result.output
    errors = [line for line in lines if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    return errors[0]


@pytest.mark.parametrize("command", [["serve"], ["worker", "--database-url", "postgresql://u@127.0.0.1:1/db"]])
def test_a_bad_environment_value_is_one_line_naming_the_variable(command):
    line = one_line_error(invoke(*command, PRACTICE_WORKERS="many"))
    assert "'many'" in line and "integer" in line and ("PRACTICE_WORKERS" in line or "--concurrency" in line), line


@pytest.mark.parametrize("command", [["serve"], ["worker", "--database-url", "postgresql://u@127.0.0.1:1/db"]])
def test_an_unknown_sandbox_lists_the_choices(command):
    line = one_line_error(invoke(*command, "--sandbox", "chroot"))
    assert all(f"'{name}'" in line for name in SANDBOXES), line


@pytest.mark.parametrize("command", [["serve"], ["worker", "--database-url", "postgresql://u@127.0.0.1:1/db"]])
def test_an_unknown_sandbox_in_the_environment_lists_the_choices(command, monkeypatch):
    line = one_line_error(invoke(*command, PRACTICE_SANDBOX="chroot"))
    assert "chroot" in line and all(name in line for name in SANDBOXES), line


def test_local_without_permission_is_one_line_for_the_worker():
    line = one_line_error(invoke("worker", "--database-url", "postgresql://u@127.0.0.1:1/db", "--sandbox", "local"))
    assert "PRACTICE_ALLOW_UNSANDBOXED=1" in line


def test_the_server_settings_accept_exactly_the_choices_the_cli_offers():
    for name in SANDBOXES:
        assert Settings(sandbox=name).sandbox == name
    with pytest.raises(ValueError, match=f"choose one of: {', '.join(SANDBOXES)} \\["):
        Settings(sandbox="chroot")
    assert SANDBOXES == ("auto", *BACKENDS)


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_the_help_says_the_real_default(command):
    shown = " ".join(invoke(command, "--help").output.split())
    assert f"[{'|'.join(SANDBOXES)}]" in shown and "default auto: bwrap when it runs here" in shown
    assert "default: bwrap)" not in shown
