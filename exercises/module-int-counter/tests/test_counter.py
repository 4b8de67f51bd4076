"""Hidden tests for module-int-counter: one compile over 20 steps, step saved in state_dict, same outputs."""

import torch

from judge.checks import (CompileCounter, Recompile, WrongAnswer, assert_no_host_sync, assert_same,
                          compile_one_graph, recompile_log)
from judge.checks.serving import short_guard
from judge.report import RecompileDiagnostic

STEPS = 20
SHAPE = (4, 8)


def run_steps(module, n=STEPS):
    """Call `module` n times on fresh inputs; return the inputs and outputs."""
    xs = [torch.randn(SHAPE) for _ in range(n)]
    return xs, [module(x) for x in xs]


def test_one_graph(entry):
    """torch.compile(EMADecay(), fullgraph=True) captures one graph"""
    compile_one_graph(entry(), torch.randn(SHAPE), what="EMADecay.forward under fullgraph=True")


def test_no_host_sync(entry):
    """The graph keeps the step as a tensor (no .item() / .tolist())"""
    captured = compile_one_graph(entry(), torch.randn(SHAPE))
    assert_no_host_sync(captured.graphs, what="the graph of EMADecay.forward")


def test_compiles_once(entry):
    """20 steps under fullgraph=True compile exactly once"""
    counter = CompileCounter()
    compiled = torch.compile(entry(), backend=counter, fullgraph=True)
    gave_up = ""
    with recompile_log() as reasons:
        for i in range(1, STEPS + 1):
            try:
                compiled(torch.randn(SHAPE))
            except torch._dynamo.exc.FailOnRecompileLimitHit:
                gave_up = f" At step {i} Dynamo hit its recompile limit and gave up."
                break
    if counter.frame_count <= 1:
        return
    guards = [short_guard(r) for r in reasons]
    message = f"EMADecay.forward was compiled {counter.frame_count} times in {STEPS} steps; once is the goal."
    if guards:
        message += (f" The guard that failed: {guards[0]}. A Python int attribute is baked into the graph as a "
                    "constant and guarded on its value, so every new value compiles again.")
    raise Recompile(message + gave_up, [RecompileDiagnostic(compiles=counter.frame_count, limit=1,
                                                            guard_failures=guards[:10])])


def test_same_outputs(entry, starter):
    """Each of 20 compiled steps (backend aot_eager) equals the original module"""
    compiled = torch.compile(entry(), backend="aot_eager", fullgraph=True)
    original = starter.EMADecay()
    for i in range(1, STEPS + 1):
        x = torch.randn(SHAPE)
        assert_same(compiled(x), original(x), case=f"step {i} of a fresh EMADecay, x {list(SHAPE)} float32")


def test_step_in_state_dict(entry, starter):
    """After 20 compiled steps, state_dict()['step'] is 20 and loading it resumes the schedule"""
    module = entry()
    run_steps(torch.compile(module, backend=CompileCounter(), fullgraph=True))
    state = module.state_dict()
    if "step" not in state:
        raise WrongAnswer(f"after {STEPS} steps, state_dict() has keys {sorted(state)} but no 'step': "
                          "a checkpoint would lose the schedule. Register the counter so state_dict saves it.")
    saved = state["step"]
    if not isinstance(saved, torch.Tensor) or saved.numel() != 1 or float(saved) != STEPS:
        raise WrongAnswer(f"after {STEPS} steps, state_dict()['step'] is {saved!r}; expected a one-element "
                          f"tensor equal to {STEPS}")
    resumed = entry()
    resumed.load_state_dict(state)
    original = starter.EMADecay()
    run_steps(original)
    x = torch.randn(SHAPE)
    assert_same(resumed(x), original(x), case=f"step {STEPS + 1} of a fresh EMADecay loaded from that state_dict")


def test_instances_are_independent(entry, starter):
    """Two modules count their own steps"""
    first, second = entry(), entry()
    run_steps(first, 3)
    x = torch.randn(SHAPE)
    assert_same(second(x), starter.EMADecay()(x), case="step 1 of a second EMADecay, after 3 steps of the first")
