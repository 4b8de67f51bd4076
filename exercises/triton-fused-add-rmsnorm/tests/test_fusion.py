"""Hidden tests for triton-fused-add-rmsnorm: one graph, one Triton kernel writing both results, same numbers.

The runner captures add_rmsnorm's graph on CUDA example inputs; the judge rebuilds it here, compiles it with
Inductor here (Triton, on this GPU) and reads the generated code here, on its own inputs. A graph that calls an
operator the judge cannot rebuild (the starter's vendor op, any custom op of the learner's) is reported as what
it is for Inductor: an opaque call that stops fusion.
"""

import re

import pytest
import torch
from torch._inductor.utils import run_and_get_code

from judge.checks import (
    Forbidden,
    WrongAnswer,
    assert_same,
    assert_same_result,
    compile_one_graph,
    describe_tensor,
    expected_first,
    grading_device,
    once,
)
from judge.checks.inductor import triton_kernel_names, triton_kernel_source
from judge.checks.wrapper import assert_no_opaque_calls, call_bodies, opaque_operator
from judge.reports.i18n import T
from judge.reports.report import GraphDiagnostic

N, D = 16, 1024
EPS = 1e-6
# Parts of a kernel name that show the residual add and the norm (a reduction over the row).
ADD_PART = re.compile(r"_add(_|$)")
NORM_PART = re.compile(r"_(mean|sum|rsqrt|sqrt|pow|norm|linalg_vector_norm)(_|$)")

_INDUCTOR: dict = {}


def add_rmsnorm(x, residual, w, eps=EPS):
    """The grader's own copy of what the vendor kernel computes: the learner's file cannot change it."""
    h = (x.double() + residual.double()).to(x.dtype)
    hf = h.double()
    out = (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w
    return out, h


def inputs(rows=N, dtype=torch.bfloat16, scale=1.0):
    g = torch.Generator().manual_seed(rows * 7 + int(scale * 1000) % 97)
    x = torch.randn(rows, D, generator=g, dtype=torch.float64) * scale
    r = torch.randn(rows, D, generator=g, dtype=torch.float64) * scale
    w = 1 + 0.1 * torch.randn(D, generator=g, dtype=torch.float64)
    device = grading_device()
    return x.to(device, dtype), r.to(device, dtype), w.to(device, dtype)


def inductor_run(entry):
    """One real Inductor compile of add_rmsnorm's captured graph, here, shared by the kernel checks."""
    def run():
        x, r, w = inputs()
        compiled = entry.compile(fullgraph=True, what=T.same("`add_rmsnorm`"), local_backend="inductor")
        expected, (output, codes) = expected_first(add_rmsnorm, lambda *a: run_and_get_code(compiled, *a), x, r, w)
        return expected, output, codes

    return once(_INDUCTOR, run)


def test_one_graph(entry):
    """torch.compile(add_rmsnorm, fullgraph=True) captures the add and the norm in one graph
    zh: torch.compile(add_rmsnorm, fullgraph=True) 把加法和归一化捕获在一张图里
    """
    try:
        compile_one_graph(entry, *inputs(), what=T.same("`torch.compile(add_rmsnorm, fullgraph=True)`"))
    except Forbidden as exc:
        if not opaque_operator(exc):
            raise
        # One graph was captured; that it calls an opaque operator is test_no_opaque_call's finding.


def test_no_opaque_call(entry):
    """Inductor's generated call() runs no extern, fallback or custom-op call
    zh: Inductor 生成的 call() 里没有 extern、fallback 或自定义算子调用
    """
    try:
        _, _, codes = inductor_run(entry)
    except Forbidden as exc:
        op = opaque_operator(exc)
        if not op:
            raise
        raise WrongAnswer(T("the graph of `add_rmsnorm` calls `{op}`, an operator Inductor cannot see into: its "
                            "`call()` would launch that kernel as is, outside the Triton kernels it generates, so "
                            "nothing fuses with it (under `torch.compile`, vLLM runs such ops' native PyTorch code "
                            "for this reason). Write the add and the norm with plain tensor operations.",
                            zh="`add_rmsnorm` 的图调用了 `{op}`，这是 Inductor 看不进去的算子：它的 `call()` 只能"
                               "原样启动那个内核，放在自己生成的 Triton 内核之外，于是什么都融合不进去（正因如此，"
                               "vLLM 在 `torch.compile` 下会改跑这类算子的原生 PyTorch 实现）。用普通的张量运算"
                               "写出加法和归一化。", op=op)) from None
    assert_no_opaque_calls(codes, what=T.same("`add_rmsnorm`"))


def test_one_triton_kernel(entry):
    """Inductor generates exactly one Triton kernel, and it holds both the add and the norm
    zh: Inductor 只生成一个 Triton 内核，加法和归一化都在里面
    """
    _, _, codes = inductor_run(entry)
    names = triton_kernel_names(codes)
    diag = GraphDiagnostic(title=T("Inductor's `call()`", zh="Inductor 的 `call()`"),
                           code="\n\n".join(call_bodies(codes)), highlight=names)
    if len(names) != 1:
        listed = T.same(", ".join(f"`{n}`" for n in names)) if names else T("none", zh="无")
        raise WrongAnswer(T("Inductor generated {n} Triton kernels ({names}); the add and the norm should fuse into "
                            "exactly one, which reads `x` and `residual` once and writes both results. Each extra "
                            "kernel writes its result to GPU memory and the next one reads it back.",
                            zh="Inductor 生成了 {n} 个 Triton 内核（{names}）；加法和归一化应当融合成恰好一个内核，"
                               "只读一次 `x` 和 `residual`，写出两个结果。每多一个内核，就要把结果写到显存，"
                               "再由下一个内核读回来。", n=len(names), names=listed), [diag])
    name = names[0]
    if not ADD_PART.search(name) or not NORM_PART.search(name):
        missing = (T("the residual add", zh="残差加法") if not ADD_PART.search(name)
                   else T("the norm (a mean over the row)", zh="归一化（对一行求均值）"))
        raise WrongAnswer(T("the one generated kernel, `{name}`, does not contain {missing}; its name lists the "
                            "operations fused into it.",
                            zh="生成的唯一内核 `{name}` 里没有{missing}；内核名列出了融合进去的运算。",
                            name=name, missing=missing),
                          [diag, GraphDiagnostic(title=T.same(name), code=triton_kernel_source(codes, name))])


CASES = {
    "random": dict(scale=1.0),
    "zeros": dict(scale=0.0),
    "tiny": dict(scale=1e-4),
}


def compiled(entry):
    """add_rmsnorm compiled in the runner; each call runs the captured graph here, on the test's own inputs."""
    return entry.compile(fullgraph=True)


@pytest.mark.parametrize("name", list(CASES))
def test_same_as_original(entry, name):
    """Both results equal the original on random, all-zero and tiny inputs (where eps matters), in float32
    zh: 在 float32 的随机、全零和极小输入（eps 起作用的地方）上，两个结果都与原函数相同
    """
    fn = compiled(entry)
    for rows in (N, 3):
        x, r, w = inputs(rows, torch.float32, **CASES[name])
        note = {"zeros": T("`x` and `residual` all zeros", zh="`x` 和 `residual` 全为 0"),
                "tiny": T.same("`|x| ~ 1e-4`, `mean(h^2) ~ 1e-8 < eps`")}.get(name, "")
        assert_same_result(fn, add_rmsnorm, x, r, w, case=describe_tensor("x", x, note), what=T.same("(out, h)"))


def test_bfloat16(entry):
    """bfloat16 inputs give bfloat16 results equal to the original within bfloat16 precision
    zh: bfloat16 输入得到 bfloat16 结果，在 bfloat16 精度内与原函数相同
    """
    fn = compiled(entry)
    x, r, w = inputs(N, torch.bfloat16)
    assert_same_result(fn, add_rmsnorm, x, r, w, case=describe_tensor("x", x), what=T.same("(out, h)"), rtol=2e-2,
                       atol=2e-2)


def test_inputs_unchanged(entry):
    """x, residual and w are left as they were (the results are new tensors)
    zh: x、residual 和 w 保持原样（结果是新张量）
    """
    fn = compiled(entry)
    x, r, w = inputs(N, torch.float32)
    before = [t.clone() for t in (x, r, w)]
    fn(x, r, w)
    for name, t, old in zip(("x", "residual", "w"), (x, r, w), before):
        if not torch.equal(t, old):
            raise WrongAnswer(T("`add_rmsnorm` changed its input `{name}` in place; this contract returns the new "
                                "residual as a new tensor and leaves the caller's tensors alone.",
                                zh="`add_rmsnorm` 原地修改了它的输入 `{name}`；按这道题的约定，新的 residual 作为"
                                   "新张量返回，调用方的张量保持不动。", name=name))


def test_fused_kernel_result(entry):
    """The Inductor-compiled add_rmsnorm (its Triton kernel) equals the original
    zh: Inductor 编译的 add_rmsnorm（它的 Triton 内核）与原函数相同
    """
    expected, output, _ = inductor_run(entry)
    assert_same(output, expected, case=T.same(f"x [{N}, {D}] bfloat16, Inductor"), what=T.same("(out, h)"),
                rtol=2e-2, atol=2e-2)


def test_called_as_is(entry):
    """add_rmsnorm called as is, without torch.compile (your own kernels included), equals the original
    zh: 不经 torch.compile 直接调用 add_rmsnorm（包括你自己写的内核），结果与原函数相同
    """
    # In the CPU tier a Triton kernel of the learner's runs under Triton's interpreter (judge/shared/tiers.py).
    for rows in (N, 3):
        x, r, w = inputs(rows, torch.float32)
        assert_same_result(entry, add_rmsnorm, x, r, w, case=describe_tensor("x", x, T("called without "
                           "`torch.compile`", zh="不经 `torch.compile` 调用")), what=T.same("(out, h)"))
