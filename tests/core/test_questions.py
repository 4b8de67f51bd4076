"""Questions about a learner's own file, answered by compiling it (judge/parent/questions.py): change the file so that
the right answer changes, and the judge's expected answer changes with it. Real compiles through the playground's
runner and verifier (the warm `local` sandbox), so marked slow (the proofs lane)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.parent.exercise import load_exercise
from judge.parent.playground import run_playground
from judge.parent.questions import FILENAME, check, first_change, graph_nodes, make_questions, normalized, reverted

ROOT = Path(__file__).resolve().parents[2]
BOOK = load_exercise(ROOT / "exercises" / "graph-break-step")
REFERENCE = (BOOK.root / "solutions" / "reference.py").read_text()
# The same fix one line lower, and a second matmul after it: Inductor's one fused kernel splits in two.
MOVED = REFERENCE.replace("    h = torch.where(", "    # keep the branch in the graph\n    h = torch.where(").replace(
    "    return torch.relu(h)", "    h = h @ w  # square on the example inputs (4 x 4)\n    return torch.relu(h)")


def asked(source: str, sandbox) -> dict:
    questions = make_questions(BOOK, source, lambda file: run_playground(file, sandbox=sandbox, filename=FILENAME))
    return {q.kind: q for q in questions}


@pytest.mark.slow
def test_the_book_exercises_answers_follow_the_learners_file(local):
    mine, moved = asked(REFERENCE, local), asked(MOVED, local)
    assert set(mine) == set(moved) == {"revert", "kernels", "node_line"}

    # Which line put torch.where into the graph: the line the learner wrote it on.
    assert mine["node_line"].answer == "6" and moved["node_line"].answer == "7"
    assert "torch.where" in mine["node_line"].prompt["en"] and "torch.where" in moved["node_line"].prompt["zh"]
    assert {c.value for c in moved["node_line"].choices} >= {"5", "7", "8"}

    # Kernels Inductor generated: one fused kernel, then two around the second matmul (an extern call).
    assert (mine["kernels"].answer, moved["kernels"].answer) == ("1", "2")

    # Back to the starter's `.item()` branch: Dynamo breaks the graph there, whichever lines the fix took.
    assert mine["revert"].answer == moved["revert"].answer == "2"
    assert "line(s) 6 " in mine["revert"].prompt["en"] and "line(s) 6-8 " in moved["revert"].prompt["en"]
    assert "item()" in mine["revert"].prompt["zh"]
    assert check(mine["kernels"], "1") and not check(moved["kernels"], "1") and check(moved["kernels"], "+2")


def test_the_revert_puts_the_starters_lines_in_place_of_the_learners_first_change():
    starter = BOOK.read(BOOK.starter)
    first, last, lines = first_change(starter, MOVED)
    assert (first, last) == (6, 8) and "item()" in lines[0]
    variant = reverted(MOVED, first, last, lines)
    assert "torch.where" not in variant and "h.sum().item() > 0" in variant and "return torch.relu(h)" in variant
    assert first_change(starter, starter) is None
    assert first_change(starter, starter.replace("# ", "# a comment only: ")) is None


def test_graph_nodes_read_the_learners_lines_from_dynamos_annotations():
    from judge.reports.report import CapturedGraph, CompilerView

    code = ("def forward(self, L_x_):\n    l_x_ = L_x_\n    \n"
            f"    # File: {FILENAME}:5 in step, code: h = x * 2\n    h = l_x_ * 2;  l_x_ = None\n    \n"
            "    # File: other.py:9 in helper, code: y = h + 1\n    y = h + 1\n    \n"
            f"    # File: {FILENAME}:6 in step, code: return torch.relu(h)\n    relu = torch.relu(y)\n"
            "    return (relu,)")
    view = CompilerView(graphs=[CapturedGraph(code=code)])
    assert graph_nodes(view) == [(5, "h = l_x_ * 2"), (6, "relu = torch.relu(y)")]


def test_an_answer_is_compared_in_the_questions_form():
    from judge.parent.questions import Choice, Question

    number = Question(kind="kernels", prompt={}, answer="2")
    choice = Question(kind="node_line", prompt={}, answer="6", choices=[Choice(value="6", label={})])
    assert [normalized(a, number) for a in ("2", " +2 ", "02", "2.0", "-2", "two")] == ["2", "2", "2", None, None, None]
    assert [normalized(a, choice) for a in ("6", " 6", "7", "06")] == ["6", "6", None, None]


WITH_QUESTIONS = [e for e in (load_exercise(p.parent) for p in sorted((ROOT / "exercises").glob("*/exercise.toml")))
                  if e.questions is not None]


def test_the_graph_break_dynamic_shape_and_fusion_exercises_ask_questions():
    assert len(WITH_QUESTIONS) >= 5
    assert {"graph-break-step", "graph-break-print", "graph-break-three", "ragged-mean", "fuse-rmsnorm-silu",
            "rmsnorm-one-pass"} <= {e.id for e in WITH_QUESTIONS}


@pytest.mark.slow
@pytest.mark.parametrize("exercise", WITH_QUESTIONS, ids=lambda e: e.id)
def test_each_exercises_answers_follow_the_learners_file(exercise, local):
    """The reference; the same file under one more line at its top: every line a question names moves down by one,
    and so does the measured answer, while what compiling makes of it does not change. An exercise with no such
    question: the starter's file compiles otherwise, and an answer changes with it."""
    make = lambda file: {q.kind: q for q in make_questions(  # noqa: E731
        exercise, file, lambda source: run_playground(source, sandbox=local, filename=FILENAME))}
    source = (exercise.root / exercise.reference).read_text()
    mine, lower, starter = make(source), make("# my notes on this exercise\n" + source), make(
        exercise.read(exercise.starter))
    assert set(mine) == set(lower) == set(exercise.questions.kinds), exercise.id
    assert 2 <= len(mine) <= 3
    if "node_line" in mine:
        assert int(lower["node_line"].answer) == int(mine["node_line"].answer) + 1
        assert [int(c.value) for c in lower["node_line"].choices] == [int(c.value) + 1
                                                                       for c in mine["node_line"].choices]
    for kind in set(mine) - {"node_line"}:
        assert lower[kind].answer == mine[kind].answer and int(mine[kind].answer) >= 1, kind
    changed = {kind for kind in set(mine) & set(starter) if starter[kind].answer != mine[kind].answer}
    assert changed or "node_line" in mine, (exercise.id, {k: (mine[k].answer, starter[k].answer)
                                                          for k in set(mine) & set(starter)})
