"""Hidden tests for compile-cache-artifacts: a fresh process with an empty cache loads the learner's artifacts.

Self-checked in part (exercise.toml: trust_reason). The bytes build_artifacts returns are pickles that
torch.compiler.load_cache_artifacts unpickles, so they are loaded only beside the learner's code: the runner
runs public.build_and_serve, whose two processes (a fresh one that compiled nothing, and a fork of it; each
with an empty TORCHINDUCTOR_CACHE_DIR and the FX-graph and AOTAutograd caches on) are
1. "build" (the fork): imports the learner's file and calls build_artifacts(fn, example) on the grader's function;
2. "serve": load_cache_artifacts(data), compiles fn, calls it on this grader's input, reports Dynamo's counters.
The bytes themselves come back too, and are read here as data (judge/checks/cache_artifacts.py: the kind and key
of each entry, no content unpickled): the second check passes only if they hold the FX-graph entry that a fresh
process of the verifier's own (public.own_entries: the grader's fn alone, no learner code) makes for fn, so that
which entry is looked up is decided here. That the entry's content loads, and what the function served from it
returns, only the runner's serve process can say (each check that rests on it is marked).
"""

from concurrent.futures import ThreadPoolExecutor

import torch

from judge import remote
from judge.checks import CheckFailure, WrongAnswer, assert_same, describe_tensor, once
from judge.checks.artifact_processes import assert_built_bytes, report_form
from judge.checks.cache_artifacts import NotArtifacts, cache_entries
from judge.checks.trust import rests_on_learner_process
from judge.reports.i18n import T
from judge.reports.report import Verdict

_RUNS: dict = {}


def _form(report) -> dict:
    """The runner's report, or Protocol when it is not of the form public.build_and_serve returns."""
    build, _ = report_form(report)
    artifacts = build.get("artifacts")
    if artifacts is not None and not (isinstance(artifacts, torch.Tensor) and artifacts.dtype == torch.uint8
                                      and artifacts.dim() == 1):
        raise remote.Protocol(T("the build process's bytes are malformed", zh="构建进程传回的 bytes 格式有误"))
    return report


def runs(entry, public) -> dict:
    """Build and serve in the runner (public.build_and_serve); done once, shared by the checks (~10 s)."""
    def run():
        example = public.example()
        x = torch.randn(example.shape, dtype=example.dtype)  # what the service is called with: same shape, new values
        with ThreadPoolExecutor(1) as pool:  # the verifier's own fresh process, while the runner's two run
            own = pool.submit(public.own_entries)
            report = remote.call(remote.public("build_and_serve"), entry, x,
                                 what=T.same("`build_artifacts(fn, example)`"))
            return {**_form(report), "x": x, "own": own.result()}

    return once(_RUNS, run)


def built(entry, public) -> dict:
    build = runs(entry, public)["build"]
    assert_built_bytes(build, entry="build_artifacts", scoped="`torch._inductor.config.patch(...)`",
                       returns=T("the first element of what `torch.compiler.save_cache_artifacts()` returns",
                                 zh="`torch.compiler.save_cache_artifacts()` 返回值的第一个元素"))
    data = build.get("artifacts")
    if data is None or not data.numel():  # the bytes themselves, here: a size the runner states is not enough
        raise WrongAnswer(T("`build_artifacts` returned empty bytes: `torch.compiler.save_cache_artifacts()` found "
                            "nothing Inductor compiled in that process. `torch.compile` is lazy: it compiles on the "
                            "first call, with the real input, and only Inductor's output is cached.",
                            zh="`build_artifacts` 返回了空的 bytes：`torch.compiler.save_cache_artifacts()` 在那个进程里"
                               "找不到 Inductor 编译过的东西。`torch.compile` 是惰性的：第一次用真实输入调用时才编译，"
                               "而缓存里只存 Inductor 的编译结果。"))
    return build


def load_error(serve) -> T:
    """Why the serve process could not load the bytes: its own words, or the exception torch raised (as code)."""
    error = str(serve["load_error"])
    if error == "it found no cache entries in them":  # public.py's SERVE says so when load_cache_artifacts found none
        return T("it found no cache entries in them", zh="在其中没有找到任何缓存条目")
    return T.same(f"`{error}`")


def test_returns_artifacts(entry, public):
    """build_artifacts returns the non-empty bytes of torch.compiler.save_cache_artifacts()
    zh: build_artifacts 返回 torch.compiler.save_cache_artifacts() 给出的非空 bytes
    """
    built(entry, public)


def assert_holds_own_entry(found, public) -> None:
    """The bytes, read here as data, hold every FX-graph entry the verifier's own fresh process made for fn."""
    data = found["build"]["artifacts"].numpy().tobytes()
    try:
        entries = cache_entries(data)
    except NotArtifacts as exc:
        raise WrongAnswer(T("the bytes you returned are not what `torch.compiler.save_cache_artifacts()` writes "
                            "({why}); return its bytes element, as is.",
                            zh="你返回的 bytes 不是 `torch.compiler.save_cache_artifacts()` 写出的格式（{why}）；"
                               "把它返回的 bytes 元素原样返回。", why=exc.reason)) from None
    wanted = found["own"].get("inductor", [])
    if any(key not in entries.get("inductor", []) for key in wanted):  # before failing, ask a fresh process again
        wanted = found.setdefault("own_fresh", public.own_entries(fresh=True)).get("inductor", [])
    if not wanted:
        raise CheckFailure(T("the judge's own fresh process made no FX-graph cache entry for `fn`: this check "
                             "proves nothing, so it is not passed",
                             zh="判题程序自己的新进程没有为 `fn` 生成 FX 图缓存条目：这项检查什么也证明不了，所以不算通过"),
                           verdict=Verdict.INTERNAL_ERROR)
    missing = [key for key in wanted if key not in entries.get("inductor", [])]
    if missing:
        raise WrongAnswer(T(
            "your bytes hold FX-graph cache entries ({n}), none with the key a fresh process looks up when it "
            "compiles `fn` on the example's shape (`{key}`): compile `fn` exactly as it will be served (same input "
            "shape, dtype and options) before saving.",
            zh="你的 bytes 里有 {n} 个 FX 图缓存条目，但没有一个的键是新进程按示例的形状编译 `fn` 时要查的键"
               "（`{key}`）：保存之前，要按服务时完全一样的方式编译 `fn`（同样的输入形状、dtype 和编译选项）。",
            n=len(entries.get("inductor", [])), key=T.same(missing[0][:12] + "…")))


@rests_on_learner_process(T(
    "whether the entry your bytes hold for `fn` loads in a fresh process (Dynamo's counters there): loading it "
    "unpickles it, so only a process beside your code may; which entry a fresh process looks up, and that your "
    "bytes hold it, the judge checks itself",
    zh="你的 bytes 中 `fn` 的缓存条目能否在新进程里加载（那里 Dynamo 的计数器）：加载要反序列化它，只能在你的代码"
       "旁边进行；新进程要查哪个条目、你的 bytes 里有没有它，由判题程序自己检查"))
def test_fresh_process_hits_cache(entry, public):
    """A fresh process with an empty cache loads the bytes and compiles fn with an FX-graph cache hit, no miss
    zh: 缓存为空的新进程加载这些 bytes 后编译 fn，FX 图缓存命中，没有未命中
    """
    built(entry, public)
    found = runs(entry, public)
    serve = found["serve"]
    if "load_error" in serve:
        raise WrongAnswer(T("`torch.compiler.load_cache_artifacts` could not use the bytes you returned "
                            "({error}); return the bytes element of `save_cache_artifacts()`, as is.",
                            zh="`torch.compiler.load_cache_artifacts` 用不了你返回的 bytes（{error}）；"
                               "把 `save_cache_artifacts()` 返回的 bytes 元素原样返回。", error=load_error(serve)))
    assert_holds_own_entry(found, public)
    inductor = serve["counters"].get("inductor", {})
    hits, misses = inductor.get("fxgraph_cache_hit", 0), inductor.get("fxgraph_cache_miss", 0)
    if hits < 1 or misses:
        raise WrongAnswer(T(
            "the fresh process compiled `fn` again: {hits} FX-graph cache hit(s) and {misses} miss(es). The "
            "artifacts hold a graph with another cache key than `torch.compile(fn)(example)` produces: compile "
            "`fn` exactly as it will be served (same input shape, dtype and options) before saving.",
            zh="新进程又把 `fn` 编译了一遍：FX 图缓存命中 {hits} 次、未命中 {misses} 次。这些缓存里的图与 "
               "`torch.compile(fn)(example)` 的缓存键不同：保存之前，要按服务时完全一样的方式编译 `fn`"
               "（同样的输入形状、dtype 和编译选项）。", hits=hits, misses=misses))


@rests_on_learner_process(T(
    "the result of `fn` served from your artifacts, computed in a fresh process beside your code (loading the "
    "artifacts unpickles them); the judge compares it with `fn` on its own input",
    zh="从你的缓存产物服务的 `fn` 的结果，在你的代码旁边的新进程里算出（加载缓存产物要反序列化）；"
       "判题程序拿它与自己输入上的 `fn` 比较"))
def test_served_result(entry, public):
    """The function compiled from the loaded cache gives the original function's result on a new input
    zh: 从加载的缓存编译出的函数在新输入上给出与原函数相同的结果
    """
    built(entry, public)
    found = runs(entry, public)
    serve, x = found["serve"], found["x"]
    if "load_error" in serve:
        raise WrongAnswer(T("`torch.compiler.load_cache_artifacts` failed: {error}",
                            zh="`torch.compiler.load_cache_artifacts` 失败：{error}", error=load_error(serve)))
    assert_same(serve["output"], public.fn(x), case=T("`fn` served from your artifacts, {x}",
                                                    zh="用你的缓存产物服务的 `fn`，{x}", x=describe_tensor("x", x)),
                rtol=1e-4, atol=1e-4)
