"""Hidden tests for cudagraph-keep-outputs: every step's output survives the next CUDA-graph replay.

`step` is an operator (public.py): the runner compiles generate(step, h, steps) with fullgraph=True, so the graph
it sends back is the learner's loop with one opaque call per step. Here every such call is replaced by a call of
this side's own `torch.compile(decode_step, mode="reduce-overhead")` (its own weights, which the runner never
sees), and the graph runs as plain Python, as the loop would in a serving engine: each step replays a real CUDA
graph here, and an output the loop keeps without copying it out is overwritten by the next replay (or, while
the graph is being recorded, freed: reading it raises).
"""

import torch

from judge import remote
from judge.checks import (
    GraphBreak,
    WrongAnswer,
    assert_same,
    describe_tensor,
    expected_first,
    grading_device,
    graph_code,
    pristine,
)
from judge.reports.i18n import T
from judge.reports.report import GraphDiagnostic

B, D = 4, 64
_HERE: list = []  # the Steps object the graph's step calls go to in the current run


def decode(h, w):
    return torch.tanh(h @ w)


class Replayed:
    """What a CUDA-graph replay does to its output, on the CPU (the CPU tier): every call writes the same buffer and
    returns it, so an output kept without a copy holds the next call's values."""

    def __init__(self):
        self.out: torch.Tensor | None = None

    def __call__(self, h, w):
        result = decode(h, w)
        if self.out is None or self.out.shape != result.shape:
            self.out = torch.empty_like(result)
        return self.out.copy_(result)


class Steps:
    """This side's decode step: weights the runner never sees, optionally a real CUDA graph; calls are counted."""

    def __init__(self, cuda_graphs: bool):
        self.w = (torch.randn(D, D, generator=torch.Generator().manual_seed(2024)) / D ** 0.5).to(grading_device())
        replay = torch.compile(decode, mode="reduce-overhead") if grading_device() == "cuda" else Replayed()
        self.fn = replay if cuda_graphs else decode
        self.calls = 0

    def __call__(self, h):
        self.calls += 1
        return self.fn(h, self.w)

    def expected(self, h, steps):
        """Row i: the (i+1)-th step's output, computed eagerly here."""
        outs = []
        for _ in range(steps):
            h = decode(h, self.w)
            outs.append(h)
        return torch.stack(outs)


def step(h):
    """What each `step(...)` node of the learner's graph calls here."""
    return _HERE[0](h)


def send_steps_here(gm: torch.fx.GraphModule) -> None:
    """Every `step(...)` node of a rebuilt graph calls `step` here (the test's own Steps) instead of the op."""
    ops = (torch.ops.practice.decode_step.default, torch.ops.practice.decode_step)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in ops:
            node.target = step


def compiled_generate(entry) -> remote.RemoteCompiled:
    """generate(step, h, steps) compiled in the runner; its graph runs here with every step call sent to `step`."""
    return entry.compile(fullgraph=True, dynamic=False, what=T.same("`generate(step, h, steps)`"),
                         rewrite_graph=send_steps_here)


def generate(entry, steps_here: Steps, h, steps: int, driver: remote.RemoteCompiled | None = None):
    """generate(step, h, steps): captured in the runner (on other values), run here with `steps_here`."""
    _HERE[:] = [steps_here]
    return (driver or compiled_generate(entry))(remote.public("step"), h, steps)


def test_one_graph(entry, public):
    """generate(step, h, steps) is captured as one graph with fullgraph=True
    zh: 用 fullgraph=True 时 generate(step, h, steps) 被捕获为一张图
    """
    try:
        generate(entry, Steps(cuda_graphs=False), torch.randn(B, D, device=grading_device()), 4)
    except GraphBreak as exc:
        said = str(exc.message) + " ".join(getattr(d, "reason", "") or "" for d in exc.diagnostics)
        if "cudagraph_mark_step_begin" not in said:
            raise
        raise GraphBreak(T("{message} `torch.compiler.cudagraph_mark_step_begin()` is a call Dynamo skips, so it "
                           "cannot be part of the graph the judge replays your loop from. (Before each call of "
                           "`step` it would not help anyway: it starts a new iteration, which frees the previous "
                           "outputs. Called once before the loop, it makes the CUDA graphs record one graph per "
                           "step, each with its own memory.) Copy the outputs you keep instead: "
                           "`h = step(h).clone()`.",
                           zh="{message} `torch.compiler.cudagraph_mark_step_begin()` 是 Dynamo 会跳过的调用，"
                              "所以它不能出现在判题程序用来重放你的循环的图里。（放在每次调用 `step` 之前也没用："
                              "它开始新的一轮，会释放上一轮的输出。在循环前调用一次，则会让 CUDA graph 每一步各录一张图，"
                              "各占一份内存。）应当把要保留的输出复制出来：`h = step(h).clone()`。",
                           message=exc.message),
                         exc.diagnostics) from None


def test_calls_step_every_step(entry, public):
    """generate calls step once per step, each time on the previous step's output
    zh: generate 每一步调用一次 step，每次都作用在上一步的输出上
    """
    for steps in (1, 5):
        here = Steps(cuda_graphs=False)
        h = torch.randn(B, D, device=grading_device())
        expected, out = expected_first(lambda h: here.expected(h, steps),  # noqa: B023 - called in this iteration
                                       lambda h: generate(entry, here, h, steps), h)  # noqa: B023 - the same
        if here.calls != steps:
            raise WrongAnswer(T("`generate(step, h, {steps})` called `step` {calls} times; it must call it exactly "
                                "{steps} times, each on the previous output: the engine's decode step (its weights, "
                                "its CUDA graph) is only reachable through `step`.",
                                zh="`generate(step, h, {steps})` 调用了 `step` {calls} 次；它必须恰好调用 {steps} 次，"
                                   "每次都作用在上一次的输出上：引擎的解码步（它的权重、它的 CUDA graph）只能通过 "
                                   "`step` 调到。", steps=steps, calls=here.calls))
        assert_same(out, expected,
                    case=T("{h}, steps = {steps}, a plain (eager) step whose outputs are never overwritten",
                           zh="{h}，steps = {steps}，普通的（eager）step，输出不会被覆盖",
                           h=describe_tensor("h", h), steps=steps))


def _overwritten_rows(out, expected) -> list[int]:
    """Rows of `out` that hold a later step's output instead of their own (what an overwrite leaves behind)."""
    rows = []
    for i in range(expected.shape[0] - 1):
        if not torch.allclose(out[i].float().cpu(), expected[i].float().cpu(), rtol=1e-4, atol=1e-5) and any(
                torch.allclose(out[i].float().cpu(), expected[j].float().cpu(), rtol=1e-4, atol=1e-5)
                for j in range(i + 1, expected.shape[0])):
            rows.append(i)
    return rows


def test_outputs_survive_replays(entry, public):
    """With a real CUDA-graph step, every row survives the later replays (4 and 7 steps, each run twice)
    zh: step 是真正的 CUDA graph 时，每一行都不被后面的重放覆盖（4 步和 7 步，各运行两次）
    """
    here = Steps(cuda_graphs=True)
    for steps in (4, 7):
        for run in (T("while the CUDA graph is warmed up and recorded", zh="CUDA graph 预热和录制期间"),
                    T("every step replaying the recorded graph", zh="每一步都重放录好的图")):
            h = torch.randn(B, D, device=grading_device())
            step_is = T("a CUDA graph (`mode='reduce-overhead'`), {run}", zh="一个 CUDA graph（`mode='reduce-overhead'`），"
                        "{run}", run=run) if grading_device() == "cuda" else \
                T("a step that writes its output into the same buffer at every call, as a CUDA-graph replay does "
                  "(on the CPU)", zh="每次调用都把输出写进同一块缓冲区的 step，和 CUDA graph 重放一样（在 CPU 上）")
            case = T("{h}, steps = {steps}, step = {step_is}", zh="{h}，steps = {steps}，step 是{step_is}",
                     h=describe_tensor("h", h), steps=steps, step_is=step_is)
            driver = compiled_generate(entry)
            expected = here.expected(pristine(h), steps)  # first, on a copy of h
            try:
                out = generate(entry, here, h, steps, driver)
            except WrongAnswer as exc:
                if "overwritten" not in str(exc.message):
                    raise
                raise WrongAnswer(T("{case}: your loop read a step's output after the next call of `step` had "
                                    "replaced it. With `mode='reduce-overhead'` every output lives in the CUDA "
                                    "graph's memory pool until the next replay; copy what you keep out of it "
                                    "(`h.clone()`) right after the call, before calling `step` again.",
                                    zh="{case}：下一次调用 `step` 已经替换了某一步的输出之后，你的循环才去读它。"
                                       "用 `mode='reduce-overhead'` 时，每个输出都放在 CUDA graph 的内存池里，"
                                       "直到下一次重放；要保留的输出在调用之后、再次调用 `step` 之前就复制出来"
                                       "（`h.clone()`）。", case=case), exc.diagnostics) from None
            if not isinstance(out, torch.Tensor) or out.device.type != torch.device(grading_device()).type:
                where = out.device if isinstance(out, torch.Tensor) else type(out).__name__
                raise WrongAnswer(T("{case}: `generate` returned `{where}`; the result must stay on the GPU, where "
                                    "`h` is (a copy to the host waits for the GPU at every step)",
                                    zh="{case}：`generate` 返回的是 `{where}`；结果必须留在 `h` 所在的 GPU 上"
                                       "（复制到主机会让每一步都等 GPU）", case=case, where=where))
            rows = _overwritten_rows(out, expected)
            if rows:
                shown = ", ".join(map(str, rows[:6]))
                raise WrongAnswer(T("{case}: rows {shown} of the result hold a later step's output instead of their "
                                    "own: the next replay of the CUDA graph overwrote them, because they still "
                                    "pointed into the graph's memory pool. Copy each output out (`h.clone()`) "
                                    "before the next call of `step`.",
                                    zh="{case}：结果的第 {shown} 行存的是后面某一步的输出，而不是它自己那一步的："
                                       "它们仍指向 CUDA graph 的内存池，被下一次重放覆盖了。在下一次调用 `step` "
                                       "之前把每个输出复制出来（`h.clone()`）。", case=case, shown=shown),
                                  [GraphDiagnostic(title=T("the graph Dynamo captured from `generate`",
                                                           zh="Dynamo 从 `generate` 捕获的图"),
                                                   code=graph_code(driver.graphs[0].gm))])
            assert_same(out, expected, case=case)
