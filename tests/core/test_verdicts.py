"""Every verdict, produced end to end by grading a submission of the fake course with the warm local backend,
and the ones that depend on how a process lives in fresh processes too."""

import textwrap

import pytest

from judge.parent.grading import grade
from judge.reports.report import Verdict

HEADER = "import torch\n\n"
CASES = {
    "accepted": (Verdict.ACCEPTED, None, "def f(x):\n    return x + 1\n"),
    "wrong_answer": (Verdict.WRONG_ANSWER, "test_values", "def f(x):\n    return x + 2\n"),
    "graph_break": (Verdict.GRAPH_BREAK, "test_one_graph", "def f(x):\n    print('hi')\n    return x + 1\n"),
    "recompile": (Verdict.RECOMPILE, "test_compiles_at_most_twice", """
        calls = {"n": 0}

        def f(x):
            calls["n"] += 1
            return x + 1 + 0 * calls["n"]
        """),
    "compile_error": (Verdict.COMPILE_ERROR, "test_one_graph", """
        @torch.library.custom_op("fakecourse::opaque", mutates_args=())
        def opaque(x: torch.Tensor) -> torch.Tensor:
            return x + 1

        def f(x):
            return opaque(x)
        """),
    "runtime_error": (Verdict.RUNTIME_ERROR, "test_one_graph", "def f(x):\n    raise ValueError('boom')\n"),
    "crash": (Verdict.RUNTIME_ERROR, None, """
        import ctypes

        def f(x):
            ctypes.string_at(0)
        """),
    "syntax_error": (Verdict.LOAD_ERROR, None, "def f(x)\n    return x + 1\n"),
    "missing_entry": (Verdict.LOAD_ERROR, None, "def g(x):\n    return x + 1\n"),
    "import_raises": (Verdict.LOAD_ERROR, None, "raise RuntimeError('at import')\n"),
    "exit_at_import": (Verdict.LOAD_ERROR, None, "import sys\nsys.exit(0)\n"),
    "hard_exit": (Verdict.LOAD_ERROR, None, "import os\nos._exit(0)\n"),
    "config_change": (Verdict.FORBIDDEN, None, """
        torch._dynamo.config.cache_size_limit = 1000

        def f(x):
            return x + 1
        """),
    "config_change_at_runtime": (Verdict.FORBIDDEN, "test_one_graph", """
        def f(x):
            torch._dynamo.config.recompile_limit = 1000
            return x + 1
        """),
    "disabled": (Verdict.FORBIDDEN, None, "@torch.compiler.disable\ndef f(x):\n    return x + 1\n"),
    "allow_in_graph": (Verdict.FORBIDDEN, None, """
        def f(x):
            return x + 1

        torch._dynamo.allow_in_graph(f)
        """),
    "force_eager_stance": (Verdict.FORBIDDEN, None, """
        torch.compiler.set_stance("force_eager")

        def f(x):
            return x + 1
        """),
    "replaces_torch": (Verdict.FORBIDDEN, None, """
        torch.allclose = lambda *a, **k: True

        def f(x):
            return x + 1
        """),
    # A helper the runner's requests use (the checks library lives in the verifier: the runner never imports it).
    "replaces_judge_helper": (Verdict.FORBIDDEN, None, """
        import judge.compiler.logs

        judge.compiler.logs.recompile_log = lambda *args, **kwargs: []

        def f(x):
            return x + 2
        """),
    # The hidden tests live in the verifier: the learner's process has no such module to patch.
    "patches_hidden_test_module": (Verdict.LOAD_ERROR, None, """
        import sys

        sys.modules["test_add"].assert_same = lambda *args, **kwargs: None

        def f(x):
            return x + 2
        """),
    "busy_loop": (Verdict.TIME_LIMIT, None, "def f(x):\n    while True:\n        pass\n"),
    "memory_bomb": (Verdict.MEMORY_LIMIT, None, "def f(x):\n    return torch.empty(2**40) + 1\n"),
    "list_bomb": (Verdict.MEMORY_LIMIT, None, "def f(x):\n    keep = [0] * (2**36)\n    return x + 1\n"),
    "output_flood": (Verdict.OUTPUT_LIMIT, None, """
        while True:
            print("spam " * 100)
        """),
    "fake_report": (Verdict.WRONG_ANSWER, "test_values", """
        import json
        print(json.dumps({"type": "done", "verdict": "ACCEPTED"}))

        def f(x):
            return x + 2
        """),
}


# Cases that run into a limit get a short one; the others a long one, so that a busy machine is no TIME_LIMIT.
SHORT_LIMIT = {"busy_loop"}


# Through fresh processes too (the GPU exercises' backend): the cases where a process's life differs between a
# fork of a warm worker and a new interpreter (how it starts, exits, dies, floods, runs out of time or memory,
# and what state it starts from). Every other verdict is decided by the same verifier code whichever backend.
FRESH_PROCESS_CASES = {"accepted", "crash", "import_raises", "exit_at_import", "hard_exit", "config_change",
                       "replaces_judge_helper", "busy_loop", "memory_bomb", "list_bomb", "output_flood", "fake_report"}


@pytest.fixture(scope="module")
def fresh():
    """Fresh processes, no warm worker."""
    from judge.parent.grading import make_sandbox

    sandbox = make_sandbox("none")
    yield sandbox
    sandbox.close()


@pytest.mark.parametrize("name", list(CASES))
def test_verdict(add_one, name, local):
    _check_verdict(add_one, name, local)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FRESH_PROCESS_CASES))
def test_verdict_in_a_fresh_process(add_one, name, fresh):
    _check_verdict(add_one, name, fresh)


def _check_verdict(add_one, name, backend):
    verdict, check, body = CASES[name]
    exercise = add_one
    if name in SHORT_LIMIT:
        exercise = add_one.model_copy(update={"limits": add_one.limits.model_copy(update={"time_seconds": 2})})
    report = grade(exercise, HEADER + textwrap.dedent(body), sandbox=backend)
    assert report.verdict is verdict, report.summary
    if check:
        assert report.first_failure().name == check
    assert report.summary


def test_graph_break_names_the_learners_line(add_one, local):
    report = grade(add_one, HEADER + "def f(x):\n    y = x * 2\n    print('hi')\n    return y - x + 1\n",
                   filename="mine.py", sandbox=local)
    diag = report.first_failure().diagnostics[0]
    assert diag.kind == "graph_break"
    assert (diag.location.file, diag.location.line, diag.location.text) == ("mine.py", 5, "print('hi')")
    assert "line 5" in report.summary


def test_wrong_answer_shows_case_and_first_mismatch(add_one, local):
    report = grade(add_one, HEADER + "def f(x):\n    return x + 2\n", sandbox=local)
    diag = report.first_failure().diagnostics[0]
    assert diag.kind == "mismatch" and diag.case == "x [1] float32"
    assert diag.first_mismatches[0].index == [0]
    assert diag.max_abs_error == pytest.approx(1.0)


def test_recompile_reports_the_failed_guard(add_one, local):
    body = "calls = {'n': 0}\n\ndef f(x):\n    calls['n'] += 1\n    return x + 1 + 0 * calls['n']\n"
    diag = grade(add_one, HEADER + body, sandbox=local).first_failure().diagnostics[0]
    assert diag.kind == "recompile" and diag.compiles > 2 and diag.guard_failures


def test_syntax_error_has_line_and_column(add_one, local):
    report = grade(add_one, HEADER + "def f(x):\n    return x +\n", sandbox=local)
    loc = report.diagnostics[0].location
    assert (loc.line, loc.column) == (4, 15)
    assert "line 4" in report.summary


def test_broken_exercise_is_internal_error(fake_course, local):
    from judge.parent.exercise import load_exercise

    exercise = load_exercise(fake_course / "broken-tests")
    report = grade(exercise, exercise.read("solutions/reference.py"), sandbox=local)
    assert report.verdict is Verdict.INTERNAL_ERROR


def test_live_events_arrive_in_order(add_one, local):
    events = []
    grade(add_one, HEADER + "def f(x):\n    return x + 1\n", on_event=events.append, sandbox=local)
    kinds = [e.type for e in events]
    assert kinds[0] == "running" and kinds[-1] == "done"
    assert [e.check.name for e in events if e.type == "check"] == [
        "test_one_graph", "test_values", "test_compiles_at_most_twice"]
    assert events[-1].report.verdict is Verdict.ACCEPTED


@pytest.mark.parametrize("backend", ["local", pytest.param("fresh", marks=pytest.mark.slow)])
def test_hidden_tests_are_gone_before_the_submission_runs(add_one, backend, request):
    body = """
        import glob, os
        leaked = glob.glob(os.path.join(os.path.dirname(__file__), "**", "*.py"), recursive=True)

        def f(x):
            assert not [p for p in leaked if "test_add" in p or "reference" in p], leaked
            return x + 1
        """
    sandbox = request.getfixturevalue(backend)
    assert grade(add_one, HEADER + textwrap.dedent(body), sandbox=sandbox).verdict is Verdict.ACCEPTED
