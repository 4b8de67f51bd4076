"""Whether the unisolated backends' runs may skip Inductor's vector-ISA check, decided once per machine.

Before its first C++ kernel, every process that has no cached probe builds and loads a test program for each
vector ISA the CPU claims (~7 s with an empty Inductor cache: the compile-cache exercise's fresh processes pay
it twice per grading). `TORCHINDUCTOR_VEC_ISA_OK=1` skips the check, which is only right where the best ISA the
CPU claims is the one the check would pick. A trusted process (no learner code) compares the two once per
torch/compiler/CPU configuration (`sandbox.compile_cache.config_key`) and the answer is kept beside the shared
C++ build cache, with the probe libraries that loaded there (Inductor still checks the ISA's features, bf16 or
AMX say, with probes of their own). The hardened backends take the same answers from their trusted cache layer.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from sandbox.compile_cache import config_key, isa_env
from sandbox.limits import BASE_ENV, inductor_cache_dir
from sandbox.mounts import CODE_ROOT

log = logging.getLogger(__name__)
PROBE_TIMEOUT_S = 300

# Installed first by a trusted probe script: `loaded` collects the ISA probe libraries that load (paths in the
# cache folder), which a run on the same cache need not spawn a process to load again (judge.child).
RECORD_LOADED_PROBES = """
import os
from torch._inductor import cpu_vec_isa
from torch._inductor.runtime.cache_dir_utils import cache_dir
loaded = []
probe = getattr(cpu_vec_isa.VecISA, "_probe_load", None)  # torch before 2.13 loads its probes inline: none kept
def recording_probe(self, output_path):
    ok = probe(self, output_path)
    if ok:
        loaded.append(os.path.relpath(output_path, cache_dir()))
    return ok
if probe is not None:
    cpu_vec_isa.VecISA._probe_load = recording_probe
"""

# The ISA the check picks (it builds and loads the probes, the ISA features' too), then the one Inductor picks
# when told to trust the CPU.
PROBE_SCRIPT = RECORD_LOADED_PROBES + """
import json
from torch._inductor import config
probed = str(cpu_vec_isa.pick_vec_isa())
config.cpp.vec_isa_ok = True
cpu_vec_isa.valid_vec_isa_list.cache_clear()
claimed = str(cpu_vec_isa.pick_vec_isa())
print("RESULT " + json.dumps({"probed": probed, "claimed": claimed, "loaded": sorted(set(loaded))}))
"""


def run_probe_script(script: str, args: list[str], env: dict[str, str], timeout: float, what: str,
                     nice: int = 0) -> dict:
    """Run trusted `script` (no learner code) in a fresh interpreter, in a private home, with `env` over the runs'
    base environment, `nice` steps below this process's CPU priority; the JSON object it printed after "RESULT ".
    RuntimeError when it failed (`what` failed)."""
    with tempfile.TemporaryDirectory(prefix="practice-probe-home-") as home:
        full_env = {**BASE_ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TMPDIR": home,
                    "PYTHONPATH": CODE_ROOT, **env}
        done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {CODE_ROOT!r})\n"
                               + script, *args], env=full_env, cwd=home, capture_output=True, text=True,
                              timeout=timeout, preexec_fn=(lambda: os.nice(nice)) if nice else None)
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{what} failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def skip_check_env() -> dict[str, str]:
    """The environment that skips the ISA check where that is known to be right here, else nothing; with it, the
    probe libraries (of the ISA features, which Inductor checks still) that are known to load from the shared
    cache (`judge.child` then spawns no process to load each again)."""
    found = _probe_result(inductor_cache_dir()) or {}
    return isa_env(bool(found) and found["probed"] == found["claimed"], found.get("loaded"))


@functools.cache
def _probe_result(cache_dir: str) -> dict | None:
    """{probed, claimed, loaded} for this configuration: remembered beside the cache, else probed now."""
    memo = Path(cache_dir) / f"practice-vec-isa-{config_key()}.json"
    try:
        found = json.loads(memo.read_text(encoding="utf-8"))
        if isinstance(found.get("probed"), str) and found["probed"] and isinstance(found.get("claimed"), str):
            return found
    except (OSError, ValueError, AttributeError):
        pass
    try:
        found = _probe(cache_dir)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
        log.warning("Inductor's vector-ISA check stays on: the probe failed (%s)", exc)
        return None
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    partial = memo.with_name(f"{memo.name}.{os.getpid()}")
    partial.write_text(json.dumps(found), encoding="utf-8")
    partial.replace(memo)  # whole or absent, whichever process probed first
    return found


def _probe(cache_dir: str) -> dict:
    return run_probe_script(PROBE_SCRIPT, [], {"TORCHINDUCTOR_CACHE_DIR": cache_dir}, PROBE_TIMEOUT_S,
                            "the vector-ISA probe")
