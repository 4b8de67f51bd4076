"""Hidden tests for graph-break-step: one graph, no host sync, same numbers as the original."""

import pytest
import torch

from judge.checks import assert_no_host_sync, assert_same, assert_same_result, compile_one_graph, describe_tensor
from judge.reports.i18n import T

SHAPES = [((4, 16), (16, 16)), ((1, 8), (8, 3)), ((32, 64), (64, 16))]


def inputs_with_sign(x_shape, w_shape, sign, dtype=torch.float32):
    """Random x, w whose product sums to a value of the given sign."""
    x, w = torch.randn(x_shape, dtype=dtype), torch.randn(w_shape, dtype=dtype)
    if torch.sign((x @ w).sum()) != sign:
        x = -x
    return x, w


def zero_sum_inputs(dtype=torch.float32):
    """x = [a; -a] with small integers: x @ w has nonzero entries that sum to exactly zero."""
    a = torch.randint(-3, 4, (3, 8)).to(dtype)
    a[0, 0] = 1
    w = torch.randint(-3, 4, (8, 5)).to(dtype)
    w[0, 0] = 2
    x = torch.cat([a, -a])
    return x, w


def compiled(entry):
    """step compiled in the runner; each call runs the captured graph here, on the test's own inputs. The tests
    using it compare values only: they share one compile session (compiled once per guard set, not per test)."""
    return entry.compile(fullgraph=True, reuse=True)


def test_one_graph(entry):
    """torch.compile(step, fullgraph=True) captures exactly one graph
    zh: torch.compile(step, fullgraph=True) 只捕获一张图
    """
    compile_one_graph(entry, *inputs_with_sign((4, 16), (16, 16), 1))


def test_no_host_sync(entry):
    """The captured graph reads no tensor value into Python (.item(), .tolist())
    zh: 捕获的图不把张量的值读回 Python（.item()、.tolist()）
    """
    captured = compile_one_graph(entry, *inputs_with_sign((4, 16), (16, 16), -1))
    assert_no_host_sync(captured.graphs, what=T("your step's graph", zh="你的 step 的图"))


@pytest.mark.parametrize("sign", [1, -1], ids=["positive", "negative"])
def test_same_as_original(entry, starter, sign):
    """The compiled step equals the original for several shapes and both signs of h.sum()
    zh: 编译后的 step 在多种形状、h.sum() 为正和为负时都与原函数相同
    """
    fn = compiled(entry)
    for x_shape, w_shape in SHAPES:
        x, w = inputs_with_sign(x_shape, w_shape, sign)
        label = T("h.sum() > 0", zh="h.sum() > 0") if sign > 0 else T("h.sum() < 0", zh="h.sum() < 0")
        case = T("{x}, {w} ({label})", zh="{x}，{w}（{label}）", x=describe_tensor('x', x),
                 w=describe_tensor('w', w), label=label)
        assert_same_result(fn, starter.step, x, w, case=case)


def test_sum_exactly_zero(entry, starter):
    """The compiled step equals the original when h.sum() is exactly zero but h is not
    zh: h.sum() 恰好为 0 而 h 不全为 0 时，编译后的 step 与原函数相同
    """
    x, w = zero_sum_inputs()
    h = x @ w
    assert h.sum().item() == 0 and h.abs().sum().item() > 0, "test inputs are broken"
    case = T("{x}, {w} (h.sum() exactly zero, h nonzero)", zh="{x}，{w}（h.sum() 恰好为 0，h 不全为 0）",
             x=describe_tensor('x', x), w=describe_tensor('w', w))
    assert_same_result(compiled(entry), starter.step, x, w, case=case)


def test_float64(entry, starter):
    """float64 inputs give float64 results equal to the original
    zh: float64 输入得到与原函数相同的 float64 结果
    """
    fn = compiled(entry)
    for sign in (1, -1):
        x, w = inputs_with_sign((8, 16), (16, 4), sign, dtype=torch.float64)
        assert_same_result(fn, starter.step, x, w,
                           case=T.same(f"{describe_tensor('x', x)}, {describe_tensor('w', w)}"))
    x, w = zero_sum_inputs(torch.float64)
    assert_same_result(fn, starter.step, x, w, case=T("{x} (h.sum() exactly zero)", zh="{x}（h.sum() 恰好为 0）",
                                                      x=describe_tensor('x', x)))


def test_inputs_unchanged(entry):
    """step leaves its inputs x and w unmodified
    zh: step 不修改它的输入 x 和 w
    """
    fn = compiled(entry)
    for sign in (1, -1):
        x, w = inputs_with_sign((4, 16), (16, 16), sign)
        x0, w0 = x.clone(), w.clone()
        fn(x, w)
        assert_same(x, x0, case=T("{x} after calling step", zh="调用 step 之后的 {x}", x=describe_tensor('x', x)),
                    what=T.same("x"))
        assert_same(w, w0, case=T("{w} after calling step", zh="调用 step 之后的 {w}", w=describe_tensor("w", w)),
                    what=T.same("w"))
