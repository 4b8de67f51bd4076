"""Hidden tests for cudagraph-skipped-step: the whole decode step is one CUDA graph, recorded once and replayed.

The runner captures attend's graph on CUDA example inputs; the judge rebuilds it here and compiles it here the way
torch.compile(mode="reduce-overhead") does, then calls it on its own inputs and reads what Inductor's CUDA-graph
layer decided: skips and their reasons, partitions (pieces left outside the CUDA graph), how many CUDA graphs were
recorded. The learner's lines come from the rebuilt graph run here (which nodes make CPU tensors).
"""

import pytest
import torch

from judge.checks import (
    WrongAnswer,
    assert_no_host_sync,
    assert_same,
    assert_same_result,
    describe_tensor,
    expected_first,
    grading_device,
    once,
)
from judge.checks.cudagraphs import CudagraphWatch, cpu_results, recorded_cuda_graphs, reduce_overhead_backend
from judge.reports.i18n import T
from judge.reports.report import GraphDiagnostic

B, L, D = 4, 32, 64
CALLS = 6
_REPLAYS: dict = {}


def attend(q, k, v, length):
    """The grader's own copy of the step (float64 inside): the learner's file cannot change it."""
    scores = (k.double() @ q.double().unsqueeze(-1)).squeeze(-1) / k.shape[-1] ** 0.5
    positions = torch.arange(k.shape[1], device=k.device)
    scores = scores.masked_fill(positions[None, :] >= length[:, None], float("-inf"))
    return (scores.softmax(-1).unsqueeze(-1) * v.double()).sum(1).to(q.dtype)


def inputs(seed, lengths=None, dtype=torch.float32, longest=None):
    """q, k, v, length on the GPU; random lengths in 1..L unless given (`longest`: the largest of them)."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, D, generator=g, dtype=torch.float64)
    k = torch.randn(B, L, D, generator=g, dtype=torch.float64)
    v = torch.randn(B, L, D, generator=g, dtype=torch.float64)
    length = torch.tensor(lengths) if lengths is not None else torch.randint(1, (longest or L) + 1, (B,), generator=g)
    if longest is not None:
        length[seed % B] = longest
    device = grading_device()
    return q.to(device, dtype), k.to(device, dtype), v.to(device, dtype), length.to(device)


def case(q, length, note: T | None = None) -> T:
    text = T("{q}, k and v [{b}, {l}, {d}], length = {length}", zh="{q}，k 和 v [{b}, {l}, {d}]，length = {length}",
             q=describe_tensor("q", q), b=B, l=L, d=D, length=length.tolist())
    return T("{text} ({note})", zh="{text}（{note}）", text=text, note=note) if note else text


def cpu_lines(compiled, args) -> T | None:
    """The learner's lines whose results are CPU tensors (from the rebuilt graph, run here), or None."""
    if not compiled.graphs:
        return None
    found, seen = [], set()
    for node, loc in cpu_results(compiled.graphs[0].gm, compiled.inputs_for(0, *args)):
        key = (loc.line, loc.text) if loc is not None else node.name
        if key in seen:
            continue
        seen.add(key)
        found.append(T("line {line} (`{code}`)", zh="第 {line} 行（`{code}`）", line=loc.line, code=loc.text)
                     if loc is not None else T.same(f"`{node.name}`"))
    return T.join(found[:4], sep=", ") if found else None


def replay(entry):
    """attend compiled here with mode="reduce-overhead", called CALLS times on new values of the same shapes."""
    def run():
        compiled = entry.compile(fullgraph=True, dynamic=False, what=T.same("`attend`"),
                                 local_backend=reduce_overhead_backend())
        calls = []
        with CudagraphWatch() as watch:
            for call in range(CALLS):  # same shapes, new values; the longest row differs on every call
                args = inputs(100 + call, longest=L - 3 * call)
                expected, out = expected_first(attend, compiled, *args)
                calls.append((args, expected, out.clone() if isinstance(out, torch.Tensor) else out))  # copied
                # out of the CUDA graph's pool before the next replay overwrites it
        return compiled, watch, recorded_cuda_graphs(), calls

    return once(_REPLAYS, run)


def test_one_graph(entry):
    """torch.compile(attend, fullgraph=True) captures the step as one graph, with no host sync in it
    zh: torch.compile(attend, fullgraph=True) 把这一步捕获为一张图，图里没有主机同步
    """
    compiled = entry.compile(fullgraph=True, dynamic=False)
    compiled(*inputs(1))
    # a CUDA graph cannot wait for the host
    assert_no_host_sync(compiled.graph_modules, what=T("`attend`'s graph", zh="`attend` 的图"))


def test_one_cuda_graph(entry):
    """With mode="reduce-overhead" the whole step is one CUDA graph: not skipped, not split, recorded once
    zh: 用 mode="reduce-overhead" 时整步是一个 CUDA graph：没被跳过、没被拆开、只录制一次
    """
    compiled, watch, recorded, calls = replay(entry)
    code = GraphDiagnostic(title=T("the graph Dynamo captured from `attend`", zh="Dynamo 从 `attend` 捕获的图"),
                           code=compiled.graphs[0].gm.code.strip())
    lines = cpu_lines(compiled, calls[0][0])
    cpu_note = T(" The step makes tensors on the CPU at {lines}: make them on the GPU (`device=q.device`), so "
                 "that nothing in the step runs on the CPU or copies between CPU and GPU.",
                 zh="这一步在 {lines} 处在 CPU 上创建了张量：改在 GPU 上创建（`device=q.device`），"
                    "让这一步里没有任何东西在 CPU 上运行，也没有 CPU 与 GPU 之间的复制。",
                 lines=lines) if lines else T.same("")
    if watch.reasons or watch.skips:
        reasons = (T.same("`" + "; ".join(watch.reasons) + "`") if watch.reasons
                   else T("a skip Inductor did not explain", zh="Inductor 没有说明原因的跳过"))
        raise WrongAnswer(T("compiled with `mode='reduce-overhead'`, `attend` ran without CUDA graphs: Inductor "
                            "said {reasons}. Every call then launches its kernels one by one again, which is what "
                            "reduce-overhead was meant to avoid.{cpu_note}",
                            zh="用 `mode='reduce-overhead'` 编译后，`attend` 运行时没有用上 CUDA graph：Inductor "
                               "说 {reasons}。于是每次调用又要一个个地启动内核，而这正是 reduce-overhead 想避免的。"
                               "{cpu_note}", reasons=reasons, cpu_note=cpu_note), [code])
    if watch.partitions:
        raise WrongAnswer(T("compiled with `mode='reduce-overhead'`, `attend` was split into {n} pieces: "
                            "Inductor keeps work a CUDA graph cannot hold (work on the CPU, copies between CPU and "
                            "GPU) outside the CUDA graphs and captures only the GPU pieces around it, so every call "
                            "still goes back to the CPU in the middle of the step.{cpu_note}",
                            zh="用 `mode='reduce-overhead'` 编译后，`attend` 被拆成了 {n} 段：CUDA graph 容纳不了的"
                               "工作（在 CPU 上的计算、CPU 与 GPU 之间的复制）被 Inductor 留在 CUDA graph 之外，"
                               "只把它前后在 GPU 上的部分录成 CUDA graph，所以每次调用在这一步中间仍要回到 CPU。"
                               "{cpu_note}", n=watch.partitions, cpu_note=cpu_note), [code])
    if recorded is not None and recorded != 1:
        raise WrongAnswer(T("over {calls} calls with new values of the same shapes, {recorded} CUDA graphs were "
                            "recorded; one step should be recorded once and then replayed. A CUDA graph has fixed "
                            "shapes: when a size inside the step depends on the values (slicing the cache to "
                            "`length.max()`, say), every new size records another graph. Keep every shape fixed and "
                            "mask instead.",
                            zh="在形状相同、取值不同的 {calls} 次调用中录制了 {recorded} 个 CUDA graph；同一步应当只"
                               "录制一次，之后都重放。CUDA graph 的形状是固定的：如果这一步里某个尺寸取决于数值"
                               "（比如把缓存切到 `length.max()`），每出现一个新尺寸就要再录一张图。让所有形状保持"
                               "不变，改用掩码。", calls=CALLS, recorded=recorded), [code])


def test_replayed_results(entry):
    """Every replay of the CUDA graph equals the original step on its own inputs
    zh: CUDA graph 的每次重放都与原来的这一步在同样输入上的结果相同
    """
    _, _, _, calls = replay(entry)
    for args, expected, out in calls:
        assert_same(out, expected, case=case(args[0], args[3], T("replayed from the CUDA graph",
                                                                  zh="从 CUDA graph 重放")))


CASES = {
    "random": None,
    "full": [L] * B,
    "one": [1] * B,
    "mixed": [1, L, L // 2, 3],
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_as_original(entry, name):
    """The step equals the original: random lengths, every row full, one entry per row, mixed
    zh: 这一步与原函数相同：随机长度、每行都满、每行只有一个元素、混合长度
    """
    fn = entry.compile(fullgraph=True, dynamic=False)
    args = inputs(7, CASES[name])
    assert_same_result(fn, attend, *args, case=case(args[0], args[3]))


def test_bfloat16(entry):
    """bfloat16 inputs give a bfloat16 result equal to the original within bfloat16 precision
    zh: bfloat16 输入得到 bfloat16 结果，在 bfloat16 精度内与原函数相同
    """
    fn = entry.compile(fullgraph=True, dynamic=False)
    args = inputs(8, dtype=torch.bfloat16)
    assert_same_result(fn, attend, *args, case=case(args[0], args[3]), rtol=2e-2, atol=2e-2)


def test_inputs_unchanged(entry):
    """q, k, v and length are left as they were
    zh: q、k、v 和 length 保持原样
    """
    fn = entry.compile(fullgraph=True, dynamic=False)
    args = inputs(9)
    before = [t.clone() for t in args]
    fn(*args)
    for name, t, old in zip(("q", "k", "v", "length"), args, before):
        if not torch.equal(t, old):
            raise WrongAnswer(T("`attend` changed its input `{name}` in place; the caller still needs it.",
                                zh="`attend` 原地修改了它的输入 `{name}`；调用方还要用它。", name=name))
