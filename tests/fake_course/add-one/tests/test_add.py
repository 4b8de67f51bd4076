import torch

from judge.checks import CompileCounter, assert_compiles, assert_same, compile_one_graph, recompile_log


def test_one_graph(entry):
    """f compiles to one graph"""
    compile_one_graph(entry, torch.randn(3))


def test_values(entry):
    """f(x) == x + 1"""
    fn = torch.compile(entry, backend="eager")
    for n in (1, 5):
        x = torch.randn(n)
        assert_same(fn(x), x + 1, case=f"x [{n}] float32")


def test_compiles_at_most_twice(entry):
    """f compiles at most twice over four calls"""
    counter = CompileCounter()
    fn = torch.compile(entry, backend=counter)
    with recompile_log() as reasons:
        for n in (2, 3, 4, 5):
            fn(torch.randn(n))
    assert_compiles(counter, at_most=2, what="f", guard_failures=reasons)
