"""The sandbox interface every backend implements.

A backend runs a `Program` (a module named by the caller) on a job (JSON) in isolation and returns a
`RunOutcome`: what the child wrote on its result channel (JSON lines, parsed as data, never unpickled),
how it ended, and its truncated output. What a run means is the caller's business, not the backend's:
this package imports nothing outside itself.
"""

from __future__ import annotations

import abc
import json
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from sandbox.jsonlines import Splitter, parse_line
from sandbox.limits import Limits

OnMessage = Callable[[dict], None]
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


class SandboxError(Exception):
    """The sandbox itself failed (not the submission): it is misconfigured or unavailable."""


@dataclass
class RunOutcome:
    messages: list[dict] = field(default_factory=list)
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False  # the wall clock ended it (sandbox.clock): it sat idle too long, or ...
    starved: bool = False  # ... it ran into the wall clock's last word, the machine too loaded: the grader's failure
    cpu_exceeded: bool = False  # its CPU time limit ended it: the learner's TIME_LIMIT
    memory_exceeded: bool = False
    output_exceeded: bool = False
    malformed: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    cpu_s: float | None = None  # CPU time of the run's processes, where the backend can measure it
    waiting_s: float | None = None  # its threads' waits for a CPU (sandbox.clock), where the backend can see them
    idle_limit_s: float | None = None  # the idle limit that ended it, where one did (sandbox.clock)


class Inbox:
    """Messages for a running child, written to its stdin by a thread of their own (never blocking the caller).

    Two runs talk to each other only through the trusted side: what one writes on its result channel is
    handed to the other's inbox, so a slow or stuck reader never stalls the thread that read the message.
    `owes`, where the sender keeps count, says whether the run owes it an answer now: the run's clock then holds
    the time it sits idle while owing to a tighter limit (sandbox.clock).
    """

    def __init__(self, owes: Callable[[], bool] | None = None):
        self.owes = owes
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.closed = threading.Event()

    def send(self, message: dict) -> None:
        """Queue one JSON message (a line on the child's stdin)."""
        if not self.closed.is_set():
            self._queue.put((json.dumps(message) + "\n").encode())

    def close(self) -> None:
        """End the child's stdin once what is queued is written."""
        self.closed.set()
        self._queue.put(None)

    def attach(self, write_fd: int, first: bytes = b"") -> None:
        """Start writing to `write_fd` (owned by the inbox from now on), `first` before any message."""
        self._thread = threading.Thread(target=self._write, args=(write_fd, first), name="sandbox-inbox",
                                        daemon=True)
        self._thread.start()

    def _write(self, fd: int, first: bytes) -> None:
        try:
            view = memoryview(first)
            while view:
                view = view[os.write(fd, view):]
            while True:
                data = self._queue.get()
                if data is None:
                    return
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
        except OSError:  # the child is gone
            self.closed.set()
        finally:
            os.close(fd)


class Sandbox(abc.ABC):
    """Runs one grading job at a time per call; implementations may keep warm workers."""

    name: str = "abstract"

    @abc.abstractmethod
    def run(self, job_json: str, limits: Limits, on_message: OnMessage | None = None, *,
            inbox: Inbox | None = None, pool: str = "default") -> RunOutcome:
        """Run a job on `job_json` within `limits`; never raises for anything the submission does.

        `inbox`, when given, feeds the child's stdin while it runs; `pool` names the warm pool that serves
        the run (runs from different pools never wait for each other's workers).
        """

    def facts(self) -> dict[str, str | int | float]:
        """What a report says of this backend besides its name (pool size, versions, ...); the judge words it."""
        return {}

    def describe(self) -> str:
        """This backend in one line of English, for logs (reports word it in the learner's language)."""
        facts = ", ".join(f"{key} {value}" for key, value in self.facts().items())
        return f"{self.name} ({facts})" if facts else self.name

    def close(self) -> None:  # noqa: B027 - a hook: a sandbox without workers has nothing to stop
        """Stop workers; the default has none."""


class MessageParser:
    """Splits the result channel into JSON lines, keeping what is malformed for the report."""

    def __init__(self, outcome: RunOutcome, on_message: OnMessage | None):
        self._outcome = outcome
        self._on_message = on_message
        self._lines = Splitter()

    def feed(self, data: bytes) -> None:
        for line in self._lines.feed(data):
            self._line(line)
        if len(self._lines.buffer) > MAX_MESSAGE_BYTES:
            self._outcome.malformed.append("result message too long")
            self._lines.rest()

    def close(self) -> None:
        rest = self._lines.rest()
        if rest.strip():
            self._line(rest)

    def _line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = parse_line(line)
        except ValueError:
            self._outcome.malformed.append(line[:200].decode("utf-8", "replace"))
            return
        self._outcome.messages.append(message)
        if self._on_message is not None:
            self._on_message(message)
