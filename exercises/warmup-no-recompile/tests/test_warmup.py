"""Hidden tests for warmup-no-recompile: the learner warms the grader's decode step, then the grader serves.

The learner's warmup runs in the runner on the grader's step (public.py). The step that compiles is this side's:
each call of `step_fn` is sent here as it happens (shapes, dtypes, strides, dynamic marks and grad mode; a note
of the runner's answer, judge.runner_side.runner.tell_verifier) and runs on this side's own compiled decode step, which
counts the compiles itself and then serves every length. Nothing in the runner keeps a record of the calls, so
a warm-up that never calls `step_fn` warms nothing here.
"""

import contextlib

import torch
from torch._dynamo.decorators import mark_dynamic, mark_static, mark_unbacked, maybe_mark_dynamic

from judge import remote
from judge.checks import CheckFailure, CompileCounter, WrongAnswer, assert_compiles, assert_same, recompile_log
from judge.checks.serving import serve_without_recompile
from judge.reports.i18n import T
from judge.reports.report import ErrorDiagnostic, Verdict

B = 2
# Lengths served after the warm-up: both ends, the sizes 1 and 2, and lengths the warm-up is unlikely to use.
LENGTHS = [37, 1, 512, 2, 300, 3, 129, 64, 511, 17, 255, 256, 5, 400, 128, 99, 4, 480, 200, 31]
MAX_CALLS = 64
MALFORMED_CALL = T("a warm-up call is described malformed", zh="一次预热调用的描述格式不对")
MALFORMED_ARG = T("a warm-up argument is described malformed", zh="一个预热参数的描述格式不对")
MALFORMED_TENSOR = T("a warm-up tensor is described malformed", zh="一个预热张量的描述格式不对")
DTYPES = {name: getattr(torch, name) for name in ("float16", "bfloat16", "float32", "float64", "int32", "int64")}


class Warmed:
    """The grader's decode step compiled here, after the learner's warm-up was repeated on it."""

    def __init__(self, public, backend):
        self.counter = CompileCounter(backend)
        self.compiled = torch.compile(public.decode_step, backend=self.counter)
        self.reasons: list[str] = []


def warmed(entry, public, backend="eager", **kwargs) -> Warmed:
    """Run warmup(step_fn, **kwargs) in the runner, then repeat the calls it made on this side's own step."""
    step = remote.public("DecodeStep")()
    calls = remote.call_printing(entry, step, what=T.same("`warmup(step_fn)`"), **kwargs).notes
    if len(calls) > MAX_CALLS:
        raise WrongAnswer(T("`warmup` called `step_fn` more than {n} times; a warm-up needs a few calls",
                            zh="`warmup` 调用 `step_fn` 超过了 {n} 次；预热只需要几次调用", n=MAX_CALLS))
    result = Warmed(public, backend)
    with recompile_log() as reasons:
        for i, call in enumerate(calls, start=1):
            args, kwargs_, mode, shown = rebuild_call(call, i)
            try:
                with mode:
                    result.compiled(*args, **kwargs_)
            except Exception as exc:  # noqa: BLE001 - the learner's warm-up call fails on the grader's step
                first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
                raise CheckFailure(
                    T("`warmup`'s call {i}, {shown}, fails on the grader's decode step: `{error}: {detail}`",
                      zh="`warmup` 的第 {i} 次调用（{shown}）在判题方的解码步上出错：`{error}: {detail}`",
                      i=i, shown=shown, error=type(exc).__name__, detail=first),
                    [ErrorDiagnostic(exc_type=type(exc).__name__, message=str(exc)[:2000])],
                    verdict=Verdict.RUNTIME_ERROR) from None
    result.reasons = list(reasons)
    return result


def rebuild_call(call, i):
    """(args, kwargs, global-state context, text) of one warm-up call as the runner described it."""
    if not isinstance(call, dict) or not isinstance(call.get("args"), list) or not isinstance(call.get("kwargs"), dict):
        raise remote.Protocol(MALFORMED_CALL)
    args = [rebuild_value(v, i) for v in call["args"]]
    kwargs = {str(k): rebuild_value(v, i) for k, v in call["kwargs"].items()}
    shown = ", ".join([show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()])
    mode = contextlib.ExitStack()
    under = []
    if call.get("inference") is True:
        mode.enter_context(torch.inference_mode())
        under.append("torch.inference_mode()")
    elif call.get("grad") is False:
        mode.enter_context(torch.no_grad())
        under.append("torch.no_grad()")
    if call.get("autocast") is True:
        mode.enter_context(torch.autocast("cpu"))
        under.append("torch.autocast('cpu')")
    if under:
        modes = "`, `".join(under)
        return args, kwargs, mode, T("`step_fn({args})`, under `{modes}`", zh="`step_fn({args})`，在 `{modes}` 下",
                                     args=shown, modes=modes)
    return args, kwargs, mode, T.same(f"`step_fn({shown})`")


def show(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"x {list(value.shape)} {str(value.dtype).removeprefix('torch.')}"
    return repr(value)[:40]


def rebuild_value(desc, i):
    """A fresh value that looks like the described argument (same shape, strides, dtype, marks)."""
    if not isinstance(desc, dict) or len(desc) != 1:
        raise remote.Protocol(MALFORMED_ARG)
    (kind, body), = desc.items()
    if kind == "value" and (body is None or isinstance(body, (bool, int, float, str))):
        return body
    if kind == "other":
        raise WrongAnswer(T("`warmup`'s call {i} passes `step_fn` a `{kind}`; `step_fn` takes one tensor `x`",
                            zh="`warmup` 的第 {i} 次调用传给 `step_fn` 一个 `{kind}`；`step_fn` 只接收一个张量 `x`",
                            i=i, kind=str(body)[:40]))
    if kind != "tensor" or not isinstance(body, dict):
        raise remote.Protocol(MALFORMED_ARG)
    try:
        shape, stride = [int(s) for s in body["shape"]], [int(s) for s in body["stride"]]
        dtype, marks = DTYPES.get(body["dtype"]), body["marks"]
        if body.get("type") not in ("Tensor", "Parameter") or body.get("device") != "cpu" or dtype is None:
            raise WrongAnswer(T("`warmup`'s call {i} passes `step_fn` a `{kind}` of dtype `{dtype}` on `{device}`; "
                                "serving sends CPU float tensors",
                                zh="`warmup` 的第 {i} 次调用传给 `step_fn` 一个在 `{device}` 上、dtype 为 `{dtype}` 的 "
                                   "`{kind}`；上线后送来的是 CPU 上的浮点张量",
                                i=i, kind=body.get('type'), dtype=body.get('dtype'), device=body.get('device')))
        if len(shape) != len(stride) or len(shape) > 8 or any(s < 0 for s in shape + stride) \
                or sum((n - 1) * s for n, s in zip(shape, stride) if n) > 1 << 24:
            raise remote.Protocol(T("a warm-up tensor is described with impossible sizes",
                                    zh="一个预热张量的描述里的大小不可能成立"))
        with torch.inference_mode(bool(body.get("inference"))):
            x = torch.empty_strided(shape, stride, dtype=dtype)
            x.copy_(torch.randn(shape).to(dtype))
        if body.get("type") == "Parameter":
            x = torch.nn.Parameter(x, requires_grad=bool(body.get("requires_grad")))
        elif body.get("requires_grad"):
            x.requires_grad_(True)
        ranges, bounds = body.get("ranges", {}), body.get("bounds", {})
        for dim in marks.get("dynamic", []):
            low, high = ranges.get(str(dim), [None, None])
            mark_dynamic(x, int(dim), min=low, max=high)
        for dim in marks.get("weak_dynamic", []):
            maybe_mark_dynamic(x, int(dim))
        for dim in marks.get("unbacked", []):
            low, high = bounds.get(str(dim), [None, None])
            mark_unbacked(x, int(dim), min=low, max=high)
        for dim in marks.get("strict_unbacked", []):
            mark_unbacked(x, int(dim), strict=True)
        for dim in marks.get("static", []):
            mark_static(x, int(dim))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise remote.Protocol(MALFORMED_TENSOR) from None
    return x


def serve(warm, d, lengths=LENGTHS):
    inputs = [torch.randn(B, t, d) for t in lengths]
    cases = [(T.same(f"x [{B}, {t}, {d}] float32 (T = {t})"), (x,)) for t, x in zip(lengths, inputs)]
    return inputs, serve_without_recompile(warm.compiled, cases, what=T("the decode step", zh="解码步"))


def test_warmup_budget(entry, public):
    """The warm-up compiles the decode step at most 3 times
    zh: 预热最多把解码步编译 3 次
    """
    warm = warmed(entry, public)
    assert_compiles(warm.counter, at_most=3, what=T.same("`warmup(step_fn)`"), guard_failures=warm.reasons)


def test_serves_every_length(entry, public):
    """After the warm-up, lengths 1..512 are served without compiling again
    zh: 预热之后，长度 1..512 都不再编译
    """
    serve(warmed(entry, public), 32)


def test_same_results(entry, public):
    """Served results equal the eager decode step
    zh: 上线后的结果与 eager 的解码步相同
    """
    inputs, outputs = serve(warmed(entry, public), 32, LENGTHS[:6])
    for x, out in zip(inputs, outputs):
        assert_same(out, public.decode_step(x), case=T.same(f"x {list(x.shape)} float32"))


def test_other_width(entry, public):
    """warmup(step_fn, d=64) prepares a width-64 decode step (backend aot_eager)
    zh: warmup(step_fn, d=64) 为宽度 64 的解码步预热（backend aot_eager）
    """
    warm = warmed(entry, public, backend="aot_eager", d=64)
    assert_compiles(warm.counter, at_most=3, what=T.same("`warmup(step_fn, d=64)`"), guard_failures=warm.reasons)
    serve(warm, 64, [1, 2, 3, 77, 512])
