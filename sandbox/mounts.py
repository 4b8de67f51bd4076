"""What a worker sees of the host: the interpreter's folders and the code packages, bound read-only."""

from __future__ import annotations

import os
import sys

from sandbox.limits import Program

CODE_DIR = "/opt/practice"  # where the code packages appear inside a worker
CODE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding this package


def packages(program: Program) -> tuple[str, ...]:
    """The top-level packages a worker needs: this one and the program's (bound read-only under CODE_DIR)."""
    return tuple(dict.fromkeys(("sandbox", program.module.split(".")[0])))


def python_roots() -> list[str]:
    """The folders the interpreter and its site-packages live in (bound read-only at the same path)."""
    roots = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    exe = os.path.realpath(sys.executable)
    if not any(exe.startswith(r + os.sep) for r in roots):
        roots.add(os.path.dirname(exe))
    return sorted(r for r in roots if not any(r != o and r.startswith(o + os.sep) for o in roots))


def worker_env(program: Program) -> dict[str, str]:
    """The whole environment of a confined worker (bwrap, docker): the program's, a minimal PATH and HOME."""
    return {**program.environment(), "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp"}
