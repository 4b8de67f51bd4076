"""Higher-order-operator errors (torch.cond branches that alias, mutate or disagree) explained at the learner's line."""

import importlib.util

import pytest
import torch

from judge.checks.breaks import graph_break_from_exception, graph_break_message
from judge.checks.locations import register_learner_file
from judge.i18n import T, text

BRANCHES = {
    "aliasing": ("def keep(h):\n    return h\n", "x.clone()", "x.clone()"),
    "mutation": ("def keep(h):\n    h.add_(1)\n    return h.clone()\n", "in place", "原地修改"),
}


def learner_step(tmp_path, name, keep_source):
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\n\n" + keep_source + "\n\ndef step(x):\n"
                    "    return torch.cond(x.sum() > 0, lambda h: h * 2, keep, (x,))\n", encoding="utf-8")
    register_learner_file(str(path), "solution.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.step, len(path.read_text().splitlines())


@pytest.mark.parametrize("case", list(BRANCHES))
def test_a_cond_branch_error_names_the_learners_line_and_explains_it_in_both_languages(tmp_path, case):
    source, english, chinese = BRANCHES[case]
    step, last_line = learner_step(tmp_path, f"step_{case}", source)
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.TorchDynamoException) as raised:  # what the runner describes
        torch.compile(step, backend="eager", fullgraph=True)(torch.randn(3))
    message = graph_break_message(graph_break_from_exception(raised.value), T.same("`torch.compile`"))
    en, zh = text(message, "en"), text(message, "zh")
    assert f"graph break at line {last_line} (`return torch.cond(" in en, en
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
