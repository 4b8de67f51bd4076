"""Higher-order-operator errors (torch.cond branches that alias, mutate or disagree) explained at the learner's line."""

import importlib.util

import pytest
import torch

from judge.checks.failures import CompileError
from judge.compiler.breaks import graph_break_from_exception, graph_break_message
from judge.compiler.locations import register_learner_file
from judge.parent.proving import reads_as_english
from judge.remote.failures import YOUR_FUNCTION, LearnerError, raise_learner_error
from judge.reports.i18n import T, text
from judge.reports.report import Verdict
from judge.shared.learner_errors import describe
from judge.shared.protocol import ErrorKind
from judge.verifier_side.plugin import classify

BRANCHES = {
    "aliasing": ("def keep(h):\n    return h\n", "x.clone()", "x.clone()"),
    "mutation": ("def keep(h):\n    h.add_(1)\n    return h.clone()\n", "in place", "原地修改"),
    # The break inside the branch is the why (and its line the place), not the wrapper saying the operator must
    # be captured whole.
    "print": ("def keep(h):\n    print(h)\n    return h.clone()\n", "`print()` is Python I/O", "print()"),
}
AT_THE_BRANCHS_LINE = {"print": "graph break at line 4 (`print(h)`)"}


def learner_module(tmp_path, name, source):
    """`source` imported as the learner's file (its frames shown as solution.py)."""
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    register_learner_file(str(path), "solution.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def learner_step(tmp_path, name, keep_source):
    source = ("import torch\n\n" + keep_source + "\n\ndef step(x):\n"
              "    return torch.cond(x.sum() > 0, lambda h: h * 2, keep, (x,))\n")
    return learner_module(tmp_path, name, source).step, len(source.splitlines())


@pytest.mark.parametrize("case", list(BRANCHES))
def test_a_cond_branch_error_names_the_learners_line_and_explains_it_in_both_languages(tmp_path, case):
    source, english, chinese = BRANCHES[case]
    step, last_line = learner_step(tmp_path, f"step_{case}", source)
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.TorchDynamoException) as raised:  # what the runner describes
        torch.compile(step, backend="eager", fullgraph=True)(torch.randn(3))
    message = graph_break_message(graph_break_from_exception(raised.value), T.same("`torch.compile`"))
    en, zh = text(message, "en"), text(message, "zh")
    assert AT_THE_BRANCHS_LINE.get(case, f"graph break at line {last_line} (`return torch.cond(") in en, en
    assert "torch.cond" in en and english in en and chinese in zh and "outside your file" not in en


def test_the_learners_line_is_found_on_the_errors_cause(tmp_path):
    step, last_line = learner_step(tmp_path, "step_cause", BRANCHES["aliasing"][0])
    torch._dynamo.reset()
    try:
        torch.compile(step, backend="eager", fullgraph=True)(torch.randn(3))
    except torch._dynamo.exc.TorchDynamoException as inner:
        wrapped = RuntimeError("re-raised by a backend")
        wrapped.__cause__ = inner
        diag = graph_break_from_exception(wrapped)
    assert diag.location is not None and diag.location.line == last_line


def test_branches_that_disagree_in_dtype_are_a_compile_error_explained_at_the_learners_line(tmp_path):
    """Dynamo raises this as a TorchRuntimeError, not a graph break: the runner describes it as a compile error,
    and the verifier's message names both dtypes and what to do instead of quoting Dynamo's fake-tensor text."""
    step, last_line = learner_step(tmp_path, "step_dtype", "def keep(h):\n    return h.double()\n")
    torch._dynamo.reset()
    with pytest.raises(Exception) as raised:
        torch.compile(step, backend="eager", fullgraph=True)(torch.randn(3))
    error = describe(raised.value)
    assert error["kind"] == ErrorKind.COMPILE_ERROR.value
    with pytest.raises(CompileError) as failed:
        raise_learner_error(error, YOUR_FUNCTION)
    en, zh = text(failed.value.message, "en"), text(failed.value.message, "zh")
    assert f"torch.compile failed at line {last_line} (`return torch.cond(" in en, en
    assert "`torch.float32` in one, `torch.float64` in the other" in en and ".to(x.dtype)" in en, en
    assert "`torch.float32`" in zh and "另一个是 `torch.float64`" in zh and "FakeTensor" not in en + zh, zh
    assert "FakeTensor" in failed.value.diagnostics[0].message  # Dynamo's own words stay in the diagnostic


def test_a_compile_error_nobody_explained_quotes_dynamo():
    error = {"kind": ErrorKind.COMPILE_ERROR.value, "type": "BackendCompilerFailed", "message": "backend exploded"}
    with pytest.raises(CompileError) as failed:
        raise_learner_error(error, YOUR_FUNCTION)
    assert text(failed.value.message, "en") == "your function: torch.compile failed: `BackendCompilerFailed: " \
                                               "backend exploded`"


def test_a_while_loop_body_that_changes_a_dtype_is_explained(tmp_path):
    module = learner_module(tmp_path, "loop", "import torch\n\n\ndef step(x):\n"
                            "    return torch._higher_order_ops.while_loop(\n"
                            "        lambda i, h: i < 3, lambda i, h: (i + 1, h.double()), (torch.tensor(0), x))\n")
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.TorchDynamoException) as raised:
        torch.compile(module.step, backend="eager", fullgraph=True)(torch.randn(3))
    diag = graph_break_from_exception(raised.value)
    assert "pair[1] differ in 'dtype" in diag.reason, diag.reason
    message = graph_break_message(diag, T.same("`torch.compile`"))
    en, zh = text(message, "en"), text(message, "zh")
    assert "graph break at line 5 (`return torch._higher_order_ops.while_loop(`)" in en, en
    assert "the body of `torch.while_loop` returns a value whose dtype" in en
    assert "循环体" in zh and not reads_as_english(zh), zh


def test_a_predicate_of_many_elements_is_explained_instead_of_printed(tmp_path):
    """Here cond's own kernel refuses it when the graph runs; cond-skip-refine's wrong/pred_not_reduced.py has it
    refused while tracing, in other words: both get the explanation."""
    module = learner_module(tmp_path, "pred", "import torch\n\n\ndef step(x):\n"
                            "    return torch.cond(x > 0, lambda h: h * 2, lambda h: h.clone(), (x,))\n")
    torch._dynamo.reset()
    with pytest.raises(Exception) as raised:
        torch.compile(module.step, backend="eager", fullgraph=True)(torch.randn(6, 16))
    with pytest.raises(LearnerError) as failed:
        raise_learner_error(describe(raised.value), YOUR_FUNCTION)
    en, zh = text(failed.value.message, "en"), text(failed.value.message, "zh")
    assert "must be one boolean" in en and "`.any()`" in en, en
    assert "tensor([" not in en + zh and "布尔" in zh, zh


def test_a_hidden_tests_own_compile_words_the_dtype_disagreement_the_same_way(tmp_path):
    step, _ = learner_step(tmp_path, "step_dtype_plugin", "def keep(h):\n    return h.double()\n")
    torch._dynamo.reset()
    with pytest.raises(Exception) as raised:
        torch.compile(step, backend="eager", fullgraph=True)(torch.randn(3))
    verdict, message, diagnostics = classify(raised.value, raised.value.__traceback__)
    assert verdict is Verdict.COMPILE_ERROR
    assert text(message, "en").startswith("torch.compile failed: the two branches of `torch.cond` return a "
                                          "different dtype (`torch.float32` in one, `torch.float64`"), message
    assert "FakeTensor" in diagnostics[0].message
