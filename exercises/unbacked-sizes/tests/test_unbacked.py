"""Hidden tests for unbacked-sizes: requests of n tokens, n = 0 and 1 among them, served by one compile.

compile_pool runs in the runner on the learner's own pool (the numbers are compared with the grader's, public.py;
a failing guard names the learner's line), and once on another fn of the grader's; each request is served there under the grader's
recording backend (`torch.compiler.set_stance(force_backend=...)`, the learner's marks and options kept), and the
graph that served it runs here on this side's own tensors (judge/checks/budget.py): a graph specialised to n = 0
or n = 1 refuses the other sizes here, so one graph passes only by taking every n. The count is the runner's; it
is confirmed here, by this side's own compile of pool with each size marked as that one graph recorded it
(unbacked, backed or static) on every request.
"""

import torch

from judge import remote
from judge.checks import WrongAnswer, assert_compiles, assert_same
from judge.checks.budget import recorded_arg_shapes, replay_here, serve_schedule
from judge.reports.i18n import T

SIZES = [0, 1, 7, 2, 1, 0, 33, 5]  # the statement's schedule, in the order served: 0 and 1 first, and again later
DRAWN = 4  # sizes drawn per grading, served after SIZES


def sizes() -> list[int]:
    """The statement's sizes, then DRAWN more drawn per grading (judge/shared/draw.py), none of the statement's and one
    past its largest, so that a file written for 0, 1, 2, 5, 7 and 33 (a bound of 33, say) is served others."""
    gen = remote.grading().drawn("call schedule")
    others = [n for n in range(2, 97) if n not in SIZES]
    larger = [n for n in others if n > max(SIZES)]
    drawn = [larger[int(torch.randint(len(larger), (), generator=gen))]]
    rest = [n for n in others if n != drawn[0]]
    drawn += [rest[int(i)] for i in torch.randperm(len(rest), generator=gen)[:DRAWN - 1]]
    return SIZES + [drawn[int(i)] for i in torch.randperm(DRAWN, generator=gen)]


def requests():
    return [(torch.randn(n, 16), torch.randn(n)) for n in sizes()]


def compiled_pool(entry, fn=None):
    """compile_pool(fn) in the runner, its result compiled with the learner's own options and counted. `fn` is the
    learner's own `pool` unless given (a report's failing guard then names the learner's line that added it)."""
    serve = entry(fn or remote.learner("pool"))
    if not isinstance(serve, remote.Ref):
        raise WrongAnswer(T("`compile_pool` returned `{type}`; it must return the callable that serves every "
                            "request (one that calls a `torch.compile`'d function)",
                            zh="`compile_pool` 返回的是 `{type}`；它应当返回服务每个请求的可调用对象"
                               "（调用一个 `torch.compile` 过的函数）", type=type(serve).__name__))
    return serve.compile(learner_compiled=True, what=T("the function `compile_pool` returned",
                                                       zh="`compile_pool` 返回的函数"))


def case(x, w) -> T:
    return T.same(f"x [{x.shape[0]}, 16] float32, w [{w.shape[0]}] float32 (n = {x.shape[0]})")


def test_compiles_once(entry, public):
    """Requests of n = 0, 1, 7, 2, 1, 0, 33, 5 tokens, then 4 sizes drawn per grading, are served by one compile
    zh: n = 0、1、7、2、1、0、33、5 个 token 的请求，再加每次评测抽取的 4 个大小，只编译一次
    """
    compiled = compiled_pool(entry)
    serve_schedule(compiled, requests())
    what = T("`pool`, served for n = {sizes} tokens,", zh="服务 n = {sizes} 个 token 时，`pool`",
             sizes=", ".join(map(str, sizes())))
    assert_compiles(compiled, at_most=1, guard_failures=compiled.recompile_reasons, what=what)
    # One graph on the runner's word; confirmed here: the sizes that graph took as unbacked (u0) or backed (s0),
    # marked the same way on every request of this side's own compile of pool, must compile once here too.
    shapes = recorded_arg_shapes(compiled.graphs[0], 2)
    if not all(shapes):
        raise WrongAnswer(T("the graph does not take the request's own `x` and `w` as inputs: `serve` must hand them to "
                            "the compiled function as they are (marking them is fine; a copy or a padded tensor is "
                            "another tensor)",
                            zh="图的输入不是请求自己的 `x` 和 `w`：`serve` 必须把它们原样交给编译过的函数"
                               "（可以做标记；复制或填充出来的是另一个张量）"))
    replayed = replay_here(public.pool, requests(), shapes)
    shown = ", ".join(f"{name} [{', '.join(map(str, shape))}]" for name, shape in zip(("x", "w"), shapes))
    assert_compiles(replayed.counter, at_most=1, guard_failures=replayed.reasons,
                    what=T("`pool` compiled here with the sizes your graph recorded ({shapes}), marked the same way "
                           "on every request,",
                           zh="本方按你的图记录的大小（{shapes}）在每个请求上做同样的标记后编译的 `pool`", shapes=shown))


def test_same_numbers(entry, public):
    """Every request gives the same result as pool run eagerly, n = 0 included
    zh: 每个请求的结果都与 eager 运行 pool 相同，包括 n = 0
    """
    served = serve_schedule(compiled_pool(entry), requests(), expected_fn=public.pool)
    for (x, w), out, expected in served.results:
        assert_same(out, expected, case=case(x, w))


def test_serves_the_function_it_is_given(entry, public):
    """compile_pool serves the function it is given: another fn gives that fn's result
    zh: compile_pool 服务的是传给它的函数：换一个 fn，得到的就是那个 fn 的结果
    """
    served = serve_schedule(compiled_pool(entry, remote.public("other_pool")), requests()[:4], expected_fn=public.other_pool)
    for (x, w), out, expected in served.results:
        assert_same(out, expected, case=T("{case}, served for another `fn` than `pool` (the result must be that "
                                          "`fn`'s: serve what you are given)",
                                          zh="{case}，为另一个 `fn`（不是 `pool`）服务（结果必须是那个 `fn` 的："
                                             "服务传进来的函数）", case=case(x, w)))
