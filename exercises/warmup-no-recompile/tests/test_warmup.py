"""Hidden tests for warmup-no-recompile: the learner warms the grader's decode step, then the grader serves.

The learner's warmup runs in the runner on the grader's step (public.py), which notes what each call looked
like: shapes, dtypes, strides, dynamic marks and grad mode. This side repeats those calls on its own compiled
decode step and counts the compiles itself, then serves every length from that step: the runner only says
what the warm-up sent, and a warm-up described wrongly can only fail here.
"""

import contextlib

import torch
from torch._dynamo.decorators import mark_dynamic, mark_static, mark_unbacked, maybe_mark_dynamic

from judge import remote
from judge.checks import CheckFailure, CompileCounter, WrongAnswer, assert_compiles, assert_same, recompile_log
from judge.checks.serving import serve_without_recompile
from judge.report import ErrorDiagnostic, Verdict

B = 2
# Lengths served after the warm-up: both ends, the sizes 1 and 2, and lengths the warm-up is unlikely to use.
LENGTHS = [37, 1, 512, 2, 300, 3, 129, 64, 511, 17, 255, 256, 5, 400, 128, 99, 4, 480, 200, 31]
MAX_CALLS = 64
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
    entry(step, what="warmup(step_fn)", **kwargs)
    calls = remote.call(remote.public("calls_of"), step)
    if not isinstance(calls, list) or len(calls) > MAX_CALLS:
        raise WrongAnswer(f"warmup called step_fn more than {MAX_CALLS} times; a warm-up needs a few calls")
    result = Warmed(public, backend)
    with recompile_log() as reasons:
        for i, call in enumerate(calls, start=1):
            args, kwargs_, mode, shown = rebuild_call(call, i)
            try:
                with mode:
                    result.compiled(*args, **kwargs_)
            except Exception as exc:  # noqa: BLE001 - the learner's warm-up call fails on the grader's step
                raise CheckFailure(
                    f"warmup's call {i}, step_fn({shown}), fails on the grader's decode step: "
                    f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ''}",
                    [ErrorDiagnostic(exc_type=type(exc).__name__, message=str(exc)[:2000])],
                    verdict=Verdict.RUNTIME_ERROR) from None
    result.reasons = list(reasons)
    return result


def rebuild_call(call, i):
    """(args, kwargs, global-state context, text) of one warm-up call as the runner described it."""
    if not isinstance(call, dict) or not isinstance(call.get("args"), list) or not isinstance(call.get("kwargs"), dict):
        raise remote.Protocol("a warm-up call is described malformed")
    args = [rebuild_value(v, i) for v in call["args"]]
    kwargs = {str(k): rebuild_value(v, i) for k, v in call["kwargs"].items()}
    shown = ", ".join([show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()])
    mode = contextlib.ExitStack()
    if call.get("inference") is True:
        mode.enter_context(torch.inference_mode())
        shown += ", under torch.inference_mode()"
    elif call.get("grad") is False:
        mode.enter_context(torch.no_grad())
        shown += ", under torch.no_grad()"
    if call.get("autocast") is True:
        mode.enter_context(torch.autocast("cpu"))
        shown += ", under torch.autocast('cpu')"
    return args, kwargs, mode, shown


def show(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"x {list(value.shape)} {str(value.dtype).removeprefix('torch.')}"
    return repr(value)[:40]


def rebuild_value(desc, i):
    """A fresh value that looks like the described argument (same shape, strides, dtype, marks)."""
    if not isinstance(desc, dict) or len(desc) != 1:
        raise remote.Protocol("a warm-up argument is described malformed")
    (kind, body), = desc.items()
    if kind == "value" and (body is None or isinstance(body, (bool, int, float, str))):
        return body
    if kind == "other":
        raise WrongAnswer(f"warmup's call {i} passes step_fn a {str(body)[:40]}; step_fn takes one tensor x")
    if kind != "tensor" or not isinstance(body, dict):
        raise remote.Protocol("a warm-up argument is described malformed")
    try:
        shape, stride = [int(s) for s in body["shape"]], [int(s) for s in body["stride"]]
        dtype, marks = DTYPES.get(body["dtype"]), body["marks"]
        if body.get("type") not in ("Tensor", "Parameter") or body.get("device") != "cpu" or dtype is None:
            raise WrongAnswer(f"warmup's call {i} passes step_fn a {body.get('type')} of dtype {body.get('dtype')} "
                              f"on {body.get('device')}; serving sends CPU float tensors")
        if len(shape) != len(stride) or len(shape) > 8 or any(s < 0 for s in shape + stride) \
                or sum((n - 1) * s for n, s in zip(shape, stride) if n) > 1 << 24:
            raise remote.Protocol("a warm-up tensor is described with impossible sizes")
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
        raise remote.Protocol("a warm-up tensor is described malformed") from None
    return x


def serve(warm, d, lengths=LENGTHS):
    inputs = [torch.randn(B, t, d) for t in lengths]
    cases = [(f"x [{B}, {t}, {d}] float32 (T = {t})", (x,)) for t, x in zip(lengths, inputs)]
    return inputs, serve_without_recompile(warm.compiled, cases, what="the decode step")


def test_warmup_budget(entry, public):
    """The warm-up compiles the decode step at most 3 times"""
    warm = warmed(entry, public)
    assert_compiles(warm.counter, at_most=3, what="warmup(step_fn)", guard_failures=warm.reasons)


def test_serves_every_length(entry, public):
    """After the warm-up, lengths 1..512 are served without compiling again"""
    serve(warmed(entry, public), 32)


def test_same_results(entry, public):
    """Served results equal the eager decode step"""
    inputs, outputs = serve(warmed(entry, public), 32, LENGTHS[:6])
    for x, out in zip(inputs, outputs):
        assert_same(out, public.decode_step(x), case=f"x {list(x.shape)} float32")


def test_other_width(entry, public):
    """warmup(step_fn, d=64) prepares a width-64 decode step (backend aot_eager)"""
    warm = warmed(entry, public, backend="aot_eager", d=64)
    assert_compiles(warm.counter, at_most=3, what="warmup(step_fn, d=64)", guard_failures=warm.reasons)
    serve(warm, 64, [1, 2, 3, 77, 512])
