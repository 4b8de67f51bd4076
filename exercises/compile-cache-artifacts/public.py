"""Handed to the runner for compile-cache-artifacts: the grader's fn, and the fresh processes.

This exercise is self-checked (see trust_reason in exercise.toml): the bytes the learner returns are pickles
that `torch.compiler.load_cache_artifacts` unpickles, so only a process that already runs the learner's code
may load them. `build_and_serve` runs in the runner, beside the learner's code, with the processes of
judge/checks/artifact_processes.py: a fresh process that imports torch and compiles nothing, a "build" process
forked from it that calls build_artifacts(fn, example()), then the fresh process serving with SERVE below: it loads
the bytes, compiles fn and calls it on the grader's input, reporting Dynamo's counters and the output tensor, which
the grader compares with fn on that input itself.
The runner's report carries the bytes themselves (`build["artifacts"]`, a uint8 tensor). The verifier reads them as
data (judge/checks/cache_artifacts.py: the kind and key of each entry, no content unpickled) and compares them with
the entries it gets from `own_entries`, a fresh process of its own that compiles only this grader's fn: which cache
entry a fresh process looks up is then decided on the trusted side.
Each process has its own empty TORCHINDUCTOR_CACHE_DIR (but for the CPU-feature probes Inductor compiles before
any kernel) and the FX-graph and AOTAutograd caches on (the grading processes run with them off, so nothing
depends on an earlier submission's cache).
"""

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch

from judge.checks import artifact_processes
from judge.checks.artifact_processes import ENV, TIMEOUT_S, seed_isa_probes

GRADER_FN = '''
import torch

def fn(x):
    h = torch.nn.functional.silu(x @ x.T)
    return (h.softmax(-1) * 2.0 + 1.0).sum(0)

def example():
    return torch.arange(16 * 32, dtype=torch.float32).reshape(16, 32).sin()
'''
exec(compile(GRADER_FN, "<grader_fn>", "exec"))  # fn and example, here and in every fresh process

SERVE = '''
def serve(data, x_path, out_path):
    from torch._dynamo.utils import counters
    try:
        info = torch.compiler.load_cache_artifacts(data)   # None when it could not read them (it only warns)
        if info is None or not any(info.artifacts.values()):
            return {"load_error": "it found no cache entries in them"}
    except BaseException as exc:
        return {"load_error": f"{type(exc).__name__}: {exc}"[:500]}
    x = torch.load(x_path, weights_only=True)
    torch.save(torch.compile(fn)(x).detach().clone(), out_path)
    return {"counters": {k: dict(counters[k]) for k in ("inductor", "aot_autograd")}}
'''


def build_and_serve(build_artifacts, x: torch.Tensor) -> dict:
    """{"build": {type, size, artifacts, changed | error}, "serve": {load_error | counters, output}}; "serve" only
    after bytes from a build that left no global setting changed."""
    return artifact_processes.build_and_serve(build_artifacts, x, entry="build_artifacts", grader_fn=GRADER_FN,
                                              serve=SERVE, with_bytes=True)


OWN = '''
import json, os, sys
sys.path.insert(0, sys.argv[1])
import torch
from grader_fn import example, fn
torch.compile(fn)(example())
saved = torch.compiler.save_cache_artifacts()
with open(sys.argv[2], "w") as f:
    json.dump({k: list(v) for k, v in saved[1].artifacts.items()} if saved else {}, f)
os._exit(0)
'''


def own_entries(*, fresh: bool = False) -> dict[str, list[str]]:
    """{kind: [keys]} of the cache entries a fresh process makes compiling this grader's fn on example(), as
    `build_and_serve`'s processes are set up but with no learner code anywhere: run by the verifier (trusted).
    Where the verifier has its own Inductor cache, the answer is kept there beside the entries it names, keyed by
    everything that decides them (the grader's source, torch's build, the compile settings), so that later gradings
    skip the ~4 CPU-s fresh process; `fresh` asks the process again whatever is kept."""
    from judge.checks.fresh_process import run_python

    kept = _kept_path()
    if kept is not None and not fresh:
        try:
            return json.loads(kept.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    root = Path(tempfile.mkdtemp(prefix="cache-exercise-own-"))
    try:
        (root / "grader_fn.py").write_text(GRADER_FN, encoding="utf-8")
        # The verifier's own Inductor cache where it has one: a cache's content never changes an entry's key, and
        # after the first grading the compile is a hit there (~3 s instead of ~16 s of CPU)
        cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or str(root / "cache")
        if cache == str(root / "cache"):
            seed_isa_probes(root / "cache")
        found = run_python(OWN, [str(root), str(root / "own.json")], env={**ENV, "TORCHINDUCTOR_CACHE_DIR": cache},
                           result_file=root / "own.json", timeout=TIMEOUT_S, cwd=root)
        if kept is not None and found.get("inductor"):
            kept.parent.mkdir(parents=True, exist_ok=True)
            (root / "kept.json").write_text(json.dumps(found), encoding="utf-8")
            os.replace(root / "kept.json", kept)
        return found
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _kept_path() -> Path | None:
    """Where `own_entries` keeps its answer in the verifier's Inductor cache, or None without one."""
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not cache:
        return None
    settings = sorted((k, v) for k, v in os.environ.items()
                      if k.startswith(("TORCH", "OMP_")) and k != "TORCHINDUCTOR_CACHE_DIR")
    key = json.dumps([GRADER_FN, OWN, ENV, settings, torch.__version__, torch.version.git_version, sys.executable])
    return Path(cache) / "own-entries" / f"{hashlib.sha256(key.encode()).hexdigest()}.json"
