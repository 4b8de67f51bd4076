"""Hidden tests for warmup-no-recompile: the grader's decode step, warmed by the learner, then served."""

import torch

from judge.checks import CompileCounter, assert_compiles, assert_same
from judge.checks.serving import serve_without_recompile

B = 2
# Lengths served after the warm-up: both ends, the sizes 1 and 2, and lengths the warm-up is unlikely to use.
LENGTHS = [37, 1, 512, 2, 300, 3, 129, 64, 511, 17, 255, 256, 5, 400, 128, 99, 4, 480, 200, 31]


def decode_step(x):
    """The grader's decode step: x [B, T, d] -> [B, d]."""
    scores = x @ x.transpose(1, 2) / x.shape[-1] ** 0.5
    return (scores.softmax(-1) @ x).mean(1)


def warmed(entry, backend="eager", **kwargs):
    counter = CompileCounter(backend)
    compiled = torch.compile(decode_step, backend=counter)
    entry(compiled, **kwargs)
    return compiled, counter


def serve(compiled, d, lengths=LENGTHS):
    inputs = [torch.randn(B, t, d) for t in lengths]
    cases = [(f"x [{B}, {t}, {d}] float32 (T = {t})", (x,)) for t, x in zip(lengths, inputs)]
    return inputs, serve_without_recompile(compiled, cases, what="the decode step")


def test_warmup_budget(entry):
    """The warm-up compiles the decode step at most 3 times"""
    _, counter = warmed(entry)
    assert_compiles(counter, at_most=3, what="warmup(step_fn)")


def test_serves_every_length(entry):
    """After the warm-up, lengths 1..512 are served without compiling again"""
    compiled, _ = warmed(entry)
    serve(compiled, 32)


def test_same_results(entry):
    """Served results equal the eager decode step"""
    compiled, _ = warmed(entry)
    inputs, outputs = serve(compiled, 32, LENGTHS[:6])
    for x, out in zip(inputs, outputs):
        assert_same(out, decode_step(x), case=f"x {list(x.shape)} float32")


def test_other_width(entry):
    """warmup(step_fn, d=64) prepares a width-64 decode step (backend aot_eager)"""
    compiled, counter = warmed(entry, backend="aot_eager", d=64)
    assert_compiles(counter, at_most=3, what="warmup(step_fn, d=64)")
    serve(compiled, 64, [1, 2, 3, 77, 512])
