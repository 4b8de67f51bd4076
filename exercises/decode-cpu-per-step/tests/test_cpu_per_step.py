"""Hidden tests for decode-cpu-per-step: one graph, the same numbers, the caller's x untouched, and under
mode="reduce-overhead" a CPU time per step within 3x of the reference's.

The runner captures decode_step's graph on CUDA example inputs; the judge rebuilds it here, compiles it here
with mode="reduce-overhead" and times it here, sealed (judge/costs/checks.py: fresh inputs for every timed batch, L2
flushed, warm-up, repeats until the relative standard error is small or a time cap; compile time apart), against
the reference compiled and timed the same way in the same process.
"""

import torch

from judge.checks import assert_no_host_sync, assert_same, describe_tensor, grading_device, once
from judge.costs.checks import assert_time_at_most, learner_timed_cost, timed_cost
from judge.reports.i18n import T

B, D, L = 4, 256, 8
# A step recorded as one CUDA graph costs one replay of CPU time; one that Inductor cannot record launches its 16
# kernels one by one, and a copy to the CPU waits for the GPU each time: 5x and more. 3x holds on a noisy machine.
CPU_FACTOR = 3.0
_TIMES: dict = {}


def inputs(seed=0, scale=0.5):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, D, generator=g, dtype=torch.float64)
    w = torch.randn(L, D, D, generator=g, dtype=torch.float64) / D ** 0.5
    device = grading_device()
    return x.to(device, torch.float32), w.to(device, torch.float32), torch.tensor(scale, device=device)


def fresh(values):
    """A maker of new copies of `values`: every timed batch gets inputs of its own."""
    return lambda: [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def times(entry, reference):
    """The learner's graph and the reference, each compiled here with mode="reduce-overhead" and timed."""
    def run():
        args = inputs(1)
        compiled = entry.compile(fullgraph=True, dynamic=False, what=T.same("`decode_step`"))
        compiled(*args)
        index = compiled.calls[-1].graph
        gm, values = compiled.graphs[index].gm, compiled.inputs_for(index, *args)
        # sealed, as every run of the learner's graph (judge.checks.sealed): on copies, the process state checked
        mine = learner_timed_cost(gm, values, mode="reduce-overhead", cpu_per_step=True,
                                  what=T.same("`decode_step`"))
        theirs = timed_cost(reference.decode_step, fresh(args), mode="reduce-overhead", cpu_per_step=True)
        return mine, theirs

    return once(_TIMES, run)


def test_one_graph(entry):
    """torch.compile(decode_step, fullgraph=True) captures the whole step in one graph, with no host sync in it
    zh: torch.compile(decode_step, fullgraph=True) 把整步捕获在一张图里，图里没有主机同步
    """
    compiled = entry.compile(fullgraph=True, dynamic=False)
    compiled(*inputs())
    # torch 2.11 captures float(scale) under fullgraph as an .item() inside the graph: still a host sync per step
    assert_no_host_sync(compiled.graph_modules, what=T("`decode_step`'s graph", zh="`decode_step` 的图"))


def test_same_as_original(entry, starter):
    """The compiled step equals the original for several scales
    zh: 编译后的一步在几种 scale 下都与原函数相同
    """
    fn = entry.compile(fullgraph=True, dynamic=False)
    for seed, scale in ((2, 0.5), (3, 1.0), (4, -2.0)):
        x, w, s = inputs(seed, scale)
        expected = starter.decode_step(x.clone(), w, s)
        assert_same(fn(x.clone(), w, s), expected, case=T.same(f"{describe_tensor('x', x)}, scale {scale}"))


def test_caller_x_unchanged(entry):
    """The step leaves the caller's x as it was
    zh: 这一步不改动调用者的 x
    """
    fn = entry.compile(fullgraph=True, dynamic=False)
    x, w, s = inputs(5)
    before = x.clone()
    fn(x, w, s)
    assert_same(x, before, case=T("the caller's x after the call", zh="调用之后调用者的 x"))


def test_cpu_time_per_step(entry, reference):
    """Compiled with mode="reduce-overhead", a step takes at most 3x the reference's CPU time
    zh: 用 mode="reduce-overhead" 编译后，每一步的 CPU 时间不超过参考答案的 3 倍
    """
    mine, theirs = times(entry, reference)
    assert_time_at_most(mine, theirs, factor=CPU_FACTOR, what="cpu")
