"""Where a failed guard came from: the learner's line, the kind of specialisation, the compiles' timeline."""

from pathlib import Path

import pytest
import torch

from judge.compiler import guard_origin
from judge.compiler.logs import artifact_log
from judge.parent.exercise import load_exercise
from judge.parent.grading import grade
from judge.reports.report import RecompileDiagnostic, localized

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"
RECORD = """Recompiling function step in /scratch/submission.py:4
    triggered by the following guard failure(s):
    - 0/1: tensor 'x' size mismatch at index 0. expected 4, actual 5
    - 0/0: n == 2                                                   # h = x * n  # ch/submission.py:5 in step
    - User stack trace:
    -   File "/scratch/submission.py", line 5, in step
    -     h = x * n"""


@pytest.mark.parametrize("guard, kind", [
    ("n == 2", "value"),
    ("self.step == 0", "value"),
    ("tensor 'x' size mismatch at index 1. expected 12, actual 2", "static_size"),
    ("tensor 'x' size mismatch at index 0. expected 1, actual 2", "zero_one"),
    ("2 <= x.size()[1]", "zero_one"),
    ("x.size()[0] == y.size()[0]", "duck"),
    ("3 <= x.size()[0]", "size_branch"),
    ("___check_type_id(x, 9401)", "type"),
    ("GLOBAL_STATE changed: grad_mode", "other"),
])
def test_each_failed_guard_is_classified(guard, kind):
    assert guard_origin.classify(guard) == kind


def test_the_first_failure_of_each_record_gets_its_line_from_the_comment_or_the_tensors_first_use():
    files = {"/scratch/submission.py": "mine.py"}
    found = guard_origin.origins([RECORD], {"x": {"file": "mine.py", "line": 3, "text": "y = x + 1"}}, files)
    assert found == [{"compile_id": "0/1", "guard": "tensor 'x' size mismatch at index 0. expected 4, actual 5",
                      "location": {"file": "mine.py", "line": 3, "text": "y = x + 1"}}]
    only_value = RECORD.replace("    - 0/1: tensor 'x' size mismatch at index 0. expected 4, actual 5\n", "")
    (origin,) = guard_origin.origins([only_value], {}, files)
    assert origin["guard"] == "n == 2" and origin["location"]["line"] == 5 and origin["location"]["file"] == "mine.py"


def test_a_changing_python_int_names_the_line_that_read_it(tmp_path):
    from judge.compiler.locations import register_learner_file
    from judge.shared.loaded import load_module

    path = tmp_path / "submission.py"
    path.write_text("import torch\n\ndef f(x, n):\n    h = x + 1\n    return h * n\n", encoding="utf-8")
    register_learner_file(str(path), "mine.py")
    module = load_module("guard_origin_sample", path)
    torch._dynamo.reset()
    compiled = torch.compile(module.f, backend="eager", dynamic=False)
    with artifact_log("recompiles") as records:
        compiled(torch.randn(4), 2)
        compiled(torch.randn(4), 3)
    from judge.compiler.locations import LEARNER_FILES

    (origin,) = guard_origin.from_runner(guard_origin.origins([r.getMessage() for r in records], {}, LEARNER_FILES))
    assert origin.kind == "value" and origin.location.line == 5 and origin.location.text == "return h * n"
    assert localized(origin, "zh").explanation != origin.explanation  # explained in both languages


def _first_recompile(report) -> RecompileDiagnostic:
    return next(d for d in report.first_failure().diagnostics if isinstance(d, RecompileDiagnostic))


@pytest.mark.slow
@pytest.mark.parametrize("path, line, code", [
    ("starter.py", 10, "self.step += 1"),
    ("wrong/tensor_at_use.py", 10, "self.step += 1"),
])
def test_module_int_counter_names_the_line_that_made_the_guard(local, path, line, code):
    exercise = load_exercise(EXERCISES / "module-int-counter")
    report = grade(exercise, exercise.read(path), sandbox=local, filename=Path(path).name,
                   stop_after_first_failure=True)
    origin = _first_recompile(report).origin
    assert (origin.kind, origin.location.line, origin.location.text) == ("value", line, code)
    assert f"line {line}" in report.summary and f"第 {line} 行" in localized(report, "zh").summary
    steps = [e for e in report.compiler.timeline if e.test == report.first_failure().name]
    assert steps[0].compiled == 1 and steps[1].guard == "self.step == 0" and steps[1].line == line


@pytest.mark.slow
def test_mark_dynamic_seq_says_the_size_was_static_and_shows_the_compiles_over_the_lengths(local):
    exercise = load_exercise(EXERCISES / "mark-dynamic-seq")
    report = grade(exercise, exercise.read("wrong/mark_batch.py"), sandbox=local, filename="mark_batch.py",
                   stop_after_first_failure=True)
    origin = _first_recompile(report).origin
    assert origin.kind == "static_size" and "mark_dynamic" in origin.explanation
    steps = [(e.inputs, e.compiled, bool(e.guard)) for e in report.compiler.timeline]
    assert steps[:3] == [("float32[8, 12, 16]", 1, False), ("float32[8, 2, 16]", 1, True),
                         ("float32[8, 5, 16]", 0, False)]
