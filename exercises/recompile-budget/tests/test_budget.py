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
from judge.checks import Recompile, WrongAnswer, assert_compiles, assert_same
from judge.checks.budget import describe_request, recorded_arg_shapes, replay_here, serve_schedule
from judge.checks.trust import rests_on_learner_process
from judge.reports.i18n import T
from judge.reports.report import RecompileDiagnostic

COUNTS = T("how many graphs Dynamo compiled in your process after the schedule: the recompile_limit your code gave "
           "torch.compile exists only there (the schedule itself is confirmed by this side's own compile)",
           zh="调度之后你的进程里 Dynamo 又编译了几张图：你的代码传给 torch.compile 的 recompile_limit 只存在于那个进程"
              "（调度本身由本方自己的编译确认）")

BUDGET = 2
# (batch, length) in the order served: the batch changes, the length changes, and length 1 comes back.
SCHEDULE = [(2, 5), (2, 9), (4, 9), (2, 1), (3, 33), (4, 2), (2, 1), (4, 64), (3, 17)]
# Served after the schedule: requests no earlier one looked like (another dtype, and length 1 in it).
NOVEL = [torch.randn(2, 7, 16, dtype=torch.float64), torch.randn(2, 7, 16, dtype=torch.bfloat16),
         torch.randn(3, 1, 16, dtype=torch.float64)]


DRAWN = 3  # requests drawn per grading, served after SCHEDULE


def schedule() -> list[tuple[int, int]]:
    """SCHEDULE, then DRAWN requests drawn per grading (judge/shared/draw.py): batch 2..8 and length 2..128, none of the
    statement's shapes, so that a file written for the nine it lists is served others."""
    gen = remote.grading().drawn("call schedule")
    drawn: list[tuple[int, int]] = []
    while len(drawn) < DRAWN:
        shape = (int(torch.randint(2, 9, (), generator=gen)), int(torch.randint(2, 129, (), generator=gen)))
        if shape not in SCHEDULE and shape not in drawn:
            drawn.append(shape)
    return SCHEDULE + drawn


def requests():
    return [torch.randn(b, t, 16) for b, t in schedule()]


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
    return ", ".join(f"[{b}, {t}, 16]" for b, t in schedule())


def test_within_budget(entry, public):
    """The 9 requests of the statement, then 3 drawn per grading, are served by compiled graphs, with at most 2 compiles
    zh: 题目的 9 个请求和每次评测抽取的 3 个请求都由编译出的图服务，最多编译 2 次
    """
    served = serve_schedule(compiled_scorer(entry), requests())
    what = T("`scores`, served for x of shapes {shapes},", zh="服务形状为 {shapes} 的 x 时，`scores`",
             shapes=schedule_text())
    assert_compiles(served.compiled, at_most=BUDGET, guard_failures=served.compiled.recompile_reasons, what=what)
    # Within the budget on the runner's word; confirmed here: the sizes the first graph took as symbolic, marked the
    # same way on every request of this side's own compile of scores (recompile_limit=2), serve the schedule.
    shapes = recorded_arg_shapes(served.compiled.graphs[0], 1)
    if not all(shapes):
        raise WrongAnswer(T("the graph does not take the request's own `x` as its input: `serve` must hand it to the "
                            "compiled function as it is (marking it is fine; a copy is another tensor)",
                            zh="图的输入不是请求自己的 `x`：`serve` 必须把它原样交给编译过的函数"
                               "（可以做标记；复制出来的是另一个张量）"))
    replayed = replay_here(public.scores, requests(), shapes, recompile_limit=BUDGET)
    here = T("`scores` compiled here with the sizes your first graph recorded (x [{shape}]) marked on every request "
             "and recompile_limit={limit},",
             zh="本方按你的第一张图记录的大小（x [{shape}]）在每个请求上做同样的标记、以 recompile_limit={limit} 编译的 "
                "`scores`", shape=", ".join(map(str, shapes[0])), limit=BUDGET)
    if replayed.eager:
        raise Recompile(T("{what} ran request {i} eagerly: the limit was reached. The last guard that failed: "
                          "`{guard}`",
                          zh="{what}以 eager 方式运行了第 {i} 个请求：达到了上限。最后一个失败的 guard：`{guard}`",
                          what=here, i=replayed.eager[0], guard=(replayed.reasons or ["?"])[-1]),
                        [RecompileDiagnostic(compiles=replayed.counter.frame_count, limit=BUDGET,
                                             guard_failures=replayed.reasons[:10])])
    assert_compiles(replayed.counter, at_most=BUDGET, guard_failures=replayed.reasons, what=here)


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
