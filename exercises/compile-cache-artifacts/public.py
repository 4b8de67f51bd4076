"""Handed to the runner for compile-cache-artifacts: the grader's fn, and the two fresh processes.

This exercise is self-checked (see trust_reason in exercise.toml): the bytes the learner returns are pickles
that `torch.compiler.load_cache_artifacts` unpickles, so only a process that already runs the learner's code
may load them. `build_and_serve` runs in the runner, beside the learner's code:
1. a "build" process imports the learner's file and calls build_artifacts(fn, example()), keeping the bytes
   and noting any global setting (compiler config, grad mode, threads, ...) left changed (judge/tamper.py);
2. a "serve" process loads them, compiles fn and calls it on the grader's input, reporting Dynamo's counters
   and the output tensor, which the grader compares with fn on that input itself.
Each fresh process has its own empty TORCHINDUCTOR_CACHE_DIR (but for the CPU-feature probes Inductor compiles
before any kernel) and the FX-graph and AOTAutograd caches on (the grading processes run with them off, so
nothing depends on an earlier submission's cache).
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch

TIMEOUT_S = 180  # per process: a cold Inductor compile plus importing torch, on a busy machine

GRADER_FN = '''
import torch

def fn(x):
    h = torch.nn.functional.silu(x @ x.T)
    return (h.softmax(-1) * 2.0 + 1.0).sum(0)

def example():
    return torch.arange(16 * 32, dtype=torch.float32).reshape(16, 32).sin()
'''
exec(compile(GRADER_FN, "<grader_fn>", "exec"))  # fn and example, here and in every fresh process

BUILD = '''
import importlib.util, json, os, sys, traceback
learner, fn_dir, out_path, result_path, judge_dir = sys.argv[1:6]
result = {}
try:
    sys.path.insert(0, fn_dir)
    from grader_fn import example, fn
    try:
        sys.path.append(judge_dir)
        from judge.tamper import Snapshot
        before = Snapshot()  # the process's global settings before the learner's file is imported
    except ImportError:  # a sandbox whose fresh processes cannot import the judge: nothing to compare with
        before = None
    spec = importlib.util.spec_from_file_location("submission", learner)
    module = importlib.util.module_from_spec(spec)
    sys.modules["submission"] = module
    spec.loader.exec_module(module)
    data = module.build_artifacts(fn, example())
    if before is not None:
        result["changed"] = [change.split(" (process-wide state")[0] for change in before.changes()]
    result["type"] = type(data).__name__
    if isinstance(data, (bytes, bytearray)):
        result["size"] = len(data)
        with open(out_path, "wb") as f:
            f.write(bytes(data))
except BaseException:
    result["error"] = traceback.format_exc()[-4000:]
with open(result_path, "w") as f:
    json.dump(result, f)
os._exit(0)  # the interpreter's teardown with torch loaded takes ~0.75 s; the result is written
'''

SERVE = '''
import json, os, sys
fn_dir, art_path, x_path, out_path, result_path = sys.argv[1:6]
sys.path.insert(0, fn_dir)
import torch
from torch._dynamo.utils import counters
from grader_fn import fn
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
    x = torch.load(x_path, weights_only=True)
    torch.save(torch.compile(fn)(x).detach().clone(), out_path)
    result["counters"] = {k: dict(counters[k]) for k in ("inductor", "aot_autograd")}
with open(result_path, "w") as f:
    json.dump(result, f)
os._exit(0)  # the interpreter's teardown with torch loaded takes ~0.75 s; the result is written
'''


def _env(cache_dir: Path) -> dict:
    _seed_isa_probes(cache_dir)
    return {"TORCHINDUCTOR_CACHE_DIR": str(cache_dir), "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
            "TORCHINDUCTOR_AUTOGRAD_CACHE": "1", "TORCHINDUCTOR_COMPILE_THREADS": "1", "OMP_NUM_THREADS": "1"}


def _seed_isa_probes(cache_dir: Path) -> None:
    """Copy into a fresh process's empty cache the vector-ISA probe libraries known to load from this process's
    (PRACTICE_VEC_ISA_LOADED): Inductor checks the CPU's features by compiling them (~1.8 s a process). They
    hold no compiled graph or kernel of any function, so the cache is still empty of what the exercise is about."""
    source = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    for rel in filter(None, os.environ.get("PRACTICE_VEC_ISA_LOADED", "").split(",")):
        found, target = Path(source or "/nonexistent") / rel, cache_dir / rel
        if rel.endswith(".so") and ".." not in Path(rel).parts and found.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found, target)


def build_and_serve(build_artifacts, x: torch.Tensor) -> dict:
    """{"build": {type, size, changed | error}, "serve": {load_error | counters, output}}; "serve" only after bytes
    from a build that left no global setting changed."""
    from judge.checks.failures import CheckFailure
    from judge.checks.fresh_process import run_python
    from judge.checks.locations import to_display_names

    import judge

    learner = sys.modules[build_artifacts.__module__].__file__
    judge_dir = str(Path(judge.__file__).resolve().parent.parent)  # so that the build process can import judge.tamper
    root = Path(tempfile.mkdtemp(prefix="cache-exercise-"))
    try:
        (root / "grader_fn.py").write_text(GRADER_FN, encoding="utf-8")
        art = root / "artifacts.bin"
        try:
            build = run_python(BUILD, [learner, str(root), str(art), str(root / "build.json"), judge_dir],
                               env=_env(root / "cache-build"), result_file=root / "build.json",
                               timeout=TIMEOUT_S, cwd=root)
        except CheckFailure as exc:  # it died or hung: what it printed last, then why
            detail = "\n".join(d.message for d in exc.diagnostics if getattr(d, "message", ""))
            build = {"error": f"{detail}\n{exc}".strip()}
        if "error" in build:  # the learner's traceback, naming their file as they know it
            build["error"] = to_display_names(str(build["error"]))
        report = {"build": build}
        if build.get("size") and not build.get("changed"):  # a build that changed global settings is FORBIDDEN
            torch.save(x, root / "x.pt")
            try:
                serve = run_python(SERVE, [str(root), str(art), str(root / "x.pt"), str(root / "out.pt"),
                                           str(root / "serve.json")],
                                   env=_env(root / "cache-serve"), result_file=root / "serve.json",
                                   timeout=TIMEOUT_S, cwd=root)
            except CheckFailure as exc:  # loading the bytes killed or hung the serving process
                serve = {"load_error": str(exc)}
            if "load_error" not in serve:
                serve["output"] = torch.load(root / "out.pt", weights_only=True)
            report["serve"] = serve
        return report
    finally:
        shutil.rmtree(root, ignore_errors=True)
