"""Hidden tests for cudagraph-skipped-step: the whole decode step is one CUDA graph, recorded once and replayed.

The runner captures attend's graph on CUDA example inputs; the judge rebuilds it here and compiles it here the way
torch.compile(mode="reduce-overhead") does, then calls it on its own inputs and reads what Inductor's CUDA-graph
layer decided: skips and their reasons, partitions (pieces left outside the CUDA graph), how many CUDA graphs were
recorded. The learner's lines come from the rebuilt graph run here (which nodes make CPU tensors).
"""

import pytest
import torch

from judge import remote
from judge.checks import WrongAnswer, assert_no_host_sync, assert_same, describe_tensor
from judge.checks.cudagraphs import CudagraphWatch, cpu_results, recorded_cuda_graphs, reduce_overhead_backend
from judge.report import GraphDiagnostic

B, L, D = 4, 32, 64
DEVICE = "cuda"
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
    return q.to(DEVICE, dtype), k.to(DEVICE, dtype), v.to(DEVICE, dtype), length.to(DEVICE)


def case(q, length, note=""):
    text = f"{describe_tensor('q', q)}, k and v [{B}, {L}, {D}], length = {length.tolist()}"
    return f"{text} ({note})" if note else text


def cpu_lines(compiled, args) -> str:
    """', '.join of the learner's lines whose results are CPU tensors (from the rebuilt graph, run here)."""
    if not compiled.graphs:
        return ""
    found = []
    for node, loc in cpu_results(compiled.graphs[0].gm, compiled.inputs_for(0, *args)):
        where = f"line {loc.line} (`{loc.text}`)" if loc is not None else f"`{node.name}`"
        if where not in found:
            found.append(where)
    return ", ".join(found[:4])


def replay(entry):
    """attend compiled here with mode="reduce-overhead", called CALLS times on new values of the same shapes."""
    if "result" not in _REPLAYS:
        compiled = remote.RemoteCompiled(entry, {"fullgraph": True, "dynamic": False}, what="attend",
                                         local_backend=reduce_overhead_backend())
        calls = []
        try:
            with CudagraphWatch() as watch:
                for call in range(CALLS):  # same shapes, new values; the longest row differs on every call
                    args = inputs(100 + call, longest=L - 3 * call)
                    expected = attend(*args)
                    out = compiled(*args)
                    calls.append((args, expected, out.clone() if isinstance(out, torch.Tensor) else out))  # copied
                    # out of the CUDA graph's pool before the next replay overwrites it
            _REPLAYS["result"] = (compiled, watch, recorded_cuda_graphs(), calls)
        except Exception as exc:  # noqa: BLE001 - raised again by every check that needs it
            _REPLAYS["result"] = exc
    if isinstance(_REPLAYS["result"], Exception):
        raise _REPLAYS["result"]
    return _REPLAYS["result"]


def test_one_graph(entry):
    """torch.compile(attend, fullgraph=True) captures the step as one graph, with no host sync in it"""
    compiled = entry.compile(fullgraph=True, dynamic=False)
    compiled(*inputs(1))
    assert_no_host_sync(compiled.graph_modules, what="attend's graph")  # a CUDA graph cannot wait for the host


def test_one_cuda_graph(entry):
    """With mode="reduce-overhead" the whole step is one CUDA graph: not skipped, not split, recorded once"""
    compiled, watch, recorded, calls = replay(entry)
    code = GraphDiagnostic(title="the graph Dynamo captured from attend", code=compiled.graphs[0].gm.code.strip())
    lines = cpu_lines(compiled, calls[0][0])
    cpu_note = (f" The step makes tensors on the CPU at {lines}: make them on the GPU (device=q.device), so "
                "that nothing in the step runs on the CPU or copies between CPU and GPU.") if lines else ""
    if watch.reasons or watch.skips:
        reasons = "; ".join(watch.reasons) or "a skip Inductor did not explain"
        raise WrongAnswer(f"compiled with mode='reduce-overhead', attend ran without CUDA graphs: Inductor said "
                          f"\"{reasons}\". Every call then launches its kernels one by one again, which is what "
                          f"reduce-overhead was meant to avoid.{cpu_note}", [code])
    if watch.partitions:
        raise WrongAnswer(f"compiled with mode='reduce-overhead', attend was split into {watch.partitions} pieces: "
                          "Inductor keeps work a CUDA graph cannot hold (work on the CPU, copies between CPU and "
                          "GPU) outside the CUDA graphs and captures only the GPU pieces around it, so every call "
                          f"still goes back to the CPU in the middle of the step.{cpu_note}", [code])
    if recorded is not None and recorded != 1:
        raise WrongAnswer(f"over {CALLS} calls with new values of the same shapes, {recorded} CUDA graphs were "
                          "recorded; one step should be recorded once and then replayed. A CUDA graph has fixed "
                          "shapes: when a size inside the step depends on the values (slicing the cache to "
                          "length.max(), say), every new size records another graph. Keep every shape fixed and "
                          "mask instead.", [code])


def test_replayed_results(entry):
    """Every replay of the CUDA graph equals the original step on its own inputs"""
    _, _, _, calls = replay(entry)
    for args, expected, out in calls:
        assert_same(out, expected, case=case(args[0], args[3], "replayed from the CUDA graph"))


CASES = {
    "random": None,
    "full": [L] * B,
    "one": [1] * B,
    "mixed": [1, L, L // 2, 3],
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_as_original(entry, name):
    """The step equals the original: random lengths, every row full, one entry per row, mixed"""
    fn = entry.compile(fullgraph=True, dynamic=False)
    args = inputs(7, CASES[name])
    expected = attend(*args)
    assert_same(fn(*args), expected, case=case(args[0], args[3]))


def test_bfloat16(entry):
    """bfloat16 inputs give a bfloat16 result equal to the original within bfloat16 precision"""
    fn = entry.compile(fullgraph=True, dynamic=False)
    args = inputs(8, dtype=torch.bfloat16)
    expected = attend(*args)
    assert_same(fn(*args), expected, case=case(args[0], args[3]), rtol=2e-2, atol=2e-2)


def test_inputs_unchanged(entry):
    """q, k, v and length are left as they were"""
    fn = entry.compile(fullgraph=True, dynamic=False)
    args = inputs(9)
    before = [t.clone() for t in args]
    fn(*args)
    for name, t, old in zip(("q", "k", "v", "length"), args, before):
        if not torch.equal(t, old):
            raise WrongAnswer(f"attend changed its input {name} in place; the caller still needs it.")
