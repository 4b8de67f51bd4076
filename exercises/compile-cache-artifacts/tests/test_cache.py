"""Hidden tests for compile-cache-artifacts: a fresh process with an empty cache loads the learner's artifacts.

Self-checked (exercise.toml: trust_reason). The bytes build_artifacts returns are pickles that
torch.compiler.load_cache_artifacts unpickles, so they are loaded only beside the learner's code: the runner
runs public.build_and_serve, whose two fresh processes (each with an empty TORCHINDUCTOR_CACHE_DIR and the
FX-graph and AOTAutograd caches on) are
1. "build": imports the learner's file and calls build_artifacts(fn, example) on the grader's function;
2. "serve": load_cache_artifacts(data), compiles fn, calls it on this grader's input, reports Dynamo's counters.
What they report decides the first two checks; the served output is compared here with fn on that input.
"""

import torch

from judge import remote
from judge.checks import WrongAnswer, assert_same, describe_tensor
from judge.checks.fresh_process import learner_error

_RUNS: dict = {}


def _form(report) -> dict:
    """The runner's report, or Protocol when it is not of the form public.build_and_serve returns."""
    build = report.get("build") if isinstance(report, dict) else None
    serve = report.get("serve", {}) if isinstance(report, dict) else None
    if not isinstance(build, dict) or not isinstance(serve, dict):
        raise remote.Protocol("the runner's report on the build and serve processes is malformed")
    if "counters" in serve and not (isinstance(serve["counters"], dict) and all(
            isinstance(v, dict) and all(isinstance(n, int) for n in v.values()) for v in serve["counters"].values())):
        raise remote.Protocol("the serve process's counters are malformed")
    if "counters" in serve and not isinstance(serve.get("output"), torch.Tensor):
        raise remote.Protocol("the serve process sent no output tensor")
    return report


def runs(entry, public) -> dict:
    """Build in one fresh process, serve in another (in the runner); run once and shared by the checks (~60 s)."""
    if not _RUNS:
        example = public.example()
        x = torch.randn(example.shape, dtype=example.dtype)  # what the service is called with: same shape, new values
        report = remote.call(remote.public("build_and_serve"), entry, x, what="build_artifacts(fn, example)")
        _RUNS.update(_form(report), x=x)
    return _RUNS


def built(entry, public) -> dict:
    build = runs(entry, public)["build"]
    if "error" in build:
        raise learner_error("build_artifacts(fn, example)", str(build["error"]))
    if build.get("type") not in ("bytes", "bytearray"):
        raise WrongAnswer(f"build_artifacts must return bytes (the first element of what "
                          f"torch.compiler.save_cache_artifacts() returns); it returned {build.get('type')}")
    if not build.get("size"):
        raise WrongAnswer("build_artifacts returned empty bytes: torch.compiler.save_cache_artifacts() found "
                          "nothing Inductor compiled in that process. torch.compile is lazy: it compiles on the "
                          "first call, with the real input, and only Inductor's output is cached.")
    return build


def test_returns_artifacts(entry, public):
    """build_artifacts returns the non-empty bytes of torch.compiler.save_cache_artifacts()"""
    built(entry, public)


def test_fresh_process_hits_cache(entry, public):
    """A fresh process with an empty cache loads the bytes and compiles fn with an FX-graph cache hit, no miss"""
    built(entry, public)
    serve = runs(entry, public)["serve"]
    if "load_error" in serve:
        raise WrongAnswer("torch.compiler.load_cache_artifacts could not use the bytes you returned ("
                          f"{serve['load_error']}); return the bytes element of save_cache_artifacts(), as is.")
    inductor = serve["counters"].get("inductor", {})
    hits, misses = inductor.get("fxgraph_cache_hit", 0), inductor.get("fxgraph_cache_miss", 0)
    if hits < 1 or misses:
        raise WrongAnswer(
            f"the fresh process compiled fn again: {hits} FX-graph cache hit(s) and {misses} miss(es). The "
            "artifacts hold a graph with another cache key than torch.compile(fn)(example) produces: compile "
            "fn exactly as it will be served (same input shape, dtype and options) before saving.")


def test_served_result(entry, public):
    """The function compiled from the loaded cache gives the original function's result on a new input"""
    built(entry, public)
    found = runs(entry, public)
    serve, x = found["serve"], found["x"]
    if "load_error" in serve:
        raise WrongAnswer(f"torch.compiler.load_cache_artifacts failed: {serve['load_error']}")
    assert_same(serve["output"], public.fn(x), case=f"fn served from your artifacts, {describe_tensor('x', x)}",
                rtol=1e-4, atol=1e-4)
