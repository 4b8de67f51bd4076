"""The sandbox interface every backend implements.

A backend runs `judge.child` on a job (JSON) in isolation and returns a `RunOutcome`: what the
child wrote on its result channel (JSON lines, parsed as data, never unpickled), how it ended,
and its truncated output. Turning an outcome into a verdict is the judge's job
(`judge.outcome`), not the backend's.
"""

from __future__ import annotations

import abc
import json
from dataclasses import dataclass, field
from typing import Callable

from judge.exercise import Limits

OnMessage = Callable[[dict], None]
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


class SandboxError(Exception):
    """The sandbox itself failed (not the submission): it is misconfigured or unavailable."""


@dataclass
class RunOutcome:
    messages: list[dict] = field(default_factory=list)
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    cpu_exceeded: bool = False
    memory_exceeded: bool = False
    output_exceeded: bool = False
    malformed: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    cpu_s: float | None = None  # CPU time of the run's processes, where the backend can measure it


class Sandbox(abc.ABC):
    """Runs one grading job at a time per call; implementations may keep warm workers."""

    name: str = "abstract"

    @abc.abstractmethod
    def run(self, job_json: str, limits: Limits, on_message: OnMessage | None = None) -> RunOutcome:
        """Run `judge.child` on `job_json` within `limits`; never raises for anything the submission does."""

    def describe(self) -> str:
        return self.name

    def close(self) -> None:
        """Stop workers; the default has none."""


class MessageParser:
    """Splits the result channel into JSON lines, keeping what is malformed for the report."""

    def __init__(self, outcome: RunOutcome, on_message: OnMessage | None):
        self._outcome = outcome
        self._on_message = on_message
        self._buffer = b""

    def feed(self, data: bytes) -> None:
        self._buffer += data
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._line(line)
        if len(self._buffer) > MAX_MESSAGE_BYTES:
            self._outcome.malformed.append("result message too long")
            self._buffer = b""

    def close(self) -> None:
        if self._buffer.strip():
            self._line(self._buffer)
        self._buffer = b""

    def _line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError):
            self._outcome.malformed.append(line[:200].decode("utf-8", "replace"))
            return
        if not isinstance(message, dict):
            self._outcome.malformed.append(line[:200].decode("utf-8", "replace"))
            return
        self._outcome.messages.append(message)
        if self._on_message is not None:
            self._on_message(message)


BACKENDS = ("none", "bwrap", "docker")


def unavailable_reason(name: str) -> str | None:
    """None if backend `name` can run on this machine now, else why not (for 'auto' and startup messages)."""
    if name == "bwrap":
        from sandbox.bwrap_backend import available

        return available()
    if name == "docker":
        from sandbox.docker_backend import available

        return available()
    return None if name == "none" else f"unknown sandbox '{name}'"


def get_sandbox(name: str, **options) -> Sandbox:
    """Build the backend called `name` ("none", "bwrap" or "docker")."""
    if name == "none":
        from sandbox.subprocess_backend import SubprocessSandbox

        return SubprocessSandbox(**options)
    if name == "bwrap":
        from sandbox.bwrap_backend import BwrapSandbox

        return BwrapSandbox(**options)
    if name == "docker":
        from sandbox.docker_backend import DockerSandbox

        return DockerSandbox(**options)
    raise SandboxError(f"unknown sandbox '{name}'; choose one of: {', '.join(BACKENDS)}")
