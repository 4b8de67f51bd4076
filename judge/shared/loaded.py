"""The exercise's own modules in the verifier (reference, starter, public; imported on demand), and the
import helpers the runner uses for the learner's file. A grading's `Loaded` lives in its
`judge.remote.GradingContext` (`grading.exercise`)."""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType


@dataclass
class Loaded:
    """The exercise's modules of one grading, kept as source until a test asks for one."""

    entry_point: str = ""
    # name -> source text of an exercise module ("reference", "starter", "exercise_public"), kept in memory:
    # they never touch the verifier's disk, and are imported only when a test asks for them.
    sources: dict[str, str] = field(default_factory=dict)
    modules: dict[str, ModuleType] = field(default_factory=dict)

    def exercise_module(self, name: str) -> ModuleType:
        """The exercise's `name` module ("reference" or "starter"), imported from memory on first use."""
        if name not in self.modules:
            if name not in self.sources:
                raise LookupError(f"this exercise has no {name} module")
            self.modules[name] = load_source(name, self.sources[name])
        return self.modules[name]


def load_source(name: str, text: str) -> ModuleType:
    """Import `text` as module `name` (registered in sys.modules)."""
    module = types.ModuleType(name)
    module.__file__ = f"<exercise {name}>"
    sys.modules[name] = module
    try:
        exec(compile(text, module.__file__, "exec"), module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


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
