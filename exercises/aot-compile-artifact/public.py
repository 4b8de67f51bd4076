"""Handed to the runner for aot-compile-artifact: the grader's fn, and the fresh processes.

This exercise is self-checked (see trust_reason in exercise.toml): the bytes the learner returns are pickles
that `torch.compiler.load_compiled_function` unpickles, so only a process that already runs the learner's code
may load them. `build_and_serve` runs in the runner, beside the learner's code. It starts one fresh Python
process, which imports torch and compiles nothing; then
1. a "build" process, forked from it, imports the learner's file and calls build_artifact(fn, example()),
   keeping the bytes and noting any global setting (compiler config, grad mode, threads, ...) left changed
   (judge/shared/tamper.py);
2. the fresh process itself then serves: it loads the bytes with load_compiled_function, calls the loaded
   function on the grader's input, and reports Dynamo's counters (frames it traced, graphs it compiled) and the
   output tensor, which the grader compares with fn on that input itself.
Neither has compiled anything before (a fork made before any compile is as fresh, and saves importing torch
twice); each has its own empty TORCHINDUCTOR_CACHE_DIR, so an Inductor artifact cannot lean on a cache.
"""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch

TIMEOUT_S = 180  # per process: a cold compile (Inductor, if the learner chose it) plus importing torch

GRADER_FN = '''
import torch

def fn(x):
    h = torch.nn.functional.silu(x @ x.T)
    return (h.softmax(-1) * 2.0 + 1.0).sum(0)

def example():
    return torch.arange(16 * 32, dtype=torch.float32).reshape(16, 32).sin()
'''
exec(compile(GRADER_FN, "<grader_fn>", "exec"))  # fn and example, here and in every fresh process

FRESH = '''
import importlib.util, json, os, select, signal, sys, traceback
learner, fn_dir, art_path, x_path, out_path, result_path, judge_dir, build_cache, timeout = sys.argv[1:10]
sys.path.insert(0, fn_dir)
import torch
import torch._dynamo, torch._inductor.compile_fx  # imported once for both processes; nothing is compiled here
from grader_fn import example, fn
try:
    sys.path.append(judge_dir)
    from judge.shared.tamper import Snapshot
except ImportError:  # a sandbox whose fresh processes cannot import the judge: nothing to compare with
    Snapshot = None


def report(found):
    with open(result_path + ".new", "w") as f:
        json.dump(found, f)
    os.replace(result_path + ".new", result_path)


def build():
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = build_cache
    result = {}
    try:
        before = Snapshot() if Snapshot else None  # the process's global settings before the learner's file runs
        spec = importlib.util.spec_from_file_location("submission", learner)
        module = importlib.util.module_from_spec(spec)
        sys.modules["submission"] = module
        spec.loader.exec_module(module)
        data = module.build_artifact(fn, example())
        if before is not None:
            result["changed"] = [change.split(" (process-wide state")[0] for change in before.changes()]
        result["type"] = type(data).__name__
        if isinstance(data, (bytes, bytearray)):
            result["size"] = len(data)
            with open(art_path, "wb") as f:
                f.write(bytes(data))
    except BaseException:
        result["error"] = traceback.format_exc()[-4000:]
    return result


def stderr_tail(path):
    try:
        with open(path, errors="replace") as f:
            return "\\n".join(f.read().strip().splitlines()[-15:])[-2000:]
    except OSError:
        return ""


build_result = result_path + ".build"
pid = os.fork()
if pid == 0:  # the build process: its own process group, its stderr kept for a death's report
    os.setpgid(0, 0)
    err = os.open(build_result + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(err, 2)
    with open(build_result, "w") as f:
        json.dump(build(), f)
    os._exit(0)  # the interpreter's teardown with torch loaded takes ~0.75 s; the result is written
try:
    ended = bool(select.select([os.pidfd_open(pid)], [], [], float(timeout))[0])
except (AttributeError, OSError):  # no pidfd here: the run's own time limit still ends a build that hangs
    ended = True
if not ended:
    os.killpg(pid, signal.SIGKILL)
    built = {"error": f"the build process did not finish in {timeout} s"}
    os.waitpid(pid, 0)
else:
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    try:
        with open(build_result) as f:
            built = json.load(f)
    except (OSError, ValueError):
        built = {"error": f"{stderr_tail(build_result + '.err')}\\nthe build process died (exit code {status}) "
                          "before reporting a result".strip()}
try:
    os.killpg(pid, signal.SIGKILL)  # whatever the learner's code left running in the build's group
except ProcessLookupError:
    pass
serving = bool(built.get("size")) and not built.get("changed")  # a build that changed settings is FORBIDDEN
report({"build": built, "serving": serving})  # what stays known should serving kill this process
if not serving:
    os._exit(0)
import io
from torch._dynamo.utils import counters
served = {}
with open(art_path, "rb") as f:
    data = f.read()
try:
    loaded = torch.compiler.load_compiled_function(io.BytesIO(data))
except BaseException as exc:
    served["load_error"] = f"{type(exc).__name__}: {exc}"[:500]
if "load_error" not in served:
    x = torch.load(x_path, weights_only=True)
    try:
        torch.save(loaded(x).detach().clone(), out_path)
    except BaseException as exc:
        served["call_error"] = f"{type(exc).__name__}: {exc}"[:800]
    served["counters"] = {k: {n: int(v) for n, v in counters[k].items()} for k in ("frames", "stats")}
report({"build": built, "serving": True, "serve": served})
os._exit(0)
'''


ENV = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "1", "TORCHINDUCTOR_AUTOGRAD_CACHE": "1", "TORCHINDUCTOR_COMPILE_THREADS": "1",
       "OMP_NUM_THREADS": "1"}


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


def build_and_serve(build_artifact, x: torch.Tensor) -> dict:
    """{"build": {type, size, changed | error}, "serve": {load_error | counters, call_error | output}}; "serve"
    only after bytes from a build that left no global setting changed."""
    import judge
    from judge.checks.failures import CheckFailure
    from judge.checks.fresh_process import run_python
    from judge.compiler.locations import to_display_names

    learner = sys.modules[build_artifact.__module__].__file__
    # so that the build process can import judge.shared.tamper
    judge_dir = str(Path(judge.__file__).resolve().parent.parent)
    root = Path(tempfile.mkdtemp(prefix="aot-exercise-"))
    try:
        (root / "grader_fn.py").write_text(GRADER_FN, encoding="utf-8")
        torch.save(x, root / "x.pt")
        caches = {name: root / f"cache-{name}" for name in ("build", "serve")}
        for cache in caches.values():
            _seed_isa_probes(cache)
        args = [learner, str(root), str(root / "artifact.bin"), str(root / "x.pt"), str(root / "out.pt"),
                str(root / "fresh.json"), judge_dir, str(caches["build"]), str(TIMEOUT_S)]
        serve_died = "the process died loading them"  # it reported serving, then nothing more
        try:
            found = run_python(FRESH, args, env={**ENV, "TORCHINDUCTOR_CACHE_DIR": str(caches["serve"])},
                               result_file=root / "fresh.json", timeout=2 * TIMEOUT_S + 30, cwd=root)
        except CheckFailure as exc:  # it hung (what it reported before, if anything), or died before reporting
            detail = "\n".join(d.message for d in exc.diagnostics if getattr(d, "message", ""))
            found = _reported(root / "fresh.json") or {"build": {"error": f"{detail}\n{exc}".strip()}}
            serve_died = str(exc)
        build = found["build"]
        if "error" in build:  # the learner's traceback, naming their file as they know it
            build["error"] = to_display_names(str(build["error"]))
        report = {"build": build}
        if found.get("serving"):
            serve = found.get("serve", {"load_error": serve_died})
            if "load_error" not in serve and "call_error" not in serve:
                serve["output"] = torch.load(root / "out.pt", weights_only=True)
            report["serve"] = serve
        return report
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _reported(path: Path) -> dict | None:
    """What the fresh process reported before it was killed (the build's result, once it had one)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
