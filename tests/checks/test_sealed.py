"""judge.checks.sealed: a learner's graph runs on copies and cannot leave the verifier's process changed."""

import pytest
import torch
from torch.amp.autocast_mode import _enter_autocast

from judge.checks import CheckFailure, Forbidden, WrongAnswer
from judge.checks.sealed import ProcessState, run_sealed, sealed_module
from judge.reports.report import Verdict


def grad_off(x):
    torch._C._set_grad_enabled(False)
    return x * 2


def autocast_left_open(x):
    _enter_autocast("cpu", torch.bfloat16, True, None)
    return x * 2


def default_dtype_changed(x):
    torch.set_default_dtype(torch.float64)
    return x * 2


def threads_changed(x):
    torch.set_num_threads(max(1, torch.get_num_threads() + 1))
    return x * 2


def matmul_precision_changed(x):
    torch.set_float32_matmul_precision("medium" if torch.get_float32_matmul_precision() != "medium" else "high")
    return x * 2


def deterministic_changed(x):
    torch.use_deterministic_algorithms(not torch.are_deterministic_algorithms_enabled())
    return x * 2


def inductor_config_changed(x):
    torch._inductor.config.max_autotune = not torch._inductor.config.max_autotune
    return x * 2


def dynamo_config_changed(x):
    torch._dynamo.config.recompile_limit = torch._dynamo.config.recompile_limit + 3
    return x * 2


def shapes_config_changed(x):
    import torch.fx.experimental._config as shapes_config

    shapes_config.backed_size_oblivious = not shapes_config.backed_size_oblivious  # no 0/1 specialisation anywhere
    return x * 2


@pytest.mark.parametrize("graph, changed", [
    (grad_off, "torch.is_grad_enabled()"),
    (autocast_left_open, "torch.is_autocast_enabled('cpu')"),
    (default_dtype_changed, "torch.get_default_dtype()"),
    (threads_changed, "torch.get_num_threads()"),
    (matmul_precision_changed, "torch.get_float32_matmul_precision()"),
    (deterministic_changed, "torch.are_deterministic_algorithms_enabled()"),
    (inductor_config_changed, "torch._inductor.config.max_autotune"),
    (dynamo_config_changed, "torch._dynamo.config.recompile_limit"),
    (shapes_config_changed, "torch.fx.experimental._config.backed_size_oblivious"),
], ids=lambda v: getattr(v, "__name__", None) or str(v).split("(")[0])
def test_a_run_that_changes_process_state_is_forbidden_and_undone(graph, changed):
    before = ProcessState.now()
    with pytest.raises(Forbidden) as info:
        run_sealed(graph, [torch.ones(3)], what="the graph")
    assert info.value.verdict is Verdict.FORBIDDEN and changed in str(info.value.message)
    assert before.restore_and_diff() == []  # put back: the next check runs as if the graph had never run
    assert torch.is_grad_enabled() and not torch.is_autocast_enabled("cpu")
    assert torch.get_default_dtype() is torch.float32


def test_state_is_restored_even_when_the_graph_then_fails():
    def fails(x):
        torch._C._set_grad_enabled(False)
        raise RuntimeError("boom")

    with pytest.raises(Forbidden):
        run_sealed(fails, [torch.ones(2)], what="g")
    assert torch.is_grad_enabled()


def test_a_failure_without_state_changes_is_the_graph_s_own():
    with pytest.raises(RuntimeError, match="boom"):
        run_sealed(lambda x: (_ for _ in ()).throw(RuntimeError("boom")), [torch.ones(2)], what="g")


def test_a_graph_that_restores_what_it_changed_passes():
    def balanced(x):
        previous = torch.is_grad_enabled()
        torch._C._set_grad_enabled(False)
        y = x * 2
        torch._C._set_grad_enabled(previous)
        with torch._inductor.config.patch(max_autotune=True):
            return y + 1

    assert torch.equal(run_sealed(balanced, [torch.ones(2)], what="g"), torch.full((2,), 3.0))


def test_the_graph_gets_copies_and_a_change_to_an_input_fails_naming_it():
    x, w = torch.ones(2, 2), torch.ones(2)
    seen = []

    def mutates(a, b):
        seen.append((a is x, b is w))
        a.mul_(0)
        return a + b

    with pytest.raises(WrongAnswer, match="`x` in place"):
        run_sealed(mutates, [x, w], what="g", names=["x", "w"])
    assert seen == [(False, False)] and torch.equal(x, torch.ones(2, 2))  # the caller's tensor is untouched


def test_a_declared_mutable_input_gets_its_changes_back_in_its_own_storage():
    cache, k = torch.zeros(3), torch.ones(1)
    ptr = cache.data_ptr()
    run_sealed(lambda c, k: c.index_copy_(0, torch.tensor([1]), k), [cache, k], what="g", mutable=[0])
    assert cache.data_ptr() == ptr and torch.equal(cache, torch.tensor([0.0, 1.0, 0.0]))


def test_nan_inputs_left_alone_are_not_a_change():
    x = torch.tensor([float("nan"), 1.0])
    out = run_sealed(lambda a: a + 1, [x], what="g")
    assert out.isnan()[0] and out[1] == 2


def test_copies_keep_strides_and_gradients_reach_the_original_leaf():
    leaf = torch.randn(4, 3).t().requires_grad_(True)
    out = run_sealed(lambda a: (a.stride(), (a * a).sum()), [leaf], what="g")
    assert out[0] == leaf.stride()
    out[1].backward()
    assert torch.allclose(leaf.grad, 2 * leaf.detach())


def test_a_graph_returned_by_the_runner_runs_sealed_when_a_test_calls_it():
    graph = torch.fx.Graph()  # a graph whose body mutates its input
    x = graph.placeholder("x")
    graph.output(graph.call_method("add_", (x, 1.0)))
    gm = sealed_module(torch.fx.GraphModule(torch.nn.Module(), graph), what="the returned graph")
    t = torch.zeros(2)
    with pytest.raises(WrongAnswer, match="in place"):
        gm(t)
    assert torch.equal(t, torch.zeros(2)) and isinstance(gm, torch.fx.GraphModule)


def test_state_reads_are_cheap():
    import time

    started = time.perf_counter()
    for _ in range(200):
        ProcessState.now().restore_and_diff()
    assert (time.perf_counter() - started) / 200 < 0.005  # generous: a few hundred runs per grading


def test_check_failures_pass_through():
    def raises(x):
        raise WrongAnswer("the graph's own verdict")

    with pytest.raises(CheckFailure, match="own verdict"):
        run_sealed(raises, [torch.ones(1)], what="g")


class _EntryBefore213:
    """A config entry of torch before 2.13 (torch 2.11 on the GPU machine): the override is a plain attribute."""

    def __init__(self, default):
        from torch.utils._config_module import _UNSET_SENTINEL

        self.default, self.user_override = default, _UNSET_SENTINEL


class _ConfigModuleBefore213:
    def __init__(self):
        object.__setattr__(self, "_config", {"flag": _EntryBefore213(False), "limit": _EntryBefore213(8)})

    def __setattr__(self, name, value):
        self._config[name].user_override = value

    def __getattr__(self, name):
        from torch.utils._config_module import _UNSET_SENTINEL

        entry = self._config[name]
        return entry.default if entry.user_override is _UNSET_SENTINEL else entry.user_override


def test_a_config_whose_overrides_live_on_its_entries_is_put_back_too(monkeypatch):
    from judge.checks import sealed

    old = _ConfigModuleBefore213()
    old.limit = 8  # set, to its default: no change
    monkeypatch.setattr(sealed, "_configs", lambda: {"old.config": old})
    monkeypatch.setattr(sealed, "_CONFIG_VARS", {})

    def flips_the_flag(x):
        old.flag = True
        old.limit = 8
        return x * 2

    with pytest.raises(Forbidden) as info:
        run_sealed(flips_the_flag, [torch.ones(2)], what="the graph")
    assert "old.config.flag: False -> True" in str(info.value.message)
    assert "limit" not in str(info.value.message)
    assert old.flag is False and old.limit == 8
