"""Hidden tests for compile-cache-artifacts: a fresh process with an empty cache loads the learner's artifacts.

Two fresh processes, each with its own empty TORCHINDUCTOR_CACHE_DIR and the FX-graph and AOTAutograd caches
switched on (the grading process runs with them off, so nothing depends on an earlier submission's cache):
1. "build" imports the learner's file and calls build_artifacts(fn, example) on the grader's function;
2. "serve" calls torch.compiler.load_cache_artifacts(data), compiles fn, and reports Dynamo's counters.
"""

import atexit
import shutil
import tempfile
from pathlib import Path

from judge.checks import WrongAnswer
from judge.checks.fresh_process import learner_error, run_python

TIMEOUT_S = 180  # per process: a cold Inductor compile plus importing torch, on a busy machine

GRADER_FN = '''
import torch

def fn(x):
    h = torch.nn.functional.silu(x @ x.T)
    return (h.softmax(-1) * 2.0 + 1.0).sum(0)

def example():
    return torch.arange(16 * 32, dtype=torch.float32).reshape(16, 32).sin()
'''

BUILD = '''
import importlib.util, json, sys, traceback
learner, fn_dir, out_path, result_path = sys.argv[1:5]
result = {}
try:
    sys.path.insert(0, fn_dir)
    from grader_fn import example, fn
    spec = importlib.util.spec_from_file_location("submission", learner)
    module = importlib.util.module_from_spec(spec)
    sys.modules["submission"] = module
    spec.loader.exec_module(module)
    data = module.build_artifacts(fn, example())
    result["type"] = type(data).__name__
    if isinstance(data, (bytes, bytearray)):
        result["size"] = len(data)
        with open(out_path, "wb") as f:
            f.write(bytes(data))
except BaseException:
    result["error"] = traceback.format_exc()[-4000:]
with open(result_path, "w") as f:
    json.dump(result, f)
'''

SERVE = '''
import json, sys, traceback
fn_dir, art_path, result_path = sys.argv[1:4]
sys.path.insert(0, fn_dir)
import torch
from torch._dynamo.utils import counters
from grader_fn import example, fn
result = {}
with open(art_path, "rb") as f:
    data = f.read()
try:
    info = torch.compiler.load_cache_artifacts(data)   # None when it could not read them (it only warns)
    if info is None or not any(info.artifacts.values()):
        result["load_error"] = "it found no cache entries in them"
except BaseException as exc:
    result["load_error"] = f"{type(exc).__name__}: {exc}"[:500]
if "load_error" not in result:
    x = example()
    out = torch.compile(fn)(x)
    result["same"] = bool(torch.allclose(out, fn(x), rtol=1e-4, atol=1e-4))
    result["counters"] = {k: dict(counters[k]) for k in ("inductor", "aot_autograd")}
with open(result_path, "w") as f:
    json.dump(result, f)
'''

_RUNS: dict = {}


def _env(cache_dir: Path) -> dict:
    return {"TORCHINDUCTOR_CACHE_DIR": str(cache_dir), "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
            "TORCHINDUCTOR_AUTOGRAD_CACHE": "1", "TORCHINDUCTOR_COMPILE_THREADS": "1", "OMP_NUM_THREADS": "1"}


def runs(submission) -> dict:
    """Build in one fresh process, serve in another; run once and shared by the checks (~30 s)."""
    if not _RUNS:
        root = Path(tempfile.mkdtemp(prefix="cache-exercise-"))
        atexit.register(shutil.rmtree, root, True)
        (root / "grader_fn.py").write_text(GRADER_FN, encoding="utf-8")
        art = root / "artifacts.bin"
        _RUNS["build"] = run_python(BUILD, [submission.__file__, str(root), str(art), str(root / "build.json")],
                                    env=_env(root / "cache-build"), result_file=root / "build.json",
                                    timeout=TIMEOUT_S, cwd=root)
        if _RUNS["build"].get("size"):
            _RUNS["serve"] = run_python(SERVE, [str(root), str(art), str(root / "serve.json")],
                                        env=_env(root / "cache-serve"), result_file=root / "serve.json",
                                        timeout=TIMEOUT_S, cwd=root)
    return _RUNS


def built(submission) -> dict:
    build = runs(submission)["build"]
    if "error" in build:
        raise learner_error("build_artifacts(fn, example)", build["error"])
    if build.get("type") not in ("bytes", "bytearray"):
        raise WrongAnswer(f"build_artifacts must return bytes (the first element of what "
                          f"torch.compiler.save_cache_artifacts() returns); it returned {build.get('type')}")
    if not build.get("size"):
        raise WrongAnswer("build_artifacts returned empty bytes: torch.compiler.save_cache_artifacts() found "
                          "nothing Inductor compiled in that process. torch.compile is lazy: it compiles on the "
                          "first call, with the real input, and only Inductor's output is cached.")
    return build


def test_returns_artifacts(submission):
    """build_artifacts returns the non-empty bytes of torch.compiler.save_cache_artifacts()"""
    built(submission)


def test_fresh_process_hits_cache(submission):
    """A fresh process with an empty cache loads the bytes and compiles fn with an FX-graph cache hit, no miss"""
    built(submission)
    serve = runs(submission)["serve"]
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


def test_served_result(submission):
    """The function compiled from the loaded cache gives the original function's result"""
    built(submission)
    serve = runs(submission)["serve"]
    if "load_error" in serve:
        raise WrongAnswer(f"torch.compiler.load_cache_artifacts failed: {serve['load_error']}")
    assert serve["same"], "the function compiled from your artifacts gives a different result from fn"
