"""`practice doctor FILE [--call EXPR]`: the playground in the terminal, on three files of a user's own (a graph
break in a loop, a recompile from a changing Python int, a clean model), printing what the web playground shows."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from cli.main import cli
from judge.doctor import FormError, read_form, with_calls

FILES = Path(__file__).parent / "doctor_files"
ENV = {"COLUMNS": "200", "PRACTICE_SANDBOX": "none"}
SHOWN_ELSEWHERE = {"duration_s", "sandbox"}  # how long it took and where it ran differ between two runs


def doctor(*args):
    return CliRunner().invoke(cli, ["doctor", *map(str, args)], env=ENV, catch_exceptions=False)


def found(report: dict) -> dict:
    return {k: v for k, v in report.items() if k not in SHOWN_ELSEWHERE}


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    from web.app import create_app
    from web.settings import Settings

    data = tmp_path_factory.mktemp("web")
    settings = Settings(data_dir=data / "data", exercises_dir=Path(__file__).parents[1] / "web" / "fixtures" / "course",
                        sandbox="none", allow_unsandboxed=True, workers=1, secret_key="doctor",
                        database_url=f"sqlite:///{data}/db.sqlite", queue="embedded")
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        yield client


@pytest.mark.slow
def test_a_graph_break_in_a_loop(web):
    result = doctor(FILES / "loop_break.py", "--lang", "en")
    assert result.exit_code == 0, result.output
    assert "1. line 7 (`print(\"step\", i)`)  GB0059" in result.output
    assert "PyTorch says Failed to trace builtin operator" in result.output
    assert "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html" in result.output
    zh = doctor(FILES / "loop_break.py", "--lang", "zh", "--json")
    shown = web.post("/api/playground", json={"source": (FILES / "loop_break.py").read_text()})
    assert shown.status_code == 200
    assert found(json.loads(zh.output)) == found(shown.json())  # the web playground shows the same findings


@pytest.mark.slow
def test_a_recompile_from_a_changing_python_int():
    result = doctor(FILES / "changing_int.py", "--lang", "en")
    assert result.exit_code == 0, result.output
    assert "1. `n == 2` ← line 6 (`return h * n`)" in result.output
    assert "a Python number or flag is a constant of the graph" in result.output
    timeline = [line for line in result.output.splitlines() if line.startswith("│ ")]
    assert [row.split("│")[3].strip() for row in timeline] == ["1", "1", "0"]  # compiled again once, for n = 3
    zh = doctor(FILES / "changing_int.py", "--lang", "zh").output
    assert "重新编译" in zh and "第 6 行" in zh


@pytest.mark.slow
def test_a_clean_model_shows_its_graph_and_the_code_inductor_generated():
    result = doctor(FILES / "clean_model.py", "--lang", "en", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["problem"] is None and report["calls"] == 2 and not report["breaks"] and not report["recompiles"]
    assert len(report["compiler"]["graphs"]) == 1 and report["compiler"]["kernels"]
    assert [e["compiled"] for e in report["compiler"]["timeline"]] == [1, 0]
    assert "verdict" not in report  # the playground judges nothing


@pytest.mark.slow
def test_call_writes_the_form_for_a_file_without_one(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("import torch\n\ndef f(x, n):\n    return x * n\n")
    result = doctor(path, "--call", "f(torch.randn(3), 2)", "--call", "f(torch.randn(3), 5)", "--json")
    report = json.loads(result.output)
    assert result.exit_code == 0 and report["calls"] == 2 and report["recompiles"][0]["location"]["line"] == 4


@pytest.mark.parametrize("source, message", [
    ("def f(x):\n    return x\n", "no __practice__ block"),
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
    result = doctor(path, "--json")
    report = json.loads(result.output)
    assert result.exit_code == 1 and "no __practice__ block" in report["summary"] and report["calls"] == 0


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
    result = CliRunner().invoke(cli, ["doctor", str(path), *args], env=ENV)
    assert result.exit_code == 2 and message in result.output
