"""Where one grading's time goes: named spans of CPU and wall time, recorded only when asked.

The runner and the verifier wrap their phases (importing the learner's file, each request, rebuilding a graph,
each check, the cost section) in `span(name)`. With `PRACTICE_PHASES` naming a folder in the process's
environment, each span is appended to `<folder>/<role>-<pid>.jsonl` as {"name", "cpu", "wall"}; without it a span
costs one dictionary lookup. Nothing here is read back by a grading: `benchmarks/grading_phases.py` reads the
files. Spans nest; a reader that adds them up must add only one level.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager

ENV = "PRACTICE_PHASES"
_role = {"name": "process"}


def set_role(name: str) -> None:
    """Name this process's file (`runner`, `verifier`) once it knows which side it is."""
    _role["name"] = name


@contextmanager
def span(name: str):
    folder = os.environ.get(ENV)
    if not folder:
        yield
        return
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        yield
    finally:
        record = {"name": name, "cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}
        path = os.path.join(folder, f"{_role['name']}-{os.getpid()}.jsonl")
        try:
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")
        except OSError:  # measuring never fails a grading
            pass
