"""Handed to the runner for compile-cache-artifacts: the grader's fn, and the build process.

`build_and_serve` runs in the runner, beside the learner's code, with the processes of
judge/checks/artifact_processes.py: a process that has imported torch and compiled nothing (forked by the runner
before the learner's file is imported: `build_process` in exercise.toml), and a "build" process forked from it that
calls build_artifacts(fn, example()). It only builds (the name is the shared form's): the bytes
come back to the verifier as data (`build["artifacts"]`, a uint8 tensor).
The verifier reads them as data (judge/checks/cache_artifacts.py: the kind and key of each entry, no content
unpickled) and compares them with the entries it gets from `own_entries`, a fresh process of its own that compiles
only this grader's fn: which cache entry a fresh process looks up is then decided on the trusted side.
The serving is the trusted side's too: the verifier sends the bytes to the trusted parent, which loads them with
load_cache_artifacts in a sandboxed run of its own where no learner file is imported (judge/parent/loading.py,
judge/loader_side/loader.py, kind "cache"), into an Inductor cache folder empty for that run, compiles fn, calls it
on the verifier's inputs, and hands back the FX-graph and AOTAutograd cache counters and the outputs, which the
verifier compares with fn on those inputs itself. The entries are pickles, so their own code runs in that process:
the exercise stays self-checked (trust_reason).
The build process and `own_entries` have each their own empty TORCHINDUCTOR_CACHE_DIR (but for the CPU-feature
probes Inductor compiles before any kernel) and the FX-graph and AOTAutograd caches on (the grading processes run
with them off, so nothing depends on an earlier submission's cache).
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


def build_and_serve(build_artifacts) -> dict:
    """{"build": {type, size, artifacts, changed | error}}: the build only; the bytes are loaded on the trusted side."""
    return artifact_processes.build_and_serve(build_artifacts, entry="build_artifacts", grader_fn=GRADER_FN)


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
            _keep(kept, found)
        return found
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _keep(kept: Path, found: dict) -> None:
    """Write the answer beside the entries, whole or not at all (written next to it, then renamed: a sandbox's cache
    is often another file system than its temporary folder). A cache that cannot be written only costs the next
    grading its fresh process."""
    new = kept.with_name(f"{kept.name}.{os.getpid()}.new")
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        new.write_text(json.dumps(found), encoding="utf-8")
        os.replace(new, kept)
    except OSError:
        try:
            new.unlink()
        except OSError:
            pass


def _kept_path() -> Path | None:
    """Where `own_entries` keeps its answer in the verifier's Inductor cache, or None without one."""
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not cache:
        return None
    # the settings the fresh process sees (ENV over this process's): a layer's build and a run over it then agree
    settings = sorted((k, v) for k, v in {**os.environ, **ENV}.items()
                      if k.startswith(("TORCH", "OMP_")) and k not in ("TORCHINDUCTOR_CACHE_DIR", "TORCH_LOGS"))
    key = json.dumps([GRADER_FN, OWN, ENV, settings, torch.__version__, torch.version.git_version, sys.executable])
    return Path(cache) / "own-entries" / f"{hashlib.sha256(key.encode()).hexdigest()}.json"
