"""`practice playground FILE [--call EXPR]`: the playground in the terminal, on three files of a user's own (a graph
break in a loop, a recompile from a changing Python int, a clean model), printing what the web playground shows."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from rich.console import Console

from cli.main import cli
from cli.playground import print_playground
from judge.parent.playground import FormError, PlaygroundReport, read_form, run_playground, with_calls
from judge.reports.report import localized

FILES = Path(__file__).parent / "playground_files"
ENV = {"COLUMNS": "200"}


def playground(*args):
    return CliRunner().invoke(cli, ["playground", *map(str, args)], env=ENV, catch_exceptions=False)


def printed(report, lang: str) -> str:
    """What `practice playground` prints for `report` in `lang`."""
    console = Console(record=True, width=200, force_terminal=False)
    print_playground(console, report, lang)
    return console.export_text()


def findings(report: dict) -> dict:
    """What a run found (not how long it took, nor where it ran)."""
    return {k: report[k] for k in ("summary", "translations", "calls", "breaks", "recompiles", "problem")} | {
        "timeline": (report["compiler"] or {}).get("timeline")}


@pytest.fixture(scope="module")
def reports(local):
    """The three files run once each through the warm local sandbox (the CLI's own is made per command)."""
    return {name: run_playground((FILES / f"{name}.py").read_text(), sandbox=local)  # named as the web names it
            for name in ("loop_break", "changing_int", "clean_model")}


@pytest.mark.slow
def test_a_graph_break_in_a_loop(reports, local, tmp_path):
    report = reports["loop_break"]
    text = printed(report, "en")
    assert "1. line 7 (print(\"step\", i))  GB0059" in text  # the code span styled, without its backticks
    assert "PyTorch says Failed to trace builtin operator" in text and "reorderable_logging_functions" in text
    assert "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html" in text
    zh = printed(report, "zh")
    assert "第 7 行" in zh and "PyTorch 的说法 无法追踪内置函数" in zh
    # the web playground shows the same findings for the same file
    from web.app import create_app
    from web.playground import PlaygroundRuns
    from web.settings import Settings

    settings = Settings(data_dir=tmp_path / "data", exercises_dir=Path(__file__).parents[1] / "web" / "fixtures" /
                        "course", sandbox="none", allow_unsandboxed=True, workers=1, secret_key="doctor",
                        database_url=f"sqlite:///{tmp_path}/db.sqlite", queue="embedded")
    app = create_app(settings)
    app.state.playground = PlaygroundRuns()
    app.state.playground.sandbox = local  # the web's run goes through the same warm sandbox
    with TestClient(app, base_url="http://testserver") as client:
        shown = client.post("/api/playground", json={"source": (FILES / "loop_break.py").read_text()})
    assert shown.status_code == 200
    app.state.playground.sandbox = None  # not the app's to close
    assert findings(shown.json()) | {"translations": None} == findings(report.model_dump(mode="json")) | {
        "translations": None}


@pytest.mark.slow
def test_a_recompile_from_a_changing_python_int(reports):
    text = printed(reports["changing_int"], "en")
    assert "1. n == 2 ← line 6 (return h * n)" in text
    assert "a Python number or flag is a constant of the graph" in text
    rows = [line for line in text.splitlines() if line.startswith("│ ")]
    assert [row.split("│")[3].strip() for row in rows] == ["1", "1", "0"]  # compiled again once, for n = 3
    assert [row.split("│")[5].strip() for row in rows] == ["", "6", ""]
    zh = printed(reports["changing_int"], "zh")
    assert "重新编译" in zh and "第 6 行" in zh and "Python 的数字或标志是图里的常量" in zh


@pytest.mark.slow
def test_a_clean_model_shows_its_graph_and_the_code_inductor_generated(reports):
    report = reports["clean_model"]
    assert report.problem is None and report.calls == 2 and not report.breaks and not report.recompiles
    assert len(report.compiler.graphs) == 1 and report.compiler.kernels
    assert [e.compiled for e in report.compiler.timeline] == [1, 0]
    text = printed(report, "en")
    assert "No graph break" in text and "No recompile" in text and "Code Inductor generated (1):" in text
    assert "verdict" not in report.model_dump()  # the playground judges nothing
    # the cost section of the first call, measured by the verifier on the graph it rebuilt (judge.costs.measure)
    from judge.reports.report import CostSection

    cost = CostSection.model_validate(report.cost)
    assert cost.inputs == "float32[8, 16]" and [f.who for f in cost.figures] == ["learner"]
    (mine,) = cost.figures
    assert mine.eager.ops >= 3 and mine.compiled.graphs == 1 and mine.compiled.bytes_estimate > 0
    assert mine.compiled.extern_calls  # the two linear layers' matrix products
    assert "What compiling bought" in text and "Inductor's estimate" in text
    assert "编译的收益" in printed(report, "zh")
    assert reports["changing_int"].cost is None  # "inductor": False: nothing compiled here, so no figures


@pytest.mark.slow
def test_call_writes_the_form_for_a_file_without_one(tmp_path, local):
    from cli.playground import playground_file

    path = tmp_path / "mine.py"
    path.write_text("import torch\n\ndef f(x, n):\n    return x * n\n")
    console = Console(record=True, width=10_000)  # JSON lines unwrapped
    status = playground_file(console, path, ["f(torch.randn(3), 2)", "f(torch.randn(3), 5)"], local, True, "en")
    report = json.loads(console.export_text())
    assert status == 0, report["summary"]
    assert report["calls"] == 2 and report["recompiles"][0]["location"]["line"] == 4
    assert read_form(path.read_text()) == {"function": "f", "calls": "practice_calls", "dynamic": None,
                                           "inductor": True}  # written into the file, as docs/playground.md says


@pytest.mark.parametrize("source, message", [
    ("def f(x):\n    return x\n", "no `__practice__` block"),
    ("__practice__ = dict(function='f')\n", "must be a literal dict"),
    ("__practice__ = {'function': 'f'}\n", "needs \"function\" and \"calls\""),
    ("__practice__ = {'function': 'f', 'calls': 'c', 'fullgraph': True}\n", "unknown key 'fullgraph'"),
    ("__practice__ = {'function': '_f', 'calls': 'c'}\n", "must name a function of this file"),
    ("__practice__ = {'function': 'f', 'calls': 'c', 'dynamic': 'yes'}\n", "'dynamic'"),
])
def test_a_file_not_of_the_form_is_told_what_to_write(source, message):
    with pytest.raises(FormError, match=message.replace("(", r"\(")):
        read_form(source)


def test_the_form_is_reported_without_running_anything(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("raise SystemExit('never imported')\n")
    result = playground(path, "--json")
    report = json.loads(result.output)
    assert result.exit_code == 1 and "no `__practice__` block" in report["summary"] and report["calls"] == 0
    assert report["complete"] is False


@pytest.mark.parametrize("calls, message", [
    (["f(x=1)"], "by position"), (["f(1)", "g(2)"], "same function"), (["1 +"], "not a Python expression"),
    (["print"], "write a call"),
])
def test_bad_call_expressions_are_usage_errors(tmp_path, calls, message):
    with pytest.raises(FormError, match=message):
        with_calls("def f(x):\n    return x\n", calls)
    path = tmp_path / "mine.py"
    path.write_text("def f(x):\n    return x\n")
    args = [a for c in calls for a in ("--call", c)]
    result = CliRunner().invoke(cli, ["playground", str(path), *args], env=ENV)  # refused before anything runs
    assert result.exit_code == 2 and message in result.output


NO_BLOCK = "import torch\n\n\ndef step(x, n):\n    return x * n\n"
ALL_CLEAR = ("No graph break", "No recompile", "没有 graph break", "没有重新编译", "nothing compiled",
             "没有编译任何东西")


@pytest.mark.parametrize("lang, words", [("en", "no `__practice__` block"), ("zh", "没有 `__practice__` 块")])
def test_a_file_without_the_form_is_told_what_to_add_and_nothing_else(tmp_path, lang, words):
    path = tmp_path / "mine.py"
    path.write_text(NO_BLOCK)
    report = run_playground(NO_BLOCK)
    assert report.problem is not None and not report.complete
    assert words in localized(report, lang).summary
    shown = printed(report, lang)
    assert not [w for w in ALL_CLEAR if w in shown], shown  # nothing ran: no result follows the error
    assert shown.count("__practice__ = ") == 1  # the fix, said once (not again as "the run stopped")
    result = playground(path, "--lang", lang)
    assert result.exit_code == 1 and not [w for w in ALL_CLEAR if w in result.output], result.output
    assert f'playground {path} --call "NAME(ARGUMENTS)"' in result.output  # the terminal can write the block


def test_a_run_that_stopped_early_shows_what_it_found_and_no_all_clear():
    from judge.reports.report import ErrorDiagnostic, GraphBreakDiagnostic

    stopped = PlaygroundReport(summary="Your code stopped the run: boom", problem=ErrorDiagnostic(
        exc_type="RuntimeError", message="boom"), breaks=[GraphBreakDiagnostic(reason="a print", explanation="x")])
    shown = printed(stopped, "en")
    assert "Graph breaks" in shown and "1. a line outside your file" in shown  # what it found before it stopped
    assert "No recompile" not in shown and "Recompiles" not in shown
    done = printed(PlaygroundReport(summary="2 call(s) compiled", complete=True), "en")
    assert "No graph break" in done and "No recompile" in done  # measured: every call ran


def test_call_writes_the_block_into_a_file_that_has_none_only(tmp_path):
    from cli.playground import write_calls

    path = tmp_path / "mine.py"
    path.write_text(NO_BLOCK)
    source, written = write_calls(path, NO_BLOCK, ["step(torch.randn(8), 2)", "step(torch.randn(8), 3)"])
    assert written and path.read_text() == source and source.startswith(NO_BLOCK)
    assert read_form(source)["function"] == "step"
    again = path.read_text()
    source, written = write_calls(path, again, ["step(torch.randn(8), 4)"])
    assert not written and path.read_text() == again and "torch.randn(8), 4" in source  # the file kept
    with pytest.raises(FormError):
        write_calls(path, NO_BLOCK, ["step(x=1)"])
    assert path.read_text() == again  # a bad call writes nothing


def test_the_web_playground_says_what_to_add_in_the_page_language_without_the_cli_flag(tmp_path):
    from web.app import create_app
    from web.settings import Settings

    settings = Settings(data_dir=tmp_path / "data", exercises_dir=Path(__file__).parents[1] / "web" / "fixtures" /
                        "course", sandbox="none", allow_unsandboxed=True, workers=1, secret_key="doctor",
                        database_url=f"sqlite:///{tmp_path}/db.sqlite", queue="embedded")
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        zh = client.post("/api/playground?lang=zh", json={"source": NO_BLOCK}).json()
        en = client.post("/api/playground?lang=en", json={"source": NO_BLOCK}).json()
    assert zh["complete"] is False and "没有 `__practice__` 块" in zh["summary"] and "--call" not in zh["summary"]
    assert "no `__practice__` block" in en["summary"] and "--call" not in en["summary"]


def test_doctor_is_the_playground_s_former_name_understood_and_not_listed(tmp_path):
    """`practice doctor` (its former name) runs the playground; `practice --help` lists the one name."""
    path = tmp_path / "mine.py"
    path.write_text("def f(x):\n    return x\n")
    said = [CliRunner().invoke(cli, [word, str(path), "--call", "f("], env=ENV) for word in ("playground", "doctor")]
    assert said[0].exit_code == said[1].exit_code == 2 and said[0].output == said[1].output
    listed = CliRunner().invoke(cli, ["--help"], env=ENV).output
    assert "playground" in listed and "doctor" not in listed
