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


def interpreter() -> str:
    """The interpreter a worker runs: this one, by the path that keeps its environment.

    Only the folders are resolved, never the file itself: a virtualenv's `bin/python` is a link to the base
    interpreter, and started by the link's target Python finds no `pyvenv.cfg`, so it would import the base
    installation's packages (another torch, or none) instead of the virtualenv's, and every kernel the trusted
    layers hold (compiled by this environment's torch) would miss."""
    return os.path.join(os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable))


def python_roots() -> list[str]:
    """The folders the interpreter and its site-packages live in (bound read-only at the same path)."""
    roots = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    for exe in (os.path.realpath(sys.executable), interpreter()):
        if not any(exe.startswith(r + os.sep) for r in roots):
            roots.add(os.path.dirname(exe))
    return sorted(r for r in roots if not any(r != o and r.startswith(o + os.sep) for o in roots))
