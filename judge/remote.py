"""Verifier side of the boundary: ask the runner for graphs and results, then run the graphs here.

Hidden tests get a `RemoteEntry` as their `entry` fixture. Compiling it (`entry.compile(fullgraph=True)`)
gives a `RemoteCompiled`; calling that with the test's own inputs sends the runner only *example* inputs
(same shapes and dtypes, other values), receives the graph Dynamo captured, rebuilds it from the allowlist
and runs it here on the test's inputs. The numbers a test compares are therefore computed by the verifier;
the runner's answers can only make a check fail or explain why it failed.
"""

from __future__ import annotations

import json
import os
import re
import select
import time
from dataclasses import dataclass, field

import torch
import torch.fx
import torch.utils._pytree as pytree

from judge import ir, wire
from judge.checks.breaks import graph_break_message
from judge.checks.failures import CheckFailure, CompileError, Forbidden, GraphBreak, WrongAnswer
from judge.checks.sealed import run_sealed, sealed_module
from judge.i18n import T, in_code
from judge.protocol import ErrorKind, Request, RunnerEnd, RunnerSays, TrustedSays, VerifierSays
from judge.report import ErrorDiagnostic, GraphBreakDiagnostic, SourceLocation, Verdict

MAX_LINE = 16 * 1024 * 1024
MAX_NOTES = 256  # notes one request's answer may carry (judge.runner.tell_verifier)


class RunnerGone(CheckFailure):
    """The runner ended (or stopped answering) before it answered; the trusted side knows why."""

    verdict = Verdict.RUNTIME_ERROR

    def __init__(self, message, runner_end: RunnerEnd, **kwargs):
        super().__init__(message, **kwargs)
        self.runner_end = runner_end  # why, as data: sent with the check it fails (judge.protocol)


class LearnerError(CheckFailure):
    """The learner's code raised an exception in the runner."""

    verdict = Verdict.RUNTIME_ERROR


class Protocol(CheckFailure):
    """The runner answered something that is not of the protocol's form."""

    verdict = Verdict.RUNTIME_ERROR


class RunnerClient:
    """Requests go out on the verifier's result channel (relayed by the trusted side); answers come on stdin."""

    def __init__(self, send, in_fd: int, deadline: float, buffered: bytes = b""):
        self._send, self._fd, self.deadline = send, in_fd, deadline
        self._buffer = buffered
        self._next = 0
        self.gone: str | None = None
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
        return self.sessions.setdefault(name, len(self.sessions))

    def request(self, op: str, *, replay_key: tuple | None = None, **fields) -> dict:
        """Send one request and return its answer.

        `replay_key` (what the answer depends on, for a request whose answer is the same for the same key
        from a fresh compiler state): if this test's keys so far, this one included, are those of an earlier
        test, the earlier answer is returned and the request is kept back; a later request that is not
        replayed first sends what was kept back, and the runner must answer it as before."""
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

    def _request(self, op: str, **fields) -> dict:
        self.sent_since_reset = True
        if self.gone:
            raise RunnerGone(self.gone, self.gone_end)
        self._next += 1
        ident = self._next
        self._send(VerifierSays.RUNNER_REQUEST, request={"id": ident, "op": Request(op).value, **fields})
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
        while b"\n" not in self._buffer:
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
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE:
                self.gone, self.gone_end = T("your code sent an answer larger than the judge reads"), RunnerEnd.PROTOCOL
                raise Protocol(self.gone)
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError:
            raise Protocol(T("your code's process sent something that is not JSON")) from None
        if not isinstance(message, dict):
            raise Protocol(T("your code's process sent something that is not a message"))
        return message


def gone_reason(message: dict) -> T:
    """Why the runner is gone, from the trusted side's `runner_gone` message (judge.grading._gone_message)."""
    cause = RunnerEnd.of(message.get("cause"))
    if cause is RunnerEnd.START:
        return T("your code's process could not start")
    if cause is RunnerEnd.TIME:
        return T("your code ran out of time")
    if cause is RunnerEnd.MEMORY:
        return T("your code ran out of memory")
    if cause is RunnerEnd.OUTPUT:
        return T("your code printed too much")
    if cause is RunnerEnd.SIGNAL:
        return T("your code's process was killed by signal {signal}", signal=str(message.get("signal"))[:40])
    if cause is RunnerEnd.EXIT:
        return T("your code's process ended (exit code {code})", code=str(message.get("exit_code"))[:40])
    return T("your code's process ended")


def gone_end(message: dict) -> RunnerEnd:
    """The cause of a `runner_gone` message; one it does not name counts as the process having ended."""
    return RunnerEnd.of(message.get("cause")) or RunnerEnd.CLOSED


def runner_words(error: dict) -> T:
    """A message the runner wrote (its English, and its Chinese where it sent one); raw text otherwise."""
    message, zh = str(error.get("message", ""))[:2000], error.get("message_zh")
    if isinstance(zh, str) and zh:
        return T("{en}", zh="{said}", en=message, said=zh[:2000])
    return T("`{message}`", message=in_code(message))


YOUR_FUNCTION = T("your function")
YOUR_MODULE = T("your module")
CLIENT: dict = {}  # "client": the RunnerClient of this grading, "op_namespaces": allowed operator namespaces,
#                   "view": the compiler's view being collected (judge/compiler_view.py)


def client() -> RunnerClient:
    return CLIENT["client"]


def reset_runner() -> None:
    """A fresh Dynamo state in the runner (before each hidden test), sent with the test's first request."""
    if "client" in CLIENT:
        CLIENT["client"].reset()


def _replay_shape(answer: dict) -> tuple:
    """What a replayed compile answer must match when the runner answers the same call again."""
    return (json.dumps(answer.get("graphs"), sort_keys=True), answer.get("ran"), bool(answer.get("error")))


def _signature(encoded):
    """An encoded argument without tensor data: what a compile's answer may depend on (not values)."""
    if isinstance(encoded, dict):
        if "data" in encoded and "dtype" in encoded:
            return {k: v for k, v in encoded.items() if k != "data"}
        return {k: _signature(v) for k, v in encoded.items()}
    if isinstance(encoded, list):
        return [_signature(v) for v in encoded]
    return encoded


def _location(data) -> SourceLocation | None:
    try:
        return SourceLocation.model_validate(data) if data else None
    except ValueError:
        return None


def raise_learner_error(error: dict, what):
    """Turn the runner's description of a failure into the check failure it implies (never a pass).

    `what` (a T, or plain text such as code) names what was called, e.g. T("your function")."""
    if not isinstance(error, dict):
        raise Protocol(T("{what}: malformed error from your code's process", what=what))
    kind, message = error.get("kind"), str(error.get("message", ""))[:2000]
    loc = _location(error.get("location"))
    if kind == ErrorKind.GRAPH_BREAK:
        try:
            broke = GraphBreakDiagnostic.model_validate(error.get("diagnostic"))
        except ValueError:
            broke = GraphBreakDiagnostic(reason=message[:600], location=loc)
        raise GraphBreak(graph_break_message(broke, what), [broke])
    diag = ErrorDiagnostic(exc_type=str(error.get("type", "Error"))[:80], message=message, location=loc,
                           traceback=str(error.get("traceback", ""))[:4000])
    if kind == ErrorKind.COMPILE_ERROR:
        raise CompileError(T("{what}: torch.compile failed: `{error}: {detail}`", what=what,
                             error=in_code(diag.exc_type), detail=in_code(_first(message))), [diag])
    if kind == ErrorKind.MEMORY:
        raise CheckFailure(T("{what}: your code ran out of memory", what=what), [diag],
                           verdict=Verdict.MEMORY_LIMIT)
    if kind in (ErrorKind.PROTOCOL, ErrorKind.TOO_LARGE):
        raise Protocol(T("{what}: {message}", what=what, message=runner_words(error)))
    if loc:
        raise LearnerError(T("{what}: `{error}` at line {line} (`{code}`): `{detail}`", what=what,
                             error=in_code(diag.exc_type), line=loc.line, code=in_code(loc.text),
                             detail=in_code(_first(message))), [diag])
    raise LearnerError(T("{what}: `{error}: {detail}`", what=what, error=in_code(diag.exc_type),
                         detail=in_code(_first(message))), [diag])


def _first(text: str, n: int = 4) -> str:
    return "\n".join(text.strip().splitlines()[:n])[:800]


# ---------------------------------------------------------------- example inputs


def example_like(value):
    """A value of the same shape, dtype and device with other values: what the runner sees instead of a hidden
    input."""
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.dtype == torch.bool:
            return (torch.rand(t.shape) > 0.5).to(t.device)
        if t.is_floating_point() or t.is_complex():
            scale = float(t.abs().max()) if t.numel() else 1.0
            out = (torch.randn(t.shape, dtype=torch.float64) * (scale or 1.0)).to(t.dtype).to(t.device)
            return out.requires_grad_(value.requires_grad)
        lo, hi = (int(t.min()), int(t.max())) if t.numel() else (0, 0)
        return torch.randint(lo, hi + 1, t.shape, dtype=t.dtype).to(t.device)
    if isinstance(value, (list, tuple)):
        return type(value)(example_like(v) for v in value)
    if isinstance(value, dict):
        return {k: example_like(v) for k, v in value.items()}
    return value


def _encode_arg(value):
    if isinstance(value, Ref):
        return value.spec
    if isinstance(value, torch.fx.GraphModule):
        return {"graph": ir.to_ir(value)}
    if isinstance(value, (list, tuple)):
        return {"list" if isinstance(value, list) else "tuple": [_encode_arg(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": {k: _encode_arg(v) for k, v in value.items()}}
    return wire.encode(value)


@dataclass(frozen=True)
class Ref:
    """Something that lives in the runner: the entry point, a public object, a kept result."""

    spec: dict

    def __call__(self, *args, **kwargs):
        return call(self, *args, **kwargs)

    def compile(self, **options) -> RemoteCompiled:
        return RemoteCompiled(self, options)


def entry_ref() -> Ref:
    return Ref({"entry": True})


def public(name: str) -> Ref:
    return Ref({"public": name})


def learner(name: str) -> Ref:
    return Ref({"learner": name})


@dataclass
class EagerResult:
    value: object
    printed: str = ""
    kept: Ref | None = None
    type_name: str = ""  # the runner's name for the result's type when it came back as a Ref (not data)
    notes: list = field(default_factory=list)  # what the judge's objects sent while the call ran, in order


def call_printing(target: Ref, *args, what=YOUR_FUNCTION, keep: bool = False, **kwargs) -> EagerResult:
    """Call `target` eagerly in the runner on `args` (which the runner sees): its result and printed text.

    A result that is not data (a module, a function) comes back as a Ref to the object kept in the runner;
    with `keep`, `kept` is such a Ref even when the result is data (e.g. a GraphModule to run there later).
    """
    answer = client().request(Request.CALL, target=target.spec, args=_encode_arg(tuple(args)),
                              kwargs=_encode_arg(dict(kwargs)), keep=keep)
    if answer.get("error"):
        raise_learner_error(answer["error"], what)
    kept = Ref({"handle": str(answer["handle"])}) if keep and isinstance(answer.get("handle"), str) else None
    result = answer.get("result")
    type_name = str(result.get("type", ""))[:80] if isinstance(result, dict) and "handle" in result else ""
    return EagerResult(_result_with_type(result), str(answer.get("printed", ""))[:20000], kept, type_name,
                       list(answer.get("notes", [])))


def call(target: Ref, *args, what=YOUR_FUNCTION, **kwargs):
    """The result of calling `target` eagerly in the runner (see `call_printing`)."""
    return call_printing(target, *args, what=what, **kwargs).value


def state(target: Ref, what=YOUR_MODULE, *, graph_inputs: bool = False) -> dict[str, torch.Tensor]:
    """A copy of the state_dict of a module kept in the runner (the verifier's own tensors from then on).

    With `graph_inputs`, every parameter and buffer instead (non-persistent buffers too): what a captured
    graph of the module reads, for `compiled.state["target"]`."""
    answer = client().request(Request.STATE, target=target.spec, graph_inputs=graph_inputs)
    if answer.get("error"):
        raise_learner_error(answer["error"], what)
    found = answer.get("state")
    if not isinstance(found, dict):
        raise Protocol(T("malformed state"))
    return {str(k): _decode_result(v) for k, v in found.items()}


def load_state(target: Ref, tensors: dict[str, torch.Tensor], what=YOUR_MODULE) -> None:
    """module.load_state_dict(tensors) in the runner."""
    answer = client().request(Request.LOAD_STATE, target=target.spec, state=_encode_arg(dict(tensors)))
    if answer.get("error"):
        raise_learner_error(answer["error"], what)


def put(value, what=T("the judge's value")) -> Ref:
    """Send `value` to the runner and keep it there: a Ref that later requests pass as that same object (a
    tensor the learner's code marks dynamic, then serves). The runner sees `value`: send `example_like(...)`."""
    answer = client().request(Request.KEEP, value=_encode_arg(value))
    if answer.get("error"):
        raise_learner_error(answer["error"], what)
    if not isinstance(answer.get("handle"), str):
        raise Protocol(T("malformed handle"))
    return Ref({"handle": answer["handle"]})


RETURNED_GRAPH = T("the graph your code returned")


def _decode_result(obj):
    try:
        return wire.decode(obj, extra={"handle": lambda name: Ref({"handle": str(name)}),
                                       "graph": lambda body: sealed_module(rebuild(body), what=RETURNED_GRAPH)})
    except wire.WireError as exc:
        raise Protocol(T("your code's process sent a malformed value: `{error}`", error=in_code(exc))) from None
    except KeyError:
        raise Protocol(T("your code's process sent a malformed value")) from None


def _result_with_type(obj):
    if isinstance(obj, dict) and "handle" in obj:
        return Ref({"handle": str(obj["handle"])})
    return _decode_result(obj)


# namespace -> provide(name, overload): registers torch.ops.<namespace>.<name>.<overload> in the verifier with
# the exercise's own implementation, before a graph that calls it is rebuilt (a hidden test module sets it; the
# namespace must also be in the exercise's op_namespaces). The learner's kernel is never run here.
OP_PROVIDERS: dict = {}


def _called_operators(body, depth: int = 0):
    """(namespace, name, overload) of every torch.ops call in an untrusted graph body (malformed parts skipped)."""
    if depth > ir.MAX_SUBGRAPH_DEPTH or not isinstance(body, dict):
        return
    nodes, subgraphs = body.get("nodes"), body.get("subgraphs")
    for spec in nodes[:ir.MAX_NODES] if isinstance(nodes, list) else []:
        target = spec.get("target") if isinstance(spec, dict) and spec.get("op") == "call_function" else None
        parts = target.split(".") if isinstance(target, str) else []
        if len(parts) in (4, 5) and parts[:2] == ["torch", "ops"] and all(ir.NAME.match(p) for p in parts[2:]):
            yield parts[2], parts[3], parts[4] if len(parts) == 5 else "default"
    for sub in list(subgraphs.values())[:ir.MAX_SUBGRAPHS] if isinstance(subgraphs, dict) else []:
        yield from _called_operators(sub, depth + 1)


def rebuild(body) -> torch.fx.GraphModule:
    namespaces = tuple(CLIENT.get("op_namespaces", ()))
    for namespace, name, overload in set(_called_operators(body)) if OP_PROVIDERS else ():
        if namespace in OP_PROVIDERS and namespace in namespaces:
            OP_PROVIDERS[namespace](name, overload)
    try:
        return ir.from_ir(body, op_namespaces=namespaces)
    except ir.NotAllowed as exc:
        failure = Forbidden(T("the graph Dynamo captured from your code cannot be checked: {reason}. A graph may "
                              "call only tensor operations; keep your own functions out of it (no `allow_in_graph`, "
                              "no custom operator unless the exercise is about one).", reason=exc.text))
        failure.called = exc.called  # what the graph called, for a check that explains it in its own terms
        raise failure from None
    except ir.IRError as exc:
        raise Protocol(T("the graph from your code's process is malformed: `{error}`", error=in_code(exc))) from None


# ---------------------------------------------------------------- compiled targets


@dataclass
class Graph:
    """One graph the runner captured, rebuilt here, with where each of its inputs comes from."""

    gm: torch.fx.GraphModule
    inputs: list[dict]


@dataclass
class Call:
    graph: int | None
    output: object
    printed: str = ""


class RemoteCompiled:
    """`torch.compile(target, **options)` in the runner; calls run the captured graph here on real inputs."""

    _sessions = 0

    def __init__(self, target: Ref, options: dict, *, what=YOUR_FUNCTION, force_backend=False,
                 local_backend=None, mutates_args=()):
        """`local_backend` (e.g. "inductor", a CompileCounter): compile each rebuilt graph here with it, once,
        and run that instead of the plain graph (the verifier's own compile, on its own inputs).

        Every graph runs sealed (`judge.checks.sealed`): on copies of the call's arguments, with the verifier's
        process state checked. `mutates_args` names the arguments (positions, or keyword names) the function
        is meant to update in place, such as a cache: their changes reach the caller's tensors; a change to any
        other argument fails the call."""
        RemoteCompiled._sessions += 1
        self.session = f"s{RemoteCompiled._sessions}"
        self.target, self.options, self.what = target, dict(options), what
        if force_backend:
            self.options["force_backend"] = True
        self.graphs: list[Graph] = []
        self.recompile_reasons: list[str] = []
        self.calls: list[Call] = []
        self.state: dict[str, dict[str, torch.Tensor]] = {}
        self.local_backend = local_backend
        self.mutates_args = frozenset(mutates_args)
        self._local: dict[int, object] = {}
        self._last_flat: tuple = ()

    @property
    def frame_count(self) -> int:
        return len(self.graphs)

    @property
    def graph_modules(self) -> list[torch.fx.GraphModule]:
        return [g.gm for g in self.graphs]

    def __call__(self, *args, examples=None, mark_dynamic=(), keep=False, **kwargs):
        """Run once: the runner compiles/calls on `examples` (default: `example_like(args)`), we run the graph
        on `args`. With `keep`, the runner's example arguments themselves are the real ones (for values the
        runner must see, such as a module's state)."""
        sent_args = args if keep else (examples if examples is not None else example_like(args))
        fields = dict(session=self.session, target=self.target.spec, options=self.options,
                      args=_encode_arg(tuple(sent_args)), kwargs=_encode_arg(example_like(kwargs)),
                      mark_dynamic=[list(m) for m in mark_dynamic])
        answer = client().request(Request.COMPILE, replay_key=self._replay_key(fields, keep or examples is not None),
                                  **fields)
        self._take_graphs(answer.get("graphs", []))
        reasons = answer.get("recompiles", [])
        new_reasons = [str(r)[:500] for r in reasons[:20]] if isinstance(reasons, list) else []
        self.recompile_reasons += new_reasons
        view = CLIENT.get("view")
        if view is not None:
            view.add_recompiles(new_reasons)
            _record_call(view, args, kwargs, answer, new_reasons)
            if isinstance(answer.get("guards"), str):
                view.add_guards(answer["guards"])
        if answer.get("error"):
            raise_learner_error(answer["error"], self.what)
        ran = answer.get("ran")
        if not isinstance(ran, list) or not all(isinstance(i, int) and 0 <= i < len(self.graphs) for i in ran):
            raise Protocol(T("{what}: your code's process named a graph it never sent", what=self.what))
        if len(ran) != 1:
            count = len(ran)
            raise GraphBreak(T("{what}: one call ran {count} graphs; the judge checks calls that run exactly one "
                               "captured graph (no graph break)", what=self.what, count=count), [])
        output = self.run_graph(ran[0], args, kwargs, answer.get("output"))
        self.last_output_spec = answer.get("output")  # how graph ran[0]'s outputs form a result (for run_graph)
        self._follow_state(answer.get("state_out"))
        self.calls.append(Call(ran[0], output, str(answer.get("printed", ""))[:20000]))
        return output

    def _replay_key(self, fields: dict, values_matter: bool) -> tuple | None:
        """What the answer to this compile depends on, or None where values or runner-held objects may matter
        (arguments the runner sees as they are, a kept object, a graph sent to it)."""
        text = json.dumps([fields["target"], fields["args"], fields["kwargs"]])
        if values_matter or '"handle"' in text or '"graph"' in text:
            return None
        return (Request.COMPILE.value, client().session_order(self.session),
                json.dumps(fields["target"], sort_keys=True), json.dumps(self.options, sort_keys=True, default=str),
                json.dumps(_signature([fields["args"], fields["kwargs"]])), json.dumps(fields["mark_dynamic"]))

    def _follow_state(self, moved) -> None:
        """State the runner's module holds, after the call, as a graph output (a rebound buffer): our copy takes
        that output as computed here. A wrong mapping can only make later results wrong."""
        if not isinstance(moved, list):
            return
        for item in moved[:256]:
            if not isinstance(item, dict) or not isinstance(item.get("out"), int):
                raise Protocol(T("malformed state update"))
            store = self.state.get(str(item.get("owner")))
            if store is None or str(item.get("name")) not in store:
                continue  # state this side does not hold: the graph never reads it here
            if not 0 <= item["out"] < len(self._last_flat):
                raise Protocol(T("a state update refers to a graph output that does not exist"))
            store[str(item["name"])] = self._last_flat[item["out"]]

    def _take_graphs(self, graphs) -> None:
        if not isinstance(graphs, list):
            raise Protocol(T("malformed graph list"))
        for item in graphs:
            if not isinstance(item, dict) or item.get("index") != len(self.graphs):
                raise Protocol(T("graphs arrived out of order"))
            inputs = item.get("inputs")
            if not isinstance(inputs, list):
                raise Protocol(T("a graph came without its inputs"))
            gm = rebuild(item.get("ir"))
            if len(inputs) != len(ir.placeholders(gm)):
                raise Protocol(T("a graph's inputs do not match its placeholders"))
            self.graphs.append(Graph(gm, inputs))
            if CLIENT.get("view") is not None:
                CLIENT["view"].add_graph(item.get("ir"), gm)

    def inputs_for(self, index: int, *args, **kwargs) -> list:
        """The values graph `index` takes for a call with `args` (to compile it here, e.g. with Inductor)."""
        return self.bind(index, args, kwargs)

    def bind(self, index: int, args, kwargs) -> list:
        """The values for graph `index`'s inputs, taken from this side's arguments and state."""
        graph = self.graphs[index]
        values, symbols = [], {}
        for _node, spec in zip(ir.placeholders(graph.gm), graph.inputs):
            kind = spec.get("kind") if isinstance(spec, dict) else None
            if kind in ("arg", "kwarg"):
                values.append(_at_path(args if kind == "arg" else kwargs, spec.get("path"), self.what))
            elif kind == "state":
                owner, name = str(spec.get("owner")), str(spec.get("name"))
                values.append(self._state_tensor(owner, name))
            elif kind == "const":
                try:
                    value = spec.get("value")  # a tensor travels as encode_tensor's object, anything else as wire
                    values.append(wire.decode_tensor(value) if isinstance(value, dict) and "data" in value
                                  else wire.decode(value))
                except (wire.WireError, TypeError):
                    raise Protocol(T("a graph constant is malformed")) from None
            elif kind == "sym":
                values.append(None)
            else:
                raise Protocol(T("unknown graph input kind `{kind}`", kind=in_code(repr(kind)[:80])))
        # Symbolic sizes: bind each symbol from a tensor input whose recorded shape names it.
        for node, value in zip(ir.placeholders(graph.gm), values):
            shape = node.meta.get("ir", {}).get("value", {}).get("shape")
            if isinstance(value, torch.Tensor) and isinstance(shape, list):
                if len(shape) != value.dim():
                    raise WrongAnswer(T("{what}: the captured graph expects a {want}-d input, the call passed "
                                        "{got}-d", what=self.what, want=len(shape), got=value.dim()))
                for want, got in zip(shape, value.shape):
                    if isinstance(want, int) and want != got:
                        raise WrongAnswer(T("{what}: the captured graph was specialised to size {want} and cannot "
                                            "take an input of size {got}", what=self.what, want=want, got=got))
                    if isinstance(want, str):
                        symbols.setdefault(want, got)
        for i, (_node, spec) in enumerate(zip(ir.placeholders(graph.gm), graph.inputs)):
            if spec.get("kind") == "sym":
                symbol = str(spec.get("symbol"))
                if symbol not in symbols:
                    raise Protocol(T("the graph's symbolic size `{symbol}` is not the size of any input",
                                   symbol=in_code(symbol[:80])))
                values[i] = symbols[symbol]
        return values

    def _state_tensor(self, owner: str, name: str) -> torch.Tensor:
        store = self.state.get(owner)
        if store is None or name not in store:
            raise Protocol(T("the graph reads state `{name}` that the verifier does not hold",
                           name=in_code(f"{owner}.{name}"[:160])))
        return store[name]

    def input_names(self, index: int) -> tuple[list[str], set[int]]:
        """(a name for each input of graph `index`, the positions it may update in place: state, and the
        arguments in `mutates_args`)."""
        graph, names, mutable = self.graphs[index], [], set()
        for i, (node, spec) in enumerate(zip(ir.placeholders(graph.gm), graph.inputs)):
            kind, path = spec.get("kind"), spec.get("path")
            first = path[0] if isinstance(path, list) and path else None
            if kind == "state":
                names.append(f"{spec.get('owner')}.{spec.get('name')}"[:80])
                mutable.add(i)
            elif kind in ("arg", "kwarg"):
                names.append(_shown_source(node, first))
                if first in self.mutates_args:
                    mutable.add(i)
            else:
                names.append(node.name)
                mutable.add(i)  # a constant or a size: made afresh for every call
        return names, mutable

    def run_graph(self, index: int, args, kwargs, output_spec):
        values = self.bind(index, args, kwargs)
        run = self.graphs[index].gm
        if self.local_backend is not None:
            if index not in self._local:
                backend = self.local_backend
                if backend == "inductor":  # the same compile, its figures kept for the cost section (judge.cost)
                    from judge.cost import recording_inductor

                    backend = recording_inductor(run, values)
                self._local[index] = torch.compile(run, backend=backend)
            run = self._local[index]

        def plain(*copies):
            try:
                return run(*copies)
            except CheckFailure:
                raise
            except Exception as exc:  # noqa: BLE001 - the graph from the runner fails on our inputs
                raise WrongAnswer(T("{what}: the captured graph fails on the judge's inputs: `{error}: {detail}`",
                                    what=self.what, error=type(exc).__name__,
                                    detail=in_code(_first(str(exc), 2)))) from None

        names, mutable = self.input_names(index)
        flat = run_sealed(plain, values, what=self.what, mutable=mutable, names=names)
        self._last_flat = flat if isinstance(flat, (list, tuple)) else (flat,)
        return _assemble(output_spec, flat, args, self.what)


def _record_call(view, args, kwargs, answer: dict, reasons: list[str]) -> None:
    """The call in the compiler's view's timeline, with where its failed guards came from (shown only)."""
    from judge import guard_origin
    from judge.compiler_view import describe_inputs

    graphs = answer.get("graphs")
    view.add_call(describe_inputs(args, kwargs), len(graphs) if isinstance(graphs, list) else 0,
                  guard_origin.from_runner(answer.get("guard_origins")), reasons)


def _shown_source(node: torch.fx.Node, first) -> str:
    """`x` for a graph input Dynamo recorded as L['x'] (display only), else `argument N`."""
    source = str(node.meta.get("ir", {}).get("source", ""))
    found = re.fullmatch(r"L\['(\w{1,40})'\]", source) or re.fullmatch(r"l_(\w{1,40}?)_", node.name)
    if found:
        return found.group(1)
    return f"argument {first + 1}" if isinstance(first, int) else str(first)[:40]


def _at_path(value, path, what):
    if not isinstance(path, list):
        raise Protocol(T("malformed input path"))
    for step in path:
        try:
            value = value[step]
        except (IndexError, KeyError, TypeError):
            raise Protocol(T("{what}: a graph input refers to an argument that does not exist", what=what)) from None
    return value


def _assemble(spec, flat, args, what):
    if not isinstance(spec, dict) or not isinstance(spec.get("leaves"), list):
        raise Protocol(T("malformed output description"))
    leaves = []
    for leaf in spec["leaves"]:
        if not isinstance(leaf, dict) or len(leaf) != 1:
            raise Protocol(T("malformed output leaf"))
        if "out" in leaf:
            i = leaf["out"]
            if not isinstance(i, int) or not 0 <= i < len(flat):
                raise Protocol(T("an output refers to a graph output that does not exist"))
            leaves.append(flat[i])
        elif "arg" in leaf:
            leaves.append(_at_path(args, leaf["arg"], what))
        else:
            leaves.append(_decode_result(leaf["value"]))
    if spec.get("spec") is None:
        return leaves[0] if len(leaves) == 1 else tuple(leaves)
    try:
        treespec = pytree.treespec_loads(spec["spec"])
        return pytree.tree_unflatten(leaves, treespec)
    except Exception:  # noqa: BLE001
        raise Protocol(T("malformed output structure")) from None


@dataclass
class Captured:
    """What one fullgraph compile captured (compatible with judge.checks.graphs.Captured)."""

    output: object
    graphs: list[torch.fx.GraphModule] = field(default_factory=list)
    example_inputs: list[list] = field(default_factory=list)


def explain(target: Ref, *args, dynamic=None, what=YOUR_FUNCTION) -> list[GraphBreakDiagnostic]:
    """Every graph break Dynamo takes in the runner on example inputs like `args`."""
    answer = client().request(Request.EXPLAIN, target=target.spec, args=_encode_arg(example_like(tuple(args))),
                              options={"dynamic": dynamic})
    if answer.get("error"):
        raise_learner_error(answer["error"], what)
    found = []
    for item in answer.get("breaks", [])[:50] if isinstance(answer.get("breaks"), list) else []:
        try:
            found.append(GraphBreakDiagnostic.model_validate(item))
        except ValueError:
            raise Protocol(T("malformed graph-break description")) from None
    return found
