"""Hidden tests for recompile-budget: a schedule of requests served within two compiles, and the limit kept.

compile_scorer runs in the runner on the learner's own scores (the numbers are compared with the grader's,
public.py; a failing guard names the learner's line) and the grader's backend, and once on another fn of the
grader's; each request is served there, the
learner's torch.compile recording into the grader's backend with the learner's own options (`recompile_limit` among
them: `force_backend`, which other exercises use, bypasses it), and the graph that served it runs here on this
side's own input
(judge/checks/budget.py). A request that runs no graph and compiles none ran eagerly: the recompile limit was hit.
"""

import torch

from judge import remote
from judge.checks import WrongAnswer, assert_compiles, assert_same
from judge.checks.budget import describe_request, serve_schedule
from judge.checks.trust import rests_on_learner_process
from judge.i18n import T

COUNTS = T("how many graphs Dynamo compiled in your process and which one each request ran (each served request "
           "must still run its graph here, on this side's input, so a graph specialised to other shapes refuses it)",
           zh="你的进程里 Dynamo 编译了几张图、每个请求运行的是哪一张（每个请求仍须在本方、用本方的输入运行它那张图，"
              "特化到别的形状的图不会接受它）")

BUDGET = 2
# (batch, length) in the order served: the batch changes, the length changes, and length 1 comes back.
SCHEDULE = [(2, 5), (2, 9), (4, 9), (2, 1), (3, 33), (4, 2), (2, 1), (4, 64), (3, 17)]
# Served after the schedule: requests no earlier one looked like (another dtype, and length 1 in it).
NOVEL = [torch.randn(2, 7, 16, dtype=torch.float64), torch.randn(2, 7, 16, dtype=torch.bfloat16),
         torch.randn(3, 1, 16, dtype=torch.float64)]


def requests():
    return [torch.randn(b, t, 16) for b, t in SCHEDULE]


def compiled_scorer(entry, fn=None):
    """compile_scorer(fn, backend) in the runner, its result compiled with the learner's own options and counted.
    `fn` is the learner's own `scores` unless given (a report's failing guard then names the learner's line)."""
    serve = entry(fn or remote.learner("scores"), remote.public("backend"))
    if not isinstance(serve, remote.Ref):
        raise WrongAnswer(T("`compile_scorer` returned `{type}`; it must return the callable that serves every "
                            "request (a `torch.compile`'d function)",
                            zh="`compile_scorer` 返回的是 `{type}`；它应当返回服务每个请求的可调用对象"
                               "（一个 `torch.compile` 过的函数）", type=type(serve).__name__))
    return serve.compile(learner_backend=True, what=T("the function `compile_scorer` returned",
                                                       zh="`compile_scorer` 返回的函数"))


def schedule_text():
    return ", ".join(f"[{b}, {t}, 16]" for b, t in SCHEDULE)


@rests_on_learner_process(COUNTS)
def test_within_budget(entry):
    """The schedule of 9 requests is served by compiled graphs, with at most 2 compiles
    zh: 9 个请求都由编译出的图服务，最多编译 2 次
    """
    served = serve_schedule(compiled_scorer(entry), requests())
    assert_compiles(served.compiled, at_most=BUDGET, guard_failures=served.compiled.recompile_reasons,
                    what=T("`scores`, served for x of shapes {shapes},", zh="服务形状为 {shapes} 的 x 时，`scores`",
                           shapes=schedule_text()))


@rests_on_learner_process(COUNTS)
def test_limit_holds(entry, public):
    """Requests unlike any before (float64, bfloat16) never take the compiles past 2: the limit is kept
    zh: 与之前都不同的请求（float64、bfloat16）也不会让编译超过 2 次：上限一直有效
    """
    compiled = compiled_scorer(entry)
    serve_schedule(compiled, requests())
    served = serve_schedule(compiled, NOVEL, allow_eager=True)
    shown = ", ".join(describe_request(x) for x in NOVEL)
    assert_compiles(compiled, at_most=BUDGET, guard_failures=compiled.recompile_reasons,
                    what=T("`scores`, after the schedule and then {novel},",
                           zh="服务完整个调度、再服务 {novel} 之后，`scores`", novel=shown))
    for x, out, _ in served.results:
        if out is not None:  # a request it compiled for (within the budget) runs its graph here
            assert_same(out, public.scores(x), case=T.same(describe_request(x)))


def test_same_numbers(entry, public):
    """Every request gives the same scores as the function run eagerly
    zh: 每个请求都给出与 eager 运行时相同的分数
    """
    served = serve_schedule(compiled_scorer(entry), requests(), expected_fn=public.scores)
    for x, out, expected in served.results:
        assert_same(out, expected, case=T.same(describe_request(x)))


def test_serves_the_function_it_is_given(entry, public):
    """compile_scorer serves the function it is given: another fn gives that fn's scores
    zh: compile_scorer 服务的是传给它的函数：换一个 fn，得到的就是那个 fn 的分数
    """
    served = serve_schedule(compiled_scorer(entry, remote.public("other_scores")), requests()[:4], expected_fn=public.other_scores)
    for x, out, expected in served.results:
        assert_same(out, expected, case=T("{request}, served for another `fn` than `scores` (the result must be "
                                          "that `fn`'s: serve what you are given)",
                                          zh="{request}，为另一个 `fn`（不是 `scores`）服务"
                                             "（结果必须是那个 `fn` 的：服务传进来的函数）",
                                          request=describe_request(x)))
