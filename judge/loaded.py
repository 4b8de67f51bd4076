"""The modules the child harness loaded for this run (the learner's, the reference, the starter)."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType


@dataclass
class Loaded:
    submission: ModuleType | None = None
    reference: ModuleType | None = None
    starter: ModuleType | None = None
    entry_point: str = ""


LOADED = Loaded()


def load_module(name: str, path: Path) -> ModuleType:
    """Import the file at `path` as module `name` (registered in sys.modules, so pickling and Dynamo work)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
