"""The verifier's line to the runner: requests out (relayed by the trusted side), answers in, and the replay cache.

A `RunnerClient` sends each request on the verifier's result channel and reads JSON lines (`sandbox.jsonlines`)
from its stdin until the answer with that request's id arrives, the runner is reported gone, or the deadline
passes. Nothing it reads is trusted: each answer is only a dict for the caller to check.
"""

from __future__ import annotations

import json
import os
import select
import time

from judge.checks.failures import CheckFailure
from judge.remote.failures import LearnerError, Protocol, RunnerGone, gone_end, gone_reason
from judge.reports.i18n import T
from judge.reports.report import Verdict
from judge.shared import phases
from judge.shared.protocol import Request, RunnerEnd, RunnerSays, TrustedSays, VerifierSays
from sandbox.jsonlines import Splitter, parse_line

MAX_LINE = 16 * 1024 * 1024
MAX_NOTES = 256  # notes one request's answer may carry (judge.runner_side.runner.tell_verifier)


class RunnerClient:
    """Requests go out on the verifier's result channel (relayed by the trusted side); answers come on stdin."""

    def __init__(self, send, in_fd: int, deadline: float, buffered: bytes = b""):
        self._send, self._fd, self.deadline = send, in_fd, deadline
        self._lines = Splitter()
        self._ready: list[bytes] = self._lines.feed(buffered) if buffered else []
        self._next = 0
        self.gone: str | T | None = None
        self.gone_end = RunnerEnd.CLOSED  # why it is gone, once `gone` is set
        self.loaded: dict | None = None
        # Replay: a test that repeats, from a fresh compiler state, the compile calls an earlier test made
        # (same target, options, sessions, and argument shapes and dtypes) gets the answers the runner gave
        # then; nothing reaches the runner until the test asks something new (see `request`).
        self.answers: dict[tuple, dict] = {}
        self.history: tuple | None = ()  # this test's replay keys since the reset; None once it asked another thing
        self.replayed: list[tuple[str, dict, dict]] = []  # (op, fields, answer) answered here, not yet sent
        self.needs_reset = False
        self.sent_since_reset = False
        self.sessions: dict[str, int] = {}  # session name -> its order of first use since the reset

    def wait_loaded(self) -> bool:
        """Wait for the runner to import the learner's module: True if it did."""
        while self.loaded is None:
            try:
                message = self._read()
            except CheckFailure:
                return False
            if message.get("type") in (RunnerSays.LOADED, RunnerSays.LOAD_ERROR):
                self.loaded = message
            elif message.get("type") == TrustedSays.RUNNER_GONE:
                self.gone, self.gone_end = gone_reason(message), gone_end(message)
                return False
        return self.loaded.get("type") == RunnerSays.LOADED

    def release_runner(self) -> None:
        """Nothing more will be asked of the runner: the trusted side closes its input and it ends (its time limit
        stops counting); a later request fails as if it had ended."""
        self._send(VerifierSays.RUNNER_RELEASED)
        self.gone = T("your code's process was released")

    def reset(self) -> None:
        """A fresh compiler state in the runner, sent with the first request that reaches it."""
        self.needs_reset, self.sent_since_reset = True, False
        self.history, self.replayed, self.sessions = (), [], {}

    def session_order(self, name: str) -> int:
        """The order in which compile session `name` was first used since the reset (part of a replay key)."""
        return self.sessions.setdefault(name, len(self.sessions))

    def request(self, op: Request | str, *, replay_key: tuple | None = None, **fields) -> dict:
        """Send one request and return its answer.

        `replay_key` (what the answer depends on, for a request whose answer is the same for the same key
        from a fresh compiler state): if this test's keys so far, this one included, are those of an earlier
        test, the earlier answer is returned and the request is kept back; a later request that is not
        replayed first sends what was kept back, and the runner must answer it as before."""
        op = Request(op).value
        if replay_key is not None and self.history is not None:
            key = self.history + (replay_key,)
            if key in self.answers:
                self.history = key
                self.replayed.append((op, fields, self.answers[key]))
                return self.answers[key]
        self._catch_up()
        answer = self._request(op, **fields)
        if replay_key is not None and self.history is not None:
            self.history += (replay_key,)
            if not answer.get("error"):
                self.answers[self.history] = answer
        else:
            self.history = None  # anything else may change what later answers depend on
        return answer

    def _catch_up(self) -> None:
        """Bring the runner to where this test's replayed answers say it is."""
        if self.needs_reset:
            self.needs_reset = False
            self._request(Request.RESET)
        replayed, self.replayed = self.replayed, []
        for op, fields, before in replayed:
            again = self._request(op, **fields)
            if _replay_shape(again) != _replay_shape(before):
                raise LearnerError(T("your code compiled differently when the same call was made again from a "
                                     "fresh compiler state (does it keep state between calls?); it must compile the "
                                     "same way each time"))

    def _request(self, op: Request | str, **fields) -> dict:
        self.sent_since_reset = True
        if self.gone:
            raise RunnerGone(self.gone, self.gone_end)
        self._next += 1
        ident = self._next
        self._send(VerifierSays.RUNNER_REQUEST, request={"id": ident, "op": Request(op).value, **fields})
        with phases.span(f"verifier.waits_for_runner.{Request(op).value}"):
            return self._answer(ident)

    def _answer(self, ident: int) -> dict:
        """Read until the answer to request `ident` arrives (its notes collected on the way)."""
        notes: list = []
        while True:
            message = self._read()
            kind = message.get("type")
            if kind == TrustedSays.RUNNER_GONE:
                self.gone, self.gone_end = gone_reason(message), gone_end(message)
                raise RunnerGone(self.gone, self.gone_end)
            if kind in (RunnerSays.LOADED, RunnerSays.LOAD_ERROR):
                self.loaded = message
                continue
            if kind == RunnerSays.NOTE and message.get("id") == ident:
                if len(notes) >= MAX_NOTES:
                    raise Protocol(T("your code called the judge's objects more than {n} times in one request",
                                     n=MAX_NOTES))
                notes.append(message.get("value"))
                continue
            if kind == RunnerSays.RESPONSE and message.get("id") == ident:
                message["notes"] = notes  # what arrived as notes, never a field of the runner's answer
                return message
            # anything else (an answer to an earlier request that timed out) is dropped

    def _read(self) -> dict:
        """The next message on stdin, split and decoded by the project's one JSON-lines reader."""
        while not self._ready:
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.gone, self.gone_end = T("your code did not answer in time"), RunnerEnd.SILENT
                raise RunnerGone(self.gone, self.gone_end, verdict=Verdict.TIME_LIMIT)
            ready, _, _ = select.select([self._fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                self.gone, self.gone_end = T("your code's process ended"), RunnerEnd.CLOSED
                raise RunnerGone(self.gone, self.gone_end)
            self._ready = [line for line in self._lines.feed(chunk) if line.strip()]
            if len(self._lines.buffer) > MAX_LINE:
                self.gone, self.gone_end = T("your code sent an answer larger than the judge reads"), RunnerEnd.PROTOCOL
                raise Protocol(self.gone)
        line = self._ready.pop(0)
        try:
            return parse_line(line)
        except ValueError:  # not JSON, or JSON that is not an object
            raise Protocol(T("your code's process sent something that is not a message")) from None


def _replay_shape(answer: dict) -> tuple:
    """What a replayed compile answer must match when the runner answers the same call again."""
    return (json.dumps(answer.get("graphs"), sort_keys=True), answer.get("ran"), bool(answer.get("error")))
