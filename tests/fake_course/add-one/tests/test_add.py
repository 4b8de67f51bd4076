import torch

from judge.checks import assert_compiles, assert_same, compile_one_graph
from judge.reports.i18n import T


def test_one_graph(entry):
    """f compiles to one graph
    zh: f 编译成一张图
    """
    compile_one_graph(entry, torch.randn(3))


def test_values(entry):
    """f(x) == x + 1
    zh: f(x) == x + 1
    """
    fn = entry.compile()
    for n in (1, 5):
        x = torch.randn(n)
        assert_same(fn(x), x + 1, case=T.same(f"x [{n}] float32"))


def test_compiles_at_most_twice(entry):
    """f compiles at most twice over four calls
    zh: 四次调用中 f 最多编译两次
    """
    fn = entry.compile()
    for n in (2, 3, 4, 5):
        fn(torch.randn(n))
    assert_compiles(fn, at_most=2, what=T.same("f"), guard_failures=fn.recompile_reasons)
