"""Hidden tests for unbacked-sizes: requests of n tokens, n = 0 and 1 among them, served by one compile.

compile_pool runs in the runner on the learner's own pool (the numbers are compared with the grader's, public.py;
a failing guard names the learner's line), and once on another fn of the grader's; each request is served there under the grader's
recording backend (`torch.compiler.set_stance(force_backend=...)`, the learner's marks and options kept), and the
graph that served it runs here on this side's own tensors (judge/checks/budget.py): a graph specialised to n = 0
or n = 1 refuses the other sizes here, so one graph passes only by taking every n.
"""

import torch

from judge import remote
from judge.checks import WrongAnswer, assert_compiles, assert_same
from judge.checks.budget import serve_schedule
from judge.checks.trust import rests_on_learner_process
from judge.i18n import T

SIZES = [0, 1, 7, 2, 1, 0, 33, 5]  # in the order served: 0 and 1 first, and again later


def requests():
    return [(torch.randn(n, 16), torch.randn(n)) for n in SIZES]


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


@rests_on_learner_process(T(
    "how many graphs Dynamo compiled in your process (the one graph must still serve every n here, on this side's "
    "tensors, and a graph specialised to n = 0 or 1 refuses the other sizes)",
    zh="你的进程里 Dynamo 编译了几张图（那一张图仍须在本方、用本方的张量服务每个 n，"
       "特化到 n = 0 或 1 的图不接受别的大小）"))
def test_compiles_once(entry):
    """Requests of n = 0, 1, 7, 2, 1, 0, 33, 5 tokens are served by one compile
    zh: n = 0、1、7、2、1、0、33、5 个 token 的请求只编译一次
    """
    compiled = compiled_pool(entry)
    serve_schedule(compiled, requests())
    assert_compiles(compiled, at_most=1, guard_failures=compiled.recompile_reasons,
                    what=T("`pool`, served for n = {sizes} tokens,", zh="服务 n = {sizes} 个 token 时，`pool`",
                           sizes=", ".join(map(str, SIZES))))


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
