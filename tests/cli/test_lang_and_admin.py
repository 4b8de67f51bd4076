"""`--lang` follows the locale and every learner-facing command speaks it, and `practice admin` makes instructor
accounts that sign in to the web UI."""

from __future__ import annotations

from pathlib import Path

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


GRAPH_BREAK_STEP = Path(__file__).resolve().parents[2] / "exercises" / "graph-break-step"
OTHER = {"zh": "en_US.UTF-8", "en": "zh_CN.UTF-8"}  # a locale saying the other language: --lang must win
# What the CLI itself prints around a WRONG_ANSWER report with mismatches (not the judge's messages, which
# other catalogs translate), and the hidden tests' check titles, in each language.
GRADED = {
    "zh": ["答案错误 · WRONG_ANSWER", "中最先不一致的元素：", "：应为 ", "，实际为 ", " 秒 · torch ",
           " · 沙箱 none（每次新起进程，无隔离）",
           "✗ test_sum_exactly_zero — h.sum() 恰好为 0 而 h 不全为 0 时，编译后的 step 与原函数相同",
           "✓ test_one_graph — torch.compile(step, fullgraph=True) 只捕获一张图"],
    "en": ["Wrong answer · WRONG_ANSWER", "first mismatches of ", ": expected ", ", got ", " s · torch ",
           " · sandbox none (fresh processes, no isolation)",
           "✗ test_sum_exactly_zero — The compiled step equals the original when h.sum() is exactly zero but h is not",
           "✓ test_one_graph — torch.compile(step, fullgraph=True) captures exactly one graph"],
}
# The CLI's own English labels, none of which may be left in a Chinese report (": expected " and ", got " may:
# the judge's own messages say them until their catalog is translated).
ENGLISH_LABELS = ["Wrong answer", "first mismatches", " s · torch", "· sandbox", "(same failure as above)",
                  "Dynamo's reason", "details (raw)", "error:", "no isolation"]


def learner(lang: str, *args: str, exercises: Path | None = None, workspace: Path):
    env = {name: None for name in LOCALE_VARS} | {"LANG": OTHER[lang], "PRACTICE_WORKSPACE": str(workspace),
                                                  "COLUMNS": "400"}
    if exercises is not None:
        env["PRACTICE_EXERCISES_DIR"] = str(exercises)
    return CliRunner().invoke(cli, [*args, "--lang", lang], env=env)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_wrong_solution_is_graded_in_the_learners_language(lang, tmp_path):
    mine = tmp_path / "mine.py"
    mine.write_text((GRAPH_BREAK_STEP / "wrong" / "sign_scale.py").read_text())
    result = learner(lang, "graph-break-step", str(mine), "--exercises", str(GRAPH_BREAK_STEP.parent),
                     workspace=tmp_path / "ws")
    assert result.exit_code == 1, result.output
    # Compared without whitespace: the console keeps the width of the first test that made it, so a long
    # line may wrap anywhere (between two Chinese characters too).
    shown = unwrapped(result.output)
    for expected in GRADED[lang]:
        assert unwrapped(expected) in shown, (expected, result.output)
    other = GRADED["en" if lang == "zh" else "zh"]
    for label in other[:2] + other[4:6]:
        assert unwrapped(label) not in shown, (label, result.output)
    if lang == "zh":
        for label in ENGLISH_LABELS:
            assert unwrapped(label) not in shown, (label, result.output)


def unwrapped(text: str) -> str:
    return "".join(text.split())


def test_show_graphs_prints_the_compiler_s_view_of_the_last_grading(tmp_path):
    ws, exercises = tmp_path / "ws", str(GRAPH_BREAK_STEP.parent)
    before = learner("zh", "show", "graph-break-step", "--graphs", exercises=GRAPH_BREAK_STEP.parent, workspace=ws)
    assert before.exit_code == 1 and "还没有评测过" in before.output, before.output
    mine = tmp_path / "mine.py"
    mine.write_text((GRAPH_BREAK_STEP / "wrong" / "sign_scale.py").read_text())
    learner("zh", "graph-break-step", str(mine), "--exercises", exercises, workspace=ws)
    shown = learner("zh", "show", "graph-break-step", "--graphs", exercises=GRAPH_BREAK_STEP.parent, workspace=ws)
    assert shown.exit_code == 0, shown.output
    for expected in ["编译器把你的代码变成了什么", "图 1 · 来自你的第", "# File: mine.py:", "torch.sign",
                     "guard（Dynamo 打印的原文）", "TREE_GUARD_MANAGER"]:
        assert unwrapped(expected) in unwrapped(shown.output), (expected, shown.output)


def test_list_show_hint_and_errors_speak_chinese(fake_course, tmp_path):
    ws = tmp_path / "ws"
    listed = learner("zh", "list", exercises=fake_course, workspace=ws)
    assert listed.exit_code == 0, listed.output
    for label in ("torch-practice 练习", "难度", "状态", "未开始", "评测一道题："):
        assert label in listed.output, listed.output
    shown = learner("zh", "show", "add-one", exercises=fake_course, workspace=ws)
    assert shown.exit_code == 0, shown.output
    assert f"你的文件：{ws / 'add_one.py'}（" in shown.output and "提示：共 1 条" in shown.output, shown.output
    hinted = learner("zh", "hint", "add-one", exercises=fake_course, workspace=ws)
    assert "提示 1/1：" in hinted.output and "加一。" in hinted.output, hinted.output
    again = learner("zh", "hint", "add-one", exercises=fake_course, workspace=ws)
    assert "这已经是最后一条提示" in again.output, again.output
    missing = learner("zh", "add-one", str(tmp_path / "nope.py"), exercises=fake_course, workspace=ws)
    assert missing.exit_code == 2 and f"错误： {tmp_path / 'nope.py'}：文件不存在" in missing.output, missing.output
    unknown = learner("zh", "frobnicate", exercises=fake_course, workspace=ws)
    assert unknown.exit_code == 2 and "没有名为 'frobnicate' 的命令或题目" in unknown.output, unknown.output
    english = ["torch-practice exercises", "not started", "Grade one", "Your file", "Hint 1/1", "last hint",
               "error:", "no such file", "no such command"]
    for output in (listed.output, shown.output, hinted.output, again.output, missing.output, unknown.output):
        for label in english:
            assert label not in output, (label, output)


def test_the_watch_loop_speaks_the_learners_language(add_one, tmp_path, monkeypatch):
    from rich.console import Console

    import cli.terminal_grading
    from cli.workspace import Workspace

    class Idle:
        def close(self):
            pass

    graded = []
    monkeypatch.setattr(cli.terminal_grading, "_sandbox", lambda name: Idle())
    monkeypatch.setattr(cli.terminal_grading, "grade_file", lambda *args, **kwargs: graded.append(kwargs["lang"]))
    monkeypatch.setattr("watchfiles.watch", lambda path, **kwargs: iter([{("modified", str(path))}]))
    path = tmp_path / "mine.py"
    path.write_text("import torch\n")
    console = Console(record=True, width=400)
    cli.terminal_grading.watch_file(console, add_one, path, Workspace(tmp_path / "ws"), "none", lang="zh")
    out = console.export_text()
    assert graded == ["zh", "zh"]
    assert f"正在监视 {path}：保存即重新评测" in out and "mine.py 已修改" in out, out
    assert "Watching" not in out and "changed" not in out, out


def test_practice_alone_lists_in_the_language_of_practice_lang(fake_course, tmp_path):
    env = {name: None for name in LOCALE_VARS} | {"PRACTICE_LANG": "zh", "LANG": "en_US.UTF-8", "COLUMNS": "200",
                                                  "PRACTICE_EXERCISES_DIR": str(fake_course),
                                                  "PRACTICE_WORKSPACE": str(tmp_path / "ws")}
    result = CliRunner().invoke(cli, [], env=env, catch_exceptions=False)
    assert result.exit_code == 0 and "未开始" in result.output and "not started" not in result.output, result.output


def test_a_report_s_labels_and_texts_come_in_the_learners_language():
    from rich.console import Console

    from cli.render import print_report
    from judge.reports.i18n import T
    from judge.reports.report import CheckResult, ErrorDiagnostic, GraphDiagnostic, Report, Verdict

    check = CheckResult(name="test_one", title=T("one graph", zh="一张图"), passed=False, verdict=Verdict.GRAPH_BREAK,
                        message=T("two graphs", zh="两张图"),
                        diagnostics=[GraphDiagnostic(title=T("captured graph", zh="捕获的图"),
                                                     code="def forward(self, x):\n    return (x,)")])
    report = Report(exercise_id="x", verdict=Verdict.GRAPH_BREAK, summary=T("broke", zh="中断了"),
                    checks=[check, check.model_copy(update={"name": "test_two"})], trust="self-checked",
                    diagnostics=[ErrorDiagnostic(exc_type="ValueError", message="bad value")])
    said = {}
    for lang in ("zh", "en"):
        console = Console(record=True, width=400)
        print_report(console, report, lang=lang)
        said[lang] = console.export_text()
    for zh, en in [("图中断 · GRAPH_BREAK", "Graph break · GRAPH_BREAK"), ("中断了", "broke"),
                   ("test_one — 一张图", "test_one — one graph"), ("两张图", "two graphs"),
                   ("（与上面的失败相同）", "(same failure as above)"), ("图： 捕获的图", "graph: captured graph"),
                   ("自检题目：", "self-checked exercise:"), ("详情（原文）： ValueError: bad value",
                                                         "details (raw): ValueError: bad value")]:
        assert zh in said["zh"] and en not in said["zh"], (zh, en, said["zh"])
        assert en in said["en"] and zh not in said["en"], (zh, en, said["en"])
    assert "def forward(self, x):" in said["zh"]


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
    (("add-instructor", "bob"), "short", "The password is too short: use at least 10 characters"),
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


def test_a_password_too_short_is_refused_before_it_is_asked_again(tmp_path):
    url = f"sqlite:///{tmp_path / 'class.db'}"
    result = CliRunner().invoke(cli, ["admin", "add-instructor", "erin", "--database-url", url],
                                input="abc\nlong enough horse\nlong enough horse\n")
    assert result.exit_code == 0, result.output
    said = result.output
    assert "too short" in said and said.index("too short") < said.lower().index("repeat")  # before the second entry
    assert said.lower().count("repeat") == 1


@pytest.mark.parametrize("argv0, typed", [("practice/judge.py", "python practice/judge.py graph-break-step"),
                                          ("/venv/bin/practice", "practice graph-break-step")])
def test_show_cost_before_grading_names_the_command_the_learner_ran(tmp_path, monkeypatch, argv0, typed):
    import sys

    monkeypatch.setattr(sys, "argv", [argv0, "show", "graph-break-step", "--cost"])
    result = learner("en", "show", "graph-break-step", "--cost", workspace=tmp_path / "ws")
    assert result.exit_code == 1 and f"run {typed} first" in " ".join(result.output.split()), result.output
