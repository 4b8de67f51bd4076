"""Hidden tests for branchless-grad: one graph; outputs and gradients equal eager's on both sides of 0 and at 0.

The runner compiles f (its example s requires grad, with other values) and sends back the forward graph Dynamo
captured. Here that graph is compiled with the test's backend (aot_eager: AOTAutograd derives the backward
graph on this side; or Inductor), run on the test's own s with requires_grad, and backward is called here: the
outputs and gradients compared are all computed on this side.
"""

import pytest
import torch

from judge.checks import assert_no_host_sync, compile_one_graph, describe_tensor
from judge.checks.autograd import assert_same_value_and_grads
from judge.reports.i18n import T

CASES = {
    "positive": lambda dtype: torch.rand(5, dtype=dtype) + 0.1,
    "negative": lambda dtype: -torch.rand(5, dtype=dtype) - 0.1,
    "zero": lambda dtype: torch.zeros(5, dtype=dtype),
    "cancels_to_zero": lambda dtype: torch.tensor([1.5, -1.5, 2.0, -2.0], dtype=dtype),
    "overflows": lambda dtype: torch.tensor([3e38, 3e38], dtype=dtype),  # float32: t = inf
}
NOTES = {"positive": T.same("t > 0"), "negative": T.same("t < 0"), "zero": T.same("t = 0"),
         "cancels_to_zero": T("nonzero s, t exactly 0", zh="s 不全为 0，t 恰好为 0"),
         "overflows": T("t overflows to inf", zh="t 溢出为 inf")}


def check(fn, starter, name, dtype=torch.float32, backend="aot_eager"):
    """Output and gradient of s: `fn` (the captured graph, run here) against the original f run eagerly here."""
    s = CASES[name](dtype)
    case = T("{s} ({note}, backend {backend})", zh="{s}（{note}，后端 {backend}）", s=describe_tensor("s", s),
             note=NOTES[name], backend=backend)
    assert_same_value_and_grads(fn, starter.f, s, case=case, names=["s"])


def compiled(entry, backend="aot_eager"):
    """f compiled in the runner (fullgraph); each call compiles the captured graph here with `backend`, once,
    and runs it on the test's own inputs."""
    what = T("`f` compiled with `fullgraph=True` ({backend})", zh="以 `fullgraph=True` 编译的 `f`（{backend}）",
             backend=backend)
    return entry.compile(fullgraph=True, what=what, local_backend=backend)


def test_one_graph(entry):
    """torch.compile(f, fullgraph=True) captures one graph
    zh: torch.compile(f, fullgraph=True) 只捕获一张图
    """
    compile_one_graph(entry, CASES["negative"](torch.float32),
                      what=T("`f` under `fullgraph=True`", zh="`fullgraph=True` 下的 `f`"))


def test_no_host_sync(entry):
    """The graph reads no tensor value into Python (.item(), .tolist())
    zh: 图不把张量的值读回 Python（.item()、.tolist()）
    """
    captured = compile_one_graph(entry, CASES["positive"](torch.float32))
    assert_no_host_sync(captured.graphs, what=T("the graph of `f`", zh="`f` 的图"))


@pytest.mark.parametrize("name", list(CASES))
def test_outputs_and_gradients(entry, starter, name):
    """Output and gradient of s equal eager's (backend aot_eager)
    zh: 输出和 s 的梯度与 eager 相同（后端 aot_eager）
    """
    check(compiled(entry), starter, name)


def test_float64(entry, starter):
    """float64: outputs and gradients equal eager's for t > 0, t < 0 and t = 0
    zh: float64：t > 0、t < 0 和 t = 0 时，输出和梯度都与 eager 相同
    """
    fn = compiled(entry)
    for name in ("positive", "negative", "zero"):
        check(fn, starter, name, dtype=torch.float64)


def test_inductor(entry, starter):
    """With a real Inductor compile: outputs and gradients equal eager's for t > 0, t < 0 and t = 0
    zh: 用真正的 Inductor 编译：t > 0、t < 0 和 t = 0 时，输出和梯度都与 eager 相同
    """
    fn = compiled(entry, backend="inductor")
    for name in ("positive", "negative", "zero"):
        check(fn, starter, name, backend="inductor")

