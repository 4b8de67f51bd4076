"""The vector-ISA probe libraries a fresh process's empty Inductor cache may start with (shared by the runner's
fresh processes and the loader: judge/checks/artifact_processes.py, judge/loader_side/loader.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def seed_isa_probes(cache_dir: Path) -> None:
    """Copy into a fresh process's empty cache the vector-ISA probe libraries known to load from this process's
    (PRACTICE_VEC_ISA_LOADED): Inductor checks the CPU's features by compiling them (~1.8 s a process). They
    hold no compiled graph or kernel of any function, so the cache is still empty of what the exercise is about."""
    source = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    for rel in filter(None, os.environ.get("PRACTICE_VEC_ISA_LOADED", "").split(",")):
        found, target = Path(source or "/nonexistent") / rel, cache_dir / rel
        if rel.endswith(".so") and ".." not in Path(rel).parts and found.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found, target)
