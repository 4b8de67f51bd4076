"""Hidden tests for mark-dynamic-seq: one compile over many lengths, kept with the learner's own options."""

import torch

from judge.checks import CompileCounter, WrongAnswer, assert_compiles, assert_same, recompile_log
from judge.checks.shapes import input_shapes

EXAMPLE_T = 12
SERVED_T = [2, 5, 17, 31, 64, 100, 257]  # served after the example; 0 and 1 are always specialised


def serve_all(entry, starter):
    """Build the server from the example, serve the example then every length; the grader's backend counts."""
    counter = CompileCounter()
    example = torch.randn(8, EXAMPLE_T, 16)
    served = []
    # force_backend swaps in the counter but keeps the learner's own options (dynamic=..., fullgraph=...)
    with recompile_log() as reasons, torch.compiler.set_stance("default", force_backend=counter):
        serve = entry(starter.attn_scores, example)
        served.append((example, serve(example)))
        for t in SERVED_T:
            x = torch.randn(8, t, 16)
            served.append((x, serve(x)))
    return counter, reasons, served


def lengths_text():
    return ", ".join(str(t) for t in [EXAMPLE_T, *SERVED_T])


def test_compiles_once(entry, starter):
    """Serving lengths 12, 2, 5, ..., 257 compiles attn_scores exactly once"""
    counter, reasons, _ = serve_all(entry, starter)
    if counter.frame_count == 0:
        raise WrongAnswer("serving never compiled attn_scores: compile_for_serving must return a "
                          "torch.compile'd function")
    assert_compiles(counter, at_most=1, guard_failures=reasons,
                    what=f"attn_scores, served at sequence lengths {lengths_text()},")


def test_batch_static_sequence_dynamic(entry, starter):
    """The one graph takes x of shape [8, s, 16]: only the sequence length is symbolic"""
    counter, _, _ = serve_all(entry, starter)
    shapes = input_shapes(counter.graphs[0]) if counter.graphs else []
    if len(shapes) != 1:
        raise WrongAnswer(f"expected a graph with one tensor input x, got inputs {shapes}")
    b, t, d = shapes[0]
    shown = "[" + ", ".join(map(str, shapes[0])) + "]"
    if not isinstance(b, int):
        raise WrongAnswer(f"the graph's input is {shown}: the batch dimension is symbolic too. Only the sequence "
                          "length varies; mark just dim 1 (dynamic=True makes every dimension dynamic).")
    if isinstance(t, int):
        raise WrongAnswer(f"the graph's input is {shown}: the sequence length was compiled as the constant {t}.")
    if (b, d) != (8, 16):
        raise WrongAnswer(f"the graph's input is {shown}; expected [8, s, 16]")


def test_same_numbers(entry, starter):
    """Every served length gives the same scores as attn_scores run eagerly"""
    _, _, served = serve_all(entry, starter)
    for x, out in served:
        assert_same(out, starter.attn_scores(x), case=f"x [8, {x.shape[1]}, 16] float32")
