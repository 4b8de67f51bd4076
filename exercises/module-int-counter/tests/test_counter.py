"""Hidden tests for module-int-counter: one compile over 20 steps, step saved in state_dict, same outputs.

EMADecay instances live in the runner. Each is compiled there; the graph Dynamo captured comes back and runs
here on this side's own inputs and on this side's own copy of the module's parameters and buffers, which the
graph itself advances step by step. So the counts and outputs compared below are computed here: the runner's
word (a compile count, a recompile reason) can only make a check fail.
"""

import torch

from judge import remote
from judge.checks import CompileError, Recompile, WrongAnswer, assert_no_host_sync, assert_same, expected_first
from judge.checks.serving import short_guard
from judge.checks.trust import rests_on_learner_process
from judge.reports.i18n import T
from judge.reports.report import RecompileDiagnostic

STEPS = 20
SHAPE = (4, 8)
# A resume from a step drawn per grading, far past the first twenty: a counter that wraps or rounds there (uint8,
# float16) or a decay looked up in a table of the first steps gives itself away; float32 counts it exactly.
FAR_STEPS = (100_000, 1_000_000)
FULLGRAPH = T("`EMADecay.forward` under `fullgraph=True`", zh="`fullgraph=True` 下的 `EMADecay.forward`")
CONSTRUCT = T.same("`EMADecay()`")
STATE_DICT = T.same("`EMADecay().state_dict()`")


def new_module(entry) -> remote.Ref:
    """EMADecay() created in the runner."""
    module = entry(what=CONSTRUCT)
    if not isinstance(module, remote.Ref):
        raise WrongAnswer(T("`EMADecay()` returned `{kind}`, not a module", zh="`EMADecay()` 返回了 `{kind}`，不是模块",
                            kind=type(module).__name__))
    return module


def compiled(module: remote.Ref, what: T = FULLGRAPH, **options) -> remote.RemoteCompiled:
    """torch.compile(module, fullgraph=True) in the runner; its graphs run here on this side's copy of the
    module's parameters and buffers (taken now, then advanced only by the graphs run here)."""
    session = module.compile(fullgraph=True, what=what, **options)
    session.state["target"] = remote.state(module, what=T("`EMADecay`'s buffers", zh="`EMADecay` 的 buffer"),
                                           graph_inputs=True)
    return session


def one_graph_steps(session: remote.RemoteCompiled, n: int, original=None):
    """n steps on fresh inputs, every one run here by the same single graph: [(x, output, expected)], where
    `expected` is what `original` (a module of the starter's, stepped alongside) returned for x, computed first."""
    results = []
    for i in range(1, n + 1):
        x = torch.randn(SHAPE)
        expected, out = expected_first(original or (lambda x: None), session, x)
        results.append((x, out, expected))
        if session.frame_count != 1:
            raise Recompile(T("{what} was compiled again at step {i}; one graph must serve every step",
                              zh="{what} 在第 {i} 步又编译了一次；每一步都必须由同一张图完成", what=session.what, i=i))
    return results


def test_one_graph(entry):
    """torch.compile(EMADecay(), fullgraph=True) captures one graph
    zh: torch.compile(EMADecay(), fullgraph=True) 只捕获一张图
    """
    session = compiled(new_module(entry))
    session(torch.randn(SHAPE))
    if session.frame_count != 1:
        raise WrongAnswer(T("{what}: expected one graph, Dynamo captured {n}", zh="{what}：应当只有一张图，Dynamo 捕获了 {n} 张",
                            what=FULLGRAPH, n=session.frame_count))


def test_no_host_sync(entry):
    """The graph keeps the step as a tensor (no .item() / .tolist())
    zh: 图里的 step 一直是张量（没有 .item() / .tolist()）
    """
    session = compiled(new_module(entry))
    session(torch.randn(SHAPE))
    assert_no_host_sync(session.graph_modules, what=T("the graph of `EMADecay.forward`", zh="`EMADecay.forward` 的图"))


def test_compiles_once(entry):
    """20 steps under fullgraph=True compile exactly once
    zh: fullgraph=True 下 20 步只编译一次
    """
    session = compiled(new_module(entry))
    gave_up = None
    for i in range(1, STEPS + 1):
        try:
            session(torch.randn(SHAPE))
        except CompileError as exc:
            if not any(getattr(d, "exc_type", "") == "FailOnRecompileLimitHit" for d in exc.diagnostics):
                raise
            gave_up = T(" At step {i} Dynamo hit its recompile limit and gave up.",
                        zh="在第 {i} 步 Dynamo 达到了重新编译的上限，放弃了。", i=i)
            break
    # Once passes here on the runner's count; the numeric checks below need that one graph, run here, to
    # compute all 20 steps.
    if session.frame_count <= 1 and not gave_up:
        return
    guards = [short_guard(r) for r in session.recompile_reasons]
    message = T("`EMADecay.forward` was compiled {n} times in {steps} steps; once is the goal.",
                zh="`EMADecay.forward` 在 {steps} 步里编译了 {n} 次；目标是只编译一次。", n=session.frame_count,
                steps=STEPS)
    if guards:
        message = T.join([message, T(" The guard that failed: `{guard}`. A Python int attribute is baked into the "
                                     "graph as a constant and guarded on its value, so every new value compiles "
                                     "again.",
                                     zh="失败的 guard：`{guard}`。Python int 属性被当作常量写进图里，guard 检查它的值，"
                                        "所以每个新值都会重新编译。", guard=guards[0])], sep="")
    raise Recompile(T.join([message, gave_up], sep="") if gave_up else message,
                    [RecompileDiagnostic(compiles=session.frame_count, limit=1, guard_failures=guards[:10])])


@rests_on_learner_process(T(
    "the keys and values of `state_dict()` and what `load_state_dict` loaded, as your process reported them: "
    "module bookkeeping, not a graph (the step counted here, by the graph run here, must agree)",
    zh="`state_dict()` 的键和值以及 `load_state_dict` 加载的内容，由你的进程报告：这是模块自己的记录，不是图"
       "（必须与本方运行图所数出的步数一致）"))
def test_step_in_state_dict(entry):
    """After 20 compiled steps, state_dict()['step'] is a one-element tensor equal to 20
    zh: 编译后跑完 20 步，state_dict()['step'] 是等于 20 的单元素张量
    """
    module = new_module(entry)
    keys = sorted(remote.state(module, what=STATE_DICT))
    if "step" not in keys:
        raise WrongAnswer(T("`state_dict()` has keys `{keys}` but no `'step'`: a checkpoint would lose the schedule. "
                            "Register the counter so `state_dict` saves it.",
                            zh="`state_dict()` 的键是 `{keys}`，没有 `'step'`：保存检查点时会丢掉步数。"
                               "把计数器注册到模块上，让 `state_dict` 保存它。", keys=keys))
    session = compiled(module)
    one_graph_steps(session, STEPS)
    ours = session.state["target"].get("step")  # advanced here, by the graph
    theirs = remote.state(module, what=STATE_DICT).get("step")
    for saved in (ours, theirs) if ours is not None else (theirs,):
        if not isinstance(saved, torch.Tensor) or saved.numel() != 1 or float(saved) != STEPS:
            raise WrongAnswer(T("after {steps} steps, `state_dict()['step']` is `{saved!r}`; expected a one-element "
                                "tensor equal to {steps}",
                                zh="{steps} 步之后 `state_dict()['step']` 是 `{saved!r}`；应当是等于 {steps} 的单元素张量",
                                steps=STEPS, saved=saved))


def test_input_unchanged(entry):
    """forward leaves the caller's x as it was
    zh: forward 不修改调用者传入的 x
    """
    session = compiled(new_module(entry))
    for i in range(1, 4):
        x = torch.randn(SHAPE)
        before = x.clone()
        session(x)
        assert_same(x, before, case=T("x {shape} float32 after step {i}", zh="第 {i} 步之后的 x {shape} float32",
                                      shape=list(SHAPE), i=i), what=T.same("x"))


@rests_on_learner_process(T(
    "the starting parameters and buffers of your `EMADecay()` as your process reported them: a module's state is "
    "module bookkeeping, not a graph (the graph then advances this side's copy of it)",
    zh="你的 `EMADecay()` 的初始参数和 buffer，由你的进程报告：模块的状态是模块自己的记录，不是图"
       "（之后由图在本方推进这份副本）"))
def test_same_outputs(entry, starter):
    """Each of 20 compiled steps (backend aot_eager) equals the original module
    zh: 编译后的 20 步（backend aot_eager）每一步都与原模块相同
    """
    session = compiled(new_module(entry), local_backend="aot_eager")
    original = starter.EMADecay()
    for i, (_x, out, expected) in enumerate(one_graph_steps(session, STEPS, original), start=1):
        assert_same(out, expected, case=T("step {i} of a fresh `EMADecay`, x {shape} float32",
                                             zh="新建的 `EMADecay` 的第 {i} 步，x {shape} float32", i=i,
                                             shape=list(SHAPE)))


def next_step_after_loading(entry, saved: dict, original) -> tuple:
    """A fresh EMADecay() loads `saved`, then takes one compiled step: (its output, `original`'s, computed first)."""
    resumed = new_module(entry)
    remote.load_state(resumed, saved, what=T.same("`EMADecay().load_state_dict(state)`"))
    [(_x, out, expected)] = one_graph_steps(compiled(resumed), 1, original)
    return out, expected


@rests_on_learner_process(T(
    "the keys and values of `state_dict()` and what `load_state_dict` loaded, as your process reported them: "
    "module bookkeeping, not a graph (the step counted here, by the graph run here, must agree)",
    zh="`state_dict()` 的键和值以及 `load_state_dict` 加载的内容，由你的进程报告：这是模块自己的记录，不是图"
       "（必须与本方运行图所数出的步数一致）"))
def test_resumes_from_state_dict(entry, starter):
    """A fresh module loaded from the state_dict saved after 20 steps computes step 21 like the original, and one
    loaded at a far step (drawn per grading) the step after it
    zh: 新模块加载 20 步后保存的 state_dict，第 21 步的结果与原模块相同；加载很远一步（每次评测抽取）的，下一步也相同
    """
    module = new_module(entry)
    session = compiled(module)
    one_graph_steps(session, STEPS)
    saved = remote.state(module, what=STATE_DICT)
    saved.update({k: v for k, v in session.state["target"].items() if k in saved})  # the steps run here
    original = starter.EMADecay()
    for _ in range(STEPS):
        original(torch.randn(SHAPE))
    out, expected = next_step_after_loading(entry, saved, original)
    assert_same(out, expected, case=T("step {n} of a fresh `EMADecay` loaded from that `state_dict`",
                                         zh="加载了该 `state_dict` 的新 `EMADecay` 的第 {n} 步", n=STEPS + 1))
    far = int(torch.randint(FAR_STEPS[0], FAR_STEPS[1] + 1, ()))
    step = saved.get("step")
    saved["step"] = step.new_zeros(step.shape).copy_(torch.tensor(far)) if isinstance(step, torch.Tensor) else far
    original = starter.EMADecay()
    original.step = far
    out, expected = next_step_after_loading(entry, saved, original)
    assert_same(out, expected, case=T("step {n} of a fresh `EMADecay` loaded from a `state_dict` saved at step {far}",
                                      zh="加载了第 {far} 步保存的 `state_dict` 的新 `EMADecay` 的第 {n} 步",
                                      n=far + 1, far=far))


@rests_on_learner_process(T(
    "the starting parameters and buffers of your `EMADecay()` as your process reported them: a module's state is "
    "module bookkeeping, not a graph (the graph then advances this side's copy of it)",
    zh="你的 `EMADecay()` 的初始参数和 buffer，由你的进程报告：模块的状态是模块自己的记录，不是图"
       "（之后由图在本方推进这份副本）"))
def test_instances_are_independent(entry, starter):
    """Two modules count their own steps
    zh: 两个模块各自计数
    """
    first, second = new_module(entry), new_module(entry)
    for _ in range(3):
        first(torch.randn(SHAPE), what=T.same("`EMADecay.forward`"))
    [(x, out, expected)] = one_graph_steps(compiled(second), 1, starter.EMADecay())
    assert_same(out, expected, case=T("step 1 of a second `EMADecay`, after 3 steps of the first",
                                                     zh="第一个 `EMADecay` 跑了 3 步之后，第二个的第 1 步"))


@rests_on_learner_process(T(
    "the starting parameters and buffers of your `EMADecay()` as your process reported them: a module's state is "
    "module bookkeeping, not a graph (the graph then advances this side's copy of it)",
    zh="你的 `EMADecay()` 的初始参数和 buffer，由你的进程报告：模块的状态是模块自己的记录，不是图"
       "（之后由图在本方推进这份副本）"))
def test_other_shapes(entry, starter):
    """x of other shapes (a 0-dim x and a large one included) gives the original's output and shape, x unchanged
    zh: 其他形状的 x（包括 0 维的 x 和一个大的 x）得到与原模块相同的输出和形状，x 不变
    """
    session = compiled(new_module(entry), local_backend="aot_eager")
    original = starter.EMADecay()
    for i, shape in enumerate([(), (3,), (2, 3, 5), (64, 256)], start=1):
        x = torch.randn(shape)
        before = x.clone()
        expected, out = expected_first(original, session, x)
        case = T("step {i} of a fresh `EMADecay`, x {shape} float32", zh="新建的 `EMADecay` 的第 {i} 步，x {shape} float32",
                 i=i, shape=list(shape))
        assert_same(out, expected, case=case)
        assert_same(x, before, case=case, what=T.same("x"))  # left as it was, at every size
