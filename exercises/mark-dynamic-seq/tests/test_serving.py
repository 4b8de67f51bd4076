"""Hidden tests for mark-dynamic-seq: one compile over many lengths, kept with the learner's own options.

compile_for_serving runs in the runner on the grader's attn_scores (public.py) and an example tensor kept
there, so that the learner's mark_dynamic reaches the very tensor served first. Each request is served there
under the grader's recording backend; the captured graph comes back and runs here on this side's own inputs:
one graph that takes every length is what "compiles once" means, and the numbers are this side's.
"""

import torch

from judge import remote
from judge.checks import GraphBreak, WrongAnswer, assert_compiles, assert_same, expected_first
from judge.checks.shapes import input_shapes
from judge.checks.trust import rests_on_learner_process
from judge.reports.i18n import T

EXAMPLE_T = 12
SERVED_T = [2, 5, 17, 31, 64, 100, 257]  # served after the example; 0 and 1 are always specialised
# Then one length drawn per grading past the listed ones: a bound read from the statement (max=257) recompiles there.
LONGER_T = (258, 2048)


def served_lengths() -> list[int]:
    return SERVED_T + [int(torch.randint(LONGER_T[0], LONGER_T[1] + 1, ()))]


def serve_all(entry, fn_name="attn_scores", expected_fn=None):
    """Build the server from the example for the public function `fn_name`, serve the example then every length;
    the grader's backend records.

    Returns the compiled session (graphs, recompile reasons) and (x, output computed here, what `expected_fn`
    gave for x, computed first) per length."""
    example = torch.randn(8, EXAMPLE_T, 16)
    kept_example = remote.put(remote.example_like(example))  # the runner's first request, kept as one object
    serve = entry(remote.public(fn_name), kept_example)
    if not isinstance(serve, remote.Ref):
        raise WrongAnswer(T("`compile_for_serving` returned `{type}`; it must return the callable that serves "
                            "every request (a `torch.compile`'d function)",
                            zh="`compile_for_serving` 返回的是 `{type}`；它应当返回服务每个请求的可调用对象"
                               "（一个 `torch.compile` 过的函数）", type=type(serve).__name__))
    # the runner records serve's graphs with the learner's own options (dynamic=..., fullgraph=...)
    compiled = serve.compile(learner_compiled=True,
                             what=T("the function `compile_for_serving` returned",
                                    zh="`compile_for_serving` 返回的函数"))
    served = []
    lengths = served_lengths()
    for x, sent in [(example, (kept_example,))] + [(torch.randn(8, t, 16), None) for t in lengths]:
        try:
            expected, out = expected_first(expected_fn or (lambda x: None),
                                           lambda x: compiled(x, examples=sent), x)  # noqa: B023 - run now
            served.append((x, out, expected))
        except GraphBreak:
            # a graph per length runs out of Dynamo's recompile limit, then serves eagerly: the recompiles are why
            assert_compiled_once(compiled, [EXAMPLE_T, *lengths])
            if compiled.frame_count == 0:
                raise WrongAnswer(T("serving never compiled `attn_scores`: `compile_for_serving` must return a "
                                    "`torch.compile`'d function",
                                    zh="服务过程中从没编译过 `attn_scores`：`compile_for_serving` 应当返回一个 "
                                       "`torch.compile` 过的函数")) from None
            raise
    return compiled, served


def assert_compiled_once(compiled, lengths: list[int]) -> None:
    """Fails (RECOMPILE, with the guards that failed) unless serving `lengths` compiled once."""
    assert_compiles(compiled, at_most=1, guard_failures=compiled.recompile_reasons,
                    what=T("`attn_scores`, served at sequence lengths {lengths},",
                           zh="在序列长度 {lengths} 上服务时，`attn_scores`", lengths=", ".join(map(str, lengths))))


def test_compiles_once(entry):
    """Serving lengths 12, 2, 5, ..., 257 and a longer one drawn per grading compiles attn_scores exactly once
    zh: 服务长度 12、2、5、……、257 和每次评测抽取的一个更长的长度时 attn_scores 恰好只编译一次
    """
    compiled, served = serve_all(entry)
    # More than one graph fails on the runner's word; one graph passes only because that graph, run here,
    # took every length (a graph specialised to one length refuses the others).
    assert_compiled_once(compiled, [x.shape[1] for x, _, _ in served])


@rests_on_learner_process(T(
    "which dims of the graph's input Dynamo recorded as symbolic in your process: the recorded shape of the one "
    "graph (that graph must still serve every length here, and a dim recorded as a constant refuses other sizes)",
    zh="你的进程里 Dynamo 把图输入的哪几维记为符号：这是那一张图的记录形状"
       "（这张图仍须在本方服务每个长度，记为常量的维度不接受别的大小）"))
def test_batch_static_sequence_dynamic(entry):
    """The one graph takes x of shape [8, s, 16]: only the sequence length is symbolic
    zh: 这张图的输入 x 形状为 [8, s, 16]：只有序列长度是符号
    """
    compiled, _ = serve_all(entry)
    shapes = input_shapes(compiled.graphs[0].gm) if compiled.graphs else []
    if len(shapes) != 1:
        raise WrongAnswer(T("expected a graph with one tensor input `x`, got inputs `{shapes}`",
                            zh="图应当只有一个张量输入 `x`，实际的输入是 `{shapes}`", shapes=shapes))
    b, t, d = shapes[0]
    shown = "[" + ", ".join(map(str, shapes[0])) + "]"
    if not isinstance(b, int):
        raise WrongAnswer(T("the graph's input is `{shown}`: the batch dimension is symbolic too. Only the "
                            "sequence length varies; mark just dim 1 (`dynamic=True` makes every dimension dynamic).",
                            zh="图的输入是 `{shown}`：batch 维也成了符号。只有序列长度会变，只标第 1 维"
                               "（`dynamic=True` 会让每一维都变成动态）。", shown=shown))
    if isinstance(t, int):
        raise WrongAnswer(T("the graph's input is `{shown}`: the sequence length was compiled as the constant {t}.",
                            zh="图的输入是 `{shown}`：序列长度被编译成了常量 {t}。", shown=shown, t=t))
    if (b, d) != (8, 16):
        raise WrongAnswer(T("the graph's input is `{shown}`; expected `[8, s, 16]`",
                            zh="图的输入是 `{shown}`；应当是 `[8, s, 16]`", shown=shown))


def test_same_numbers(entry, starter):
    """Every served length gives the same scores as attn_scores run eagerly
    zh: 每个服务的长度都给出与 eager 运行 attn_scores 相同的分数
    """
    _, served = serve_all(entry, expected_fn=starter.attn_scores)
    for x, out, expected in served:
        assert_same(out, expected, case=T.same(f"x [8, {x.shape[1]}, 16] float32"))


def test_serves_the_function_it_is_given(entry, public):
    """compile_for_serving serves the function it is given: another fn gives that fn's scores
    zh: compile_for_serving 服务的是传给它的函数：换一个 fn，得到的就是那个 fn 的分数
    """
    _, served = serve_all(entry, "other_scores", public.other_scores)
    for x, out, expected in served[:3]:
        assert_same(out, expected, case=T("x [8, {t}, 16] float32, served for another `fn` than `attn_scores` (the "
                                          "result must be that `fn`'s: serve what you are given)",
                                          zh="x [8, {t}, 16] float32，为另一个 `fn`（不是 `attn_scores`）服务"
                                             "（结果必须是那个 `fn` 的：服务传进来的函数）", t=x.shape[1]))
