"""The verifier's line to the runner: requests out (relayed by the trusted side), answers in, and the replay cache.

A `RunnerClient` sends each request on the verifier's result channel and reads JSON lines (`sandbox.jsonlines`)
from its stdin until the answer with that request's id arrives, the runner is reported gone, or the deadline
passes. Nothing it reads is trusted: each answer is only a dict for the caller to check.

Two ways a test's compiles avoid compiling again what an earlier test compiled:
- replay (`request(..., replay_key=...)`): a test that starts, from a fresh compiler state, with the calls an
  earlier test made gets that test's answers without asking the runner;
- shared sessions (`shared_compile`, for `Ref.compile(reuse=True)`): a test that asks for nothing else goes on
  from the runner's compiler state as the tests before it left it (no reset), in one compile session per target
  and options, so that Dynamo's own guards decide what runs again and what compiles. The state is dropped (the
  runner reset, a new generation of sessions) before a test that asks anything else, before a test where the
  shared sessions hold `MAX_SHARED_GRAPHS` graphs, and once a call compiled again for a signature it had already
  compiled (its code depends on more than its arguments' shapes: a counter, a global).
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
# Graphs the shared sessions may hold when a test starts on them, below Dynamo's recompile_limit (8 per function):
# a test that reaches the limit anyway fails a call, which is then made again from a fresh state (drop_shared).
MAX_SHARED_GRAPHS = 6
SHARED = "shared"  # how a shared session's name starts (the others are "s1", "s2", ...: GradingContext.new_session)
NEUTRAL = (Request.RESET.value, Request.TAMPER.value)  # requests that leave the compiler state as it was
LOAD_WAIT_S = 300.0  # how long a load may take past the runner's deadline (the loader has the runner's limits)


class SharedSession:
    """One compile session shared between tests since the runner's last reset: the graphs it captured (the
    runner's answers, as each verifier-side session accepted them), and the signatures it compiled for."""

    def __init__(self, name: str):
        self.name = name
        self.graphs: list[dict] = []
        self.signatures: set[str] = set()


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
        # Shared sessions (`shared_compile`): valid for one generation, i.e. until the runner's next reset.
        self.generation = 0
        self.shared: dict[str, SharedSession] = {}
        self.fresh_since_reset = True  # the runner's state is not the shared sessions' alone (before a first reset:
        # what importing the learner's file compiled)
        self.kept_state = False  # this test goes on from the state earlier tests left (its reset was skipped)
        self.carried = False  # ... and that state held graphs of theirs
        self.retired = False  # the shared state must not reach another test (see the module's docstring)

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
        self.kept_state = self.carried = False

    def shared_compile(self, key: str, signature: str, **fields) -> tuple[int, SharedSession, dict]:
        """One compile call in the shared session `key` (a digest of the target and its options): (the generation,
        the session as it stands, the answer). Sent with no reset where this test has asked nothing else and the
        shared state may be kept (see the module's docstring); the caller adds the graphs it accepted."""
        if self.needs_reset and not self.fresh_since_reset and not self.replayed and not self.retired \
                and sum(len(s.graphs) for s in self.shared.values()) < MAX_SHARED_GRAPHS:
            self.needs_reset, self.kept_state = False, True
            self.carried = any(s.graphs for s in self.shared.values())
        self._catch_up()
        session = self.shared.setdefault(key, SharedSession(f"{SHARED}{self.generation}.{key}"))
        answer = self._request(Request.COMPILE, session=session.name, **fields)
        self.history = None  # the state is not a fresh one: nothing after this is replayed
        graphs = answer.get("graphs")
        if signature in session.signatures and isinstance(graphs, list) and graphs:
            self.retired = True  # compiled again for a signature it had compiled: more than shapes decide
        session.signatures.add(signature)
        return self.generation, session, answer

    def drop_shared(self) -> None:
        """Reset the runner now (a new generation of shared sessions) where this test goes on from what earlier tests
        left: a shared call that failed is then made again from a fresh state, so that their state never decides
        a check. (Nothing else of this test reached the runner: `carried` ends at any other request.)"""
        if self.carried:
            self.needs_reset = True
            self._catch_up()

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
        if self.kept_state and op not in NEUTRAL:  # state earlier tests left must not reach this request
            self.needs_reset, self.kept_state, self.carried = True, False, False
        if replay_key is not None and self.history is not None:
            key = self.history + (replay_key,)
            if key in self.answers:
                self.history = key
                self.replayed.append((op, fields, self.answers[key]))
                return self.answers[key]
        self._catch_up()
        self.fresh_since_reset |= op not in NEUTRAL
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
            self.generation += 1
            self.shared, self.fresh_since_reset, self.retired = {}, False, False
            self.kept_state = self.carried = False
        replayed, self.replayed = self.replayed, []
        self.fresh_since_reset |= bool(replayed)
        for op, fields, before in replayed:
            again = self._request(op, **fields)
            if _replay_shape(again) != _replay_shape(before):
                raise LearnerError(T("your code compiled differently when the same call was made again from a "
                                     "fresh compiler state (does it keep state between calls?); it must compile the "
                                     "same way each time"))

    def load_artifact(self, artifact: str, inputs: list[dict], modules: dict[str, str], kind: str = "aot") -> dict:
        """Ask the trusted side to load `artifact` (base64 bytes; `kind`, what they are: judge.shared.jobs.LoaderJob)
        in a sandboxed run of its own and call what it holds on `inputs` (wire tensors), with `modules`
        ({name: source}) importable there (judge/parent/loading.py): its `artifact_loaded` message, {"report": the
        loader's report (untrusted) or None, "end": how it ended then}.
        The runner is neither asked nor waited for; its end is noted on the way."""
        self._next += 1
        ident = self._next
        self._send(VerifierSays.LOAD_ARTIFACT, id=ident, artifact=artifact, inputs=inputs, modules=modules,
                   artifact_kind=kind)
        deadline = max(self.deadline, time.monotonic() + LOAD_WAIT_S)
        with phases.span("verifier.waits_for_loader"):
            while True:
                message = self._next_message(deadline)
                if message is None:
                    return {"report": None, "end": {"cause": RunnerEnd.SILENT.value,
                                                    "reason": "the process loading the artifact did not answer"}}
                kind = message.get("type")
                if kind == TrustedSays.ARTIFACT_LOADED and message.get("id") == ident:
                    return message
                if kind == TrustedSays.RUNNER_GONE and not self.gone:
                    self.gone, self.gone_end = gone_reason(message), gone_end(message)
                elif kind in (RunnerSays.LOADED, RunnerSays.LOAD_ERROR):
                    self.loaded = message

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
        message = self._next_message(self.deadline)
        if message is None:
            self.gone, self.gone_end = T("your code did not answer in time"), RunnerEnd.SILENT
            raise RunnerGone(self.gone, self.gone_end, verdict=Verdict.TIME_LIMIT)
        return message

    def _next_message(self, deadline: float) -> dict | None:
        """The next message on stdin, or None once `deadline` (time.monotonic) has passed."""
        while not self._ready:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
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
