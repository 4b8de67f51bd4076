"""Hidden tests for graph-break-print: one graph, the same numbers as the original, the eager call still prints.

The runner compiles f and sends back the graph Dynamo captured; every numeric check runs that one graph here,
on inputs the runner never saw (it gets other values of the same shapes). The print check is an eager call in
the runner, which must see x: each call gets a fresh random x, and the line must carry the mean this side
computes from that x, which f cannot print without computing it.
"""

import contextlib
import io

import torch

from judge import remote
from judge.checks import WrongAnswer, assert_same, assert_same_result, compile_one_graph
from judge.checks.trust import rests_on_learner_process
from judge.reports.i18n import T

CASES = [
    (T.same("x [4, 16] float32"), lambda: torch.randn(4, 16)),
    (T("x [3, 8] float32, all negative (relu gives zeros)", zh="x [3, 8] float32，全为负数（relu 后全是 0）"),
     lambda: -torch.rand(3, 8) - 0.1),
    (T.same("x [2, 5, 7] float64"), lambda: torch.randn(2, 5, 7, dtype=torch.float64)),
]
PRINT_CASES = [
    (T.same("x [4, 16]"), lambda: torch.randn(4, 16)),
    (T.same("x [3, 5, 6]"), lambda: torch.rand(3, 5, 6) * 4 - 1),
    (T.same("x [2, 9] float64"), lambda: torch.randn(2, 9, dtype=torch.float64) + 0.5),
    # Means whose 4 decimals end in zeros: the line must keep them ("0.0000", "1.5000"), as the :.4f format does.
    (T("x [3, 4], all negative (mean activation exactly 0)", zh="x [3, 4]，全为负数（mean activation 恰好为 0）"),
     lambda: -torch.rand(3, 4) - 0.1),
    (T("x [2, 3] of 0.5 (mean activation exactly 1.5)", zh="x [2, 3]，全是 0.5（mean activation 恰好为 1.5）"),
     lambda: torch.full((2, 3), 0.5)),
]


def _quietly(fn):
    """`fn` with what it prints silenced (the helpers call it on copies, before your graph runs)."""
    def quiet(*args):
        with contextlib.redirect_stdout(io.StringIO()):
            return fn(*args)
    return quiet


def _debug_line(x) -> str:
    """The line the original f prints for x, computed here."""
    return f"[debug] mean activation = {(torch.relu(x) * 3).mean().item():.4f}"


def test_one_graph(entry):
    """torch.compile(f, fullgraph=True) captures one graph
    zh: torch.compile(f, fullgraph=True) 只捕获一张图
    """
    compile_one_graph(entry, torch.randn(4, 16))


def test_same_numbers(entry, starter):
    """The compiled f gives the same numbers as the original
    zh: 编译后的 f 与原函数结果相同
    """
    compiled = entry.compile(fullgraph=True)
    for case, make in CASES:
        x = make()
        assert_same_result(compiled, _quietly(starter.f), x, case=case)


@rests_on_learner_process(T(
    "the text an eager call of `f` printed, as your process captured it: printing is the eager path's side effect, "
    "which no graph shows (the line must carry the mean of a fresh x that this side computes)",
    zh="eager 调用 `f` 时打印的文字，由你的进程截获后报告：打印是 eager 路径的副作用，任何图都看不到它"
       "（这一行必须带着本方从一个新的 x 算出的均值）"))
def test_eager_call_still_prints(entry, starter):
    """Called without torch.compile, f still prints the debug line and returns the same values
    zh: 不经 torch.compile 直接调用时，f 仍打印调试行，返回值也相同
    """
    for case, make in PRINT_CASES:
        x = make()
        expected, expected_value = _debug_line(x), _quietly(starter.f)(x.clone())  # before x leaves this side
        what = T("`f(x)` called eagerly", zh="eager 调用的 `f(x)`")
        answer = remote.call_printing(entry, x, what=what)
        lines = answer.printed.splitlines()
        if expected not in lines:
            shown = T.same("\n  ".join(lines[:5])) if lines else T("(nothing)", zh="（什么也没有）")
            raise WrongAnswer(T("calling `f(x)` eagerly with {case} should print the line\n  {expected}\n"
                                "but it printed:\n  {shown}\nKeep the debug print for eager runs; only the "
                                "compiled run may skip it.",
                                zh="用 {case} eager 调用 `f(x)` 应当打印这一行\n  {expected}\n"
                                   "但它打印的是：\n  {shown}\n调试输出要留给 eager 运行；只有编译后的运行可以跳过它。",
                                case=case, expected=expected, shown=shown))
        # The value the eager call returned (your process's word: it can only fail the check).
        assert_same(answer.value, expected_value, case=T("{case}, `f(x)` called eagerly", zh="{case}，eager 调用 `f(x)`",
                                                       case=case))


def test_inductor_compile(entry, starter):
    """A real Inductor compile (the default backend) gives the same numbers
    zh: 用真正的 Inductor（默认后端）编译，结果相同
    """
    x = torch.randn(8, 32)
    compiled = entry.compile(fullgraph=True, what=T("`f` compiled with Inductor", zh="用 Inductor 编译的 `f`"),
                             local_backend="inductor")
    assert_same_result(compiled, _quietly(starter.f), x,
                       case=T("x [8, 32] float32, Inductor backend", zh="x [8, 32] float32，Inductor 后端"))
