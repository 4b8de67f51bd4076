"""The vector-ISA probe libraries a fresh process's empty Inductor cache may start with (shared by the runner's
fresh processes and the loader: judge/checks/artifact_processes.py, judge/loader_side/loader.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# A fresh process decides the vector ISA itself, whatever a sandbox's layer told the run (TORCHINDUCTOR_VEC_ISA_OK=1:
# the ISA check skipped): torch reads the variable at import into `cpp.vec_isa_ok`, part of every FX-graph cache
# key, so the build process, the verifier's own and the loader look up the same keys only if they agree on it.
ISA_UNDECIDED = {"TORCHINDUCTOR_VEC_ISA_OK": ""}


SEEDED_ENV = "PRACTICE_VEC_ISA_SEEDED"  # the copies `seed_isa_probes` made, for the fresh process it made them for


def seed_isa_probes(cache_dir: Path) -> list[str]:
    """Copy into a fresh process's empty cache the vector-ISA probe libraries known to load from this process's
    (PRACTICE_VEC_ISA_LOADED): Inductor checks the CPU's features by compiling them (~1.8 s a process). They
    hold no compiled graph or kernel of any function, so the cache is still empty of what the exercise is about.
    The copies made (paths relative to `cache_dir`): each is byte for byte a library known to load here, so the
    process may trust it to load without spawning a process to try (`torch_patches.trust_known_isa_loads`)."""
    source = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    seeded = []
    for rel in filter(None, os.environ.get("PRACTICE_VEC_ISA_LOADED", "").split(",")):
        found, target = Path(source or "/nonexistent") / rel, cache_dir / rel
        if rel.endswith(".so") and ".." not in Path(rel).parts and found.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found, target)
            seeded.append(rel)
    return seeded
