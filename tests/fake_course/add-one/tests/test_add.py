import torch

from judge.checks import assert_compiles, assert_same, compile_one_graph


def test_one_graph(entry):
    """f compiles to one graph"""
    compile_one_graph(entry, torch.randn(3))


def test_values(entry):
    """f(x) == x + 1"""
    fn = entry.compile()
    for n in (1, 5):
        x = torch.randn(n)
        assert_same(fn(x), x + 1, case=f"x [{n}] float32")


def test_compiles_at_most_twice(entry):
    """f compiles at most twice over four calls"""
    fn = entry.compile()
    for n in (2, 3, 4, 5):
        fn(torch.randn(n))
    assert_compiles(fn, at_most=2, what="f", guard_failures=fn.recompile_reasons)
