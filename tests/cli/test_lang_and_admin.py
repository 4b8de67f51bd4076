"""`--lang` follows the locale, and `practice admin` makes instructor accounts that sign in to the web UI."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cli.main import cli
from web import db
from web.classes import ClassStore
from web.errors import InputError

LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG", "PRACTICE_LANG")


@pytest.mark.parametrize("env, lang", [
    ({}, "en"),
    ({"LANG": "C.UTF-8"}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "zh_TW.UTF-8"}, "zh"),
    ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
    ({"LC_ALL": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
    ({"PRACTICE_LANG": "en", "LANG": "zh_CN.UTF-8"}, "en"),
])
def test_lang_defaults_from_the_locale(env, lang, fake_course, tmp_path):
    full = {name: None for name in LOCALE_VARS} | env | {
        "PRACTICE_EXERCISES_DIR": str(fake_course), "PRACTICE_WORKSPACE": str(tmp_path / "ws"), "COLUMNS": "200"}
    result = CliRunner().invoke(cli, ["hint", "add-one"], env=full, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    chinese = "加一。" in result.output
    assert chinese == (lang == "zh"), result.output


def test_an_explicit_lang_beats_the_locale(fake_course, tmp_path):
    env = {"LANG": "zh_CN.UTF-8", "PRACTICE_EXERCISES_DIR": str(fake_course), "PRACTICE_WORKSPACE": str(tmp_path)}
    result = CliRunner().invoke(cli, ["hint", "add-one", "--lang", "en"], env=env)
    assert result.exit_code == 0 and "加一。" not in result.output


def admin(url: str, *args: str, password: str = "correct horse"):
    return CliRunner().invoke(cli, ["admin", *args, "--password-stdin", "--database-url", url],
                              input=password + "\n")


def test_add_instructor_then_sign_in(tmp_path):
    url = f"sqlite:///{tmp_path / 'class.db'}"  # not migrated yet: add-instructor migrates first
    result = admin(url, "add-instructor", "Alice")
    assert result.exit_code == 0, result.output
    assert "instructor alice added" in result.output and "/signin" in result.output
    engine = db.make_engine(url)
    classes = ClassStore(engine)
    assert classes.sign_in_instructor("alice", "correct horse").username == "alice"
    with pytest.raises(InputError, match="Wrong user name or password"):
        classes.sign_in_instructor("alice", "wrong horse")
    assert admin(url, "set-password", "alice", password="battery staple").exit_code == 0
    assert classes.sign_in_instructor("ALICE", "battery staple").username == "alice"
    engine.dispose()


@pytest.mark.parametrize("args, password, message", [
    (("add-instructor", "alice"), "correct horse", "An instructor named alice exists already: choose another"),
    (("add-instructor", "bob"), "short", "The password is too short: use at least 8 characters."),
    (("add-instructor", "bob smith"), "correct horse", "The user name may hold letters, digits"),
    (("set-password", "carol"), "correct horse", "No instructor is named carol: check the spelling"),
])
def test_admin_says_what_to_fix(args, password, message, tmp_path):
    url = f"sqlite:///{tmp_path / 'class.db'}"
    assert admin(url, "add-instructor", "alice").exit_code == 0
    result = admin(url, *args, password=password)
    assert result.exit_code == 1 and message in result.output, result.output


def test_the_password_prompt_asks_twice(tmp_path):
    url = f"sqlite:///{tmp_path / 'class.db'}"
    result = CliRunner().invoke(cli, ["admin", "add-instructor", "dana", "--database-url", url],
                                input="first password\nother password\nfirst password\nfirst password\n")
    assert result.exit_code == 0 and "do not match" in result.output.lower(), result.output
