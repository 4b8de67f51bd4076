"""Hidden tests for compile-cache-artifacts: a fresh process with an empty cache loads the learner's artifacts.

Self-checked in part (exercise.toml: trust_reason), but the learner's file decides only the bytes:
1. "build", in the runner (public.build_and_serve): a fresh process that compiled nothing (its own empty
   TORCHINDUCTOR_CACHE_DIR, the FX-graph and AOTAutograd caches on) imports the learner's file and calls
   build_artifacts(fn, example); the bytes come back here as data;
2. the bytes are read here as data (judge/checks/cache_artifacts.py: the kind and key of each entry, no content
   unpickled): the second check passes only if they hold the FX-graph entry that a fresh process of the verifier's
   own (public.own_entries: the grader's fn alone, no learner code) makes for fn, so that which entry is looked up
   is decided here;
3. "serve", on the trusted side (judge.checks.artifact_processes.load_artifact, kind "cache"): the trusted parent
   loads the bytes with load_cache_artifacts in a sandboxed run of its own where no learner file is imported, into
   an Inductor cache folder empty for that run, compiles fn there and calls it on inputs drawn here for this
   grading; it reports the FX-graph and AOTAutograd cache counters and the outputs, which are compared here with fn
   on those inputs. Loading an entry unpickles it, so the entries' own code runs there: the counters still come
   from a process where the learner's bytes ran (the check that rests on them is marked).
"""

from concurrent.futures import ThreadPoolExecutor

import torch

from judge import remote
from judge.checks import CheckFailure, Forbidden, WrongAnswer, assert_same, describe_tensor, once
from judge.checks.artifact_processes import artifact_bytes, assert_built_bytes, build_form, load_artifact
from judge.checks.cache_artifacts import NotArtifacts, cache_entries
from judge.checks.trust import rests_on_learner_process
from judge.reports.i18n import T
from judge.reports.report import Verdict

_RUNS: dict = {}
_SERVED: dict = {}


def runs(entry, public) -> dict:
    """Build in the runner (public.build_and_serve) while the verifier's own fresh process makes its entries; done
    once, shared by the checks (~6 s)."""
    def run():
        with ThreadPoolExecutor(1) as pool:  # the verifier's own fresh process, while the runner's build runs
            own = pool.submit(public.own_entries)
            report = remote.call(remote.public("build_and_serve"), entry,
                                 what=T.same("`build_artifacts(fn, example)`"))
            return {"build": build_form(report), "own": own.result()}  # a "serve" in the report is not read

    return once(_RUNS, run)


def built(entry, public) -> dict:
    build = runs(entry, public)["build"]
    assert_built_bytes(build, entry="build_artifacts", scoped="`torch._inductor.config.patch(...)`",
                       returns=T("the first element of what `torch.compiler.save_cache_artifacts()` returns",
                                 zh="`torch.compiler.save_cache_artifacts()` 返回值的第一个元素"))
    data = build.get("artifacts")
    if data is None or not isinstance(data, torch.Tensor) or not data.numel():  # the bytes themselves, here
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
    if error == "it found no cache entries in them":  # the loader says so when load_cache_artifacts found none
        return T("it found no cache entries in them", zh="在其中没有找到任何缓存条目")
    return T.same(f"`{error}`")


def loaded(entry, public) -> dict:
    """The trusted side's serve (done once): the loader's report (judge/loader_side/loader.py, kind "cache"), and the
    inputs drawn here for it."""
    def run():
        data = artifact_bytes(built(entry, public))  # its form and size, checked here
        example = public.example()
        # what the service is called with: the same shape and dtype, new values drawn for this grading
        xs = [torch.randn(example.shape, dtype=example.dtype), 4.0 * torch.randn(example.shape, dtype=example.dtype)]
        return {**load_artifact(data, xs, grader_fn=public.GRADER_FN, kind="cache"), "xs": xs}

    built(entry, public)
    return once(_SERVED, run)


def served(entry, public, *, failed: T) -> dict:
    """The loader's report, once the bytes loaded and fn, compiled there, ran on every input; `failed` starts the
    words of a load error."""
    serve = loaded(entry, public)
    if "load_error" in serve:
        raise WrongAnswer(T("{failed} ({error}); return the bytes element of `save_cache_artifacts()`, as is.",
                            zh="{failed}（{error}）；把 `save_cache_artifacts()` 返回的 bytes 元素原样返回。",
                            failed=failed, error=load_error(serve)))
    if "call_error" in serve:
        raise WrongAnswer(T("`fn`, compiled after loading your artifacts, failed on the served input (same shape and "
                            "dtype as `example`): {error}",
                            zh="加载你的缓存产物后编译的 `fn` 在服务的输入（形状、dtype 与 `example` 相同）上失败了：{error}",
                            error=T.same(f"`{serve['call_error']}`")))
    if serve["changed"]:
        raise Forbidden(T("loading your artifacts and compiling `fn` from them left global settings changed in the "
                          "fresh process: {changes}. Cache artifacts must not change the process that loads them.",
                          zh="加载你的缓存产物并用它们编译 `fn` 后，新进程里的全局设置被改动了：{changes}。"
                             "缓存产物不能改动加载它们的进程。",
                          changes=T.same(", ".join(f"`{c}`" for c in serve["changed"][:5]))))
    return serve


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
    "whether the entry your bytes hold for `fn` loads in a fresh process (the FX-graph cache counters there): the "
    "judge's own sandboxed process loads your bytes, with none of your files and an empty cache, but loading an "
    "entry unpickles it, so your bytes' own code runs there and could write those counters; which entry a fresh "
    "process looks up, that your bytes hold it, and what `fn` served from them returns, the judge checks itself",
    zh="你的 bytes 中 `fn` 的缓存条目能否在新进程里加载（那里 FX 图缓存的计数器）：加载你的 bytes 的是判题程序自己的"
       "沙箱进程，那里没有你的文件、缓存为空，但加载条目要反序列化它，你的 bytes 自己的代码会在那里运行，也就能改写"
       "这些计数器；新进程要查哪个条目、你的 bytes 里有没有它、从中服务的 `fn` 算出什么，由判题程序自己检查"))
def test_fresh_process_hits_cache(entry, public):
    """A fresh process with an empty cache loads the bytes and compiles fn with an FX-graph cache hit, no miss
    zh: 缓存为空的新进程加载这些 bytes 后编译 fn，FX 图缓存命中，没有未命中
    """
    serve = served(entry, public, failed=T("`torch.compiler.load_cache_artifacts` could not use the bytes you "
                                           "returned", zh="`torch.compiler.load_cache_artifacts` 用不了你返回的 bytes"))
    assert_holds_own_entry(runs(entry, public), public)
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


def test_served_result(entry, public):
    """The function compiled from the loaded cache gives the original function's result on a new input
    zh: 从加载的缓存编译出的函数在新输入上给出与原函数相同的结果
    """
    serve = served(entry, public, failed=T("`torch.compiler.load_cache_artifacts` failed",
                                           zh="`torch.compiler.load_cache_artifacts` 失败"))
    for x, output in zip(serve["xs"], serve["outputs"], strict=True):
        assert_same(output, public.fn(x.clone()), case=T("`fn` served from your artifacts, {x}",
                                                         zh="用你的缓存产物服务的 `fn`，{x}", x=describe_tensor("x", x)),
                    rtol=1e-4, atol=1e-4)
