"""The backends by name: which can run here, and building one. (base.py knows none of them.)"""

from __future__ import annotations

from sandbox.base import Sandbox, SandboxError
from sandbox.limits import Program

BACKENDS = ("none", "local", "bwrap", "docker", "prestarted")
# Plain processes (of the caller's user, or of a uid of their own): a server runs them only when told it may.
UNISOLATED = ("none", "local", "prestarted")
# What every command and PRACTICE_SANDBOX accept: a backend, or auto, the command's own default (a server's and
# a worker's: bwrap where it runs; one grading's: the background judge's warm local processes, else none).
SANDBOXES = ("auto", *BACKENDS)


def unavailable_reason(name: str) -> str | None:
    """None if backend `name` can run on this machine now, else why not (for 'auto' and startup messages)."""
    if name == "bwrap":
        from sandbox.bwrap_backend import available

        return available()
    if name == "docker":
        from sandbox.docker_backend import available

        return available()
    return None if name in UNISOLATED else f"unknown sandbox '{name}'"


def get_sandbox(name: str, program: Program, **options) -> Sandbox:
    """Build the backend called `name` ("none", "local", "bwrap", "docker" or "prestarted") running `program`."""
    if name == "none":
        from sandbox.subprocess_backend import SubprocessSandbox

        return SubprocessSandbox(program, **options)
    if name == "local":
        from sandbox.local_backend import LocalSandbox

        return LocalSandbox(program, **options)
    if name == "prestarted":
        from sandbox.prestarted import PrestartedSandbox

        return PrestartedSandbox(program, **options)
    if name == "bwrap":
        from sandbox.bwrap_backend import BwrapSandbox

        return BwrapSandbox(program, **options)
    if name == "docker":
        from sandbox.docker_backend import DockerSandbox

        return DockerSandbox(program, **options)
    raise SandboxError(f"unknown sandbox '{name}'; choose one of: {', '.join(BACKENDS)}")
