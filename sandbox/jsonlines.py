"""JSON lines, the one wire format of every channel: one object per line, read from bytes as they arrive.

Every reader of a channel splits with `Lines` and decodes with `parse_line`: the sandbox's result channel
(`sandbox.base.MessageParser`), a job's stdin in the child (`judge.child`) and the runner's requests.
"""

from __future__ import annotations

import json
import os


def parse_line(line: bytes | str) -> dict:
    """One line as a JSON object; ValueError (with what is wrong) for anything else."""
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise ValueError("a message must be a JSON object")
    return message


class Splitter:
    """Bytes in, complete lines out; what follows the last newline waits for more."""

    def __init__(self):
        self.buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        """The lines `data` completes (without their newline)."""
        self.buffer += data
        if b"\n" not in data:
            return []
        *lines, self.buffer = self.buffer.split(b"\n")
        return lines

    def rest(self) -> bytes:
        """What is left without a newline (at the end of the stream), emptying the buffer."""
        rest, self.buffer = self.buffer, b""
        return rest


class Lines:
    """The non-blank lines of a raw descriptor, read as they arrive (nothing buffered beyond the current line)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.splitter = Splitter()
        self.ready: list[bytes] = []

    @property
    def buffer(self) -> bytes:
        """What was read from the descriptor and not yet returned."""
        return b"".join(line + b"\n" for line in self.ready) + self.splitter.buffer

    def readline(self) -> bytes | None:
        """The next line (without its newline), the unterminated rest at the end, or None once it is empty."""
        while not self.ready:
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return self.splitter.rest() or None
            self.ready = self.splitter.feed(chunk)
        return self.ready.pop(0)

    def __iter__(self):
        while (line := self.readline()) is not None:
            if line.strip():
                yield line
