"""The runner: the only process that imports the learner's code. It is untrusted and decides nothing.

It loads the submission, then answers the verifier's requests (relayed by the trusted side) one JSON line
at a time, with data only: captured graphs as IR (`judge.shared.ir`), values as `judge.shared.wire` JSON, diagnostics as
strings. It holds no hidden test, no reference solution, no expected value and no way to send a verdict;
whatever it answers is checked by the verifier, so a lie can only make a submission fail.

Requests (each has an "id"; the response echoes it):
  compile  one call of a compiled target in a session: the graphs Dynamo captured (new ones only), which
           graph ran, how the call's result maps onto the graph's outputs, and any error or graph break
  call     one eager call: the result and what it printed
  explain  every graph break Dynamo takes (compiled without fullgraph)
  state    the tensors of a module (state_dict; with graph_inputs, every parameter and buffer) held under a handle
  load_state  load tensors into a module held under a handle
  keep     keep a value the verifier sends under a handle (later requests pass that same object, e.g. a
           tensor the learner's code marks dynamic before it is served)
While answering a request, an object the exercise hands the learner (public.py) may send `note`s: each one a
value, sent as it happens and collected by the verifier for that request's answer (`tell_verifier`). It is how a
step the verifier holds is called: a call of warmup-no-recompile's `step_fn` is a note, which the verifier's own
compiled step receives; nothing of it stays in this process to be rewritten afterwards.
Targets and arguments may name {"entry": true} (the entry point), {"learner": name} (another attribute of
the learner's module), {"public": name} (the exercise's public module), {"handle": h} (a result kept
from an earlier request) and {"graph": IR} (a graph the verifier sends, e.g. for an FX pass).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from judge.reports.i18n import T, in_code
from judge.shared import phases, protocol
from judge.shared.learner_errors import describe
from judge.shared.protocol import ErrorKind, Request, RunnerSays
from sandbox.jsonlines import parse_line

if TYPE_CHECKING:
    from judge.runner_side.compiling import Session

MAX_RESPONSE_BYTES = 12 * 1024 * 1024
MAX_HANDLES = 256
SERVING: list = []  # [the Runner, the id of the request it is answering]: where `tell_verifier` sends a note


class Runner:
    def __init__(self, job: dict, out_fd: int, scratch: Path):
        self.job, self.out_fd, self.scratch = job, out_fd, scratch
        self.submission = None
        self.public = None
        self.handles: dict[str, object] = {}
        self.sessions: dict[str, Session] = {}

    @property
    def handlers(self) -> dict:
        """Request -> the method answering it (`op_<request>`), looked up when asked (as the tamper check sees it)."""
        return {request: getattr(self, f"op_{request.value}") for request in Request}

    # ------------------------------------------------------------ channel

    def send(self, message: dict) -> None:
        data = (json.dumps(message) + "\n").encode()
        if len(data) > MAX_RESPONSE_BYTES:
            too_large = {"kind": ErrorKind.TOO_LARGE, **said(T("the answer of your code is too large to send"))}
            data = (json.dumps(protocol.message(RunnerSays.RESPONSE, id=message.get("id"), error=too_large))
                    + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.out_fd, view):]

    # ------------------------------------------------------------ loading

    def load(self) -> bool:
        for name in RUNNER_MODULES:  # a module missing from the judge's environment fails here, not the learner
            importlib.import_module(name)  # (and before the tamper snapshot: their classes' methods are watched)
        from judge.compiler.locations import learner_location_from_traceback, location, register_learner_file
        from judge.shared import tamper
        from judge.shared.loaded import load_module, load_source

        source, filename = self.job["source"], self.job.get("filename", "solution.py")
        path = self.scratch / "submission.py"
        path.write_text(source, encoding="utf-8")
        register_learner_file(str(path), filename)
        if self.job.get("build_process"):  # forked before anything of the exercise's or the learner's is imported
            from judge.shared import prepared_process

            prepared_process.prepare()
        if self.job.get("public"):
            self.public = load_source(tamper.PUBLIC_MODULE, self.job["public"])
        snapshot = tamper.Snapshot(watch={"judge.runner_side.runner.Runner": self})

        def fail(verdict, message: T, exc=None, loc=None):
            self.send(protocol.message(RunnerSays.LOAD_ERROR, verdict=verdict, **said(message),
                                       location=loc.model_dump(mode="json") if loc else None,
                                       traceback=traceback.format_exc()[-4000:] if exc else ""))
            return False

        try:
            compile(source, filename, "exec")
        except SyntaxError as exc:
            loc = location(str(path), exc.lineno or 1, column=exc.offset)
            return fail("LOAD_ERROR", T("syntax error at line {line}, column {column}: `{error}`", line=exc.lineno,
                                        column=exc.offset, error=in_code(exc.msg, 2000)), exc, loc)
        self.send(protocol.message(RunnerSays.IMPORTING))  # from here on, a dead process is the learner's doing
        try:
            with phases.span("runner.import"):
                self.submission = load_module("submission", path)
        except SystemExit as exc:
            return fail("LOAD_ERROR", T("your file called `exit({code})` while being imported; remove it",
                                        code=in_code(exc.code, 2000)), exc)
        except BaseException as exc:  # noqa: BLE001 - any import-time failure is the learner's
            loc = learner_location_from_traceback(exc.__traceback__)
            if loc:
                message = T("your file raised `{error}` at line {line} (`{code}`) while being imported: `{detail}`",
                            error=type(exc).__name__, line=loc.line, code=in_code(loc.text, 2000),
                            detail=in_code(exc, 2000))
            else:
                message = T("your file raised `{error}` while being imported: `{detail}`", error=type(exc).__name__,
                            detail=in_code(exc, 2000))
            return fail("LOAD_ERROR", message, exc, loc)
        entry_point = self.job["entry_point"]
        entry = getattr(self.submission, entry_point, None)
        if entry is None:
            return fail("LOAD_ERROR", T("your file must define `{name}`; it does not", name=entry_point))
        reason = tamper.disabled_reason(entry)
        if reason:
            return fail("FORBIDDEN", T("`{name}` cannot be graded: {reason}. Remove the decorator.", name=entry_point,
                                       reason=reason))
        changes = snapshot.changed()
        if changes:
            return fail("FORBIDDEN", T("solutions must not change global compiler settings or replace torch "
                                       "functions; your file did: {changes}", changes=T.join(changes[:5], "; ")))
        self.snapshot = snapshot
        self.send(protocol.message(RunnerSays.LOADED))
        return True

    # ------------------------------------------------------------ values

    def decode(self, obj):
        from judge.shared import ir, wire

        def handle(name):
            if name not in self.handles:
                raise wire.WireError(f"no object is kept under {name!r}")
            return self.handles[name]

        def public(name):
            if self.public is None or not hasattr(self.public, name):
                raise wire.WireError(f"the exercise's public module has no {name!r}")
            return getattr(self.public, name)

        def learner(name):
            if not isinstance(name, str) or name.startswith("_") or not hasattr(self.submission, name):
                raise wire.WireError(T("your file must define `{name}`; it does not", name=in_code(name, 80)))
            return getattr(self.submission, name)

        extra = {"handle": handle, "public": public, "learner": learner,
                 "entry": lambda _: getattr(self.submission, self.job["entry_point"]),
                 "graph": lambda body: ir.from_ir(body, op_namespaces=tuple(self.job.get("op_namespaces", ())))}
        return wire.decode(obj, extra=extra)

    def encode(self, value):
        """A result as data: wire values, graphs as IR, anything else kept here under a handle."""
        import torch.fx

        from judge.shared import ir, wire

        if isinstance(value, torch.fx.GraphModule):
            return {"graph": ir.to_ir(value)}
        try:
            return wire.encode(value)
        except wire.WireError:
            if isinstance(value, (list, tuple)):
                items = [self.encode(v) for v in value]
                return {"list" if isinstance(value, list) else "tuple": items}
            return {"handle": self.keep(value), "type": type(value).__name__}

    def keep(self, value) -> str:
        """Keep `value` here under a new handle the verifier can name in later requests."""
        from judge.shared import wire

        if len(self.handles) >= MAX_HANDLES:
            raise wire.WireError(T("too many objects kept in your code's process"))
        name = f"h{len(self.handles)}"
        self.handles[name] = value
        return name

    # ------------------------------------------------------------ requests

    def serve(self, requests) -> None:
        for line in requests:
            try:
                request = parse_line(line)
            except ValueError as exc:
                self.send(protocol.message(RunnerSays.RESPONSE, id=None,
                                           error={"kind": ErrorKind.PROTOCOL, "message": str(exc)}))
                continue
            SERVING[:] = [self, request.get("id")]
            try:
                with phases.span(f"runner.{str(request.get('op'))[:20]}"):
                    answer = self.answer(request)
            finally:
                SERVING.clear()
            self.send({"type": RunnerSays.RESPONSE.value, "id": request.get("id"), **answer})

    def answer(self, request: dict) -> dict:
        from judge.shared import wire

        op = request.get("op")
        try:
            handler = getattr(self, f"op_{Request(op).value}")
        except (ValueError, TypeError, AttributeError):
            return {"error": {"kind": ErrorKind.PROTOCOL, "message": f"unknown request {op!r}"}}
        try:
            return handler(request)
        except wire.WireError as exc:
            return {"error": {"kind": ErrorKind.PROTOCOL, **said(exc.args[0] if exc.args else "")}}
        except BaseException as exc:  # the learner's code failed: described, not raised
            if isinstance(exc, (KeyboardInterrupt,)):
                raise
            return {"error": describe(exc)}

    def target(self, spec):
        value = self.decode(spec)
        return value

    def op_call(self, request: dict) -> dict:
        fn = self.target(request["target"])
        args = self.decode(request.get("args", {"tuple": []}))
        kwargs = self.decode(request.get("kwargs", {"dict": {}}))
        printed = io.StringIO()
        error = None
        result = None
        with contextlib.redirect_stdout(printed):
            try:
                result = fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001
                error = describe(exc)
        answer = {"printed": printed.getvalue()[-20000:], "error": error}
        if error is None:
            answer["result"] = self.encode(result)
            if request.get("keep"):
                answer["handle"] = self.keep(result)
            if request.get("return_args"):
                answer["args_after"] = self.encode(args)
        return answer

    def op_compile(self, request: dict) -> dict:
        from judge.runner_side.compiling import Session

        name = str(request.get("session", "default"))
        session = self.sessions.get(name)
        if session is None:
            if len(self.sessions) >= MAX_HANDLES:
                return {"error": {"kind": ErrorKind.PROTOCOL, **said(T("too many compile sessions"))}}
            session = self.sessions[name] = Session(self.target(request["target"]), request.get("options", {}),
                                                   self.handles)
        args = self.decode(request.get("args", {"tuple": []}))
        kwargs = self.decode(request.get("kwargs", {"dict": {}}))
        return session.call(args, kwargs, request.get("mark_dynamic", []), self.encode)

    def op_explain(self, request: dict) -> dict:
        from judge.compiler.breaks import breaks_in

        fn = self.target(request["target"])
        args = self.decode(request.get("args", {"tuple": []}))
        with contextlib.redirect_stdout(io.StringIO()):
            breaks = breaks_in(fn, *args, dynamic=request.get("options", {}).get("dynamic"))
        return {"breaks": [b.model_dump(mode="json") for b in breaks]}

    def op_state(self, request: dict) -> dict:
        module = self.target(request["target"])
        state = module.state_dict()
        if request.get("graph_inputs"):  # what its graphs read: every parameter and buffer, non-persistent too
            state = dict(module.named_parameters()) | dict(module.named_buffers())
        return {"state": {k: self.encode(v) for k, v in state.items()}}

    def op_load_state(self, request: dict) -> dict:
        module = self.target(request["target"])
        state = self.decode(request["state"])
        module.load_state_dict(state)
        return {}

    def op_keep(self, request: dict) -> dict:
        """Keep a value the verifier sends, so that later requests can pass that very object."""
        return {"handle": self.keep(self.decode(request.get("value")))}

    def op_reset(self, request: dict) -> dict:
        """A fresh compiler state before each hidden test (as torch's own tests reset Dynamo)."""
        import torch

        from judge.shared.torch_seed import seed_torch

        self.sessions.clear()
        torch.compiler.set_stance("default")
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        seed_torch(0)
        return {}

    def op_tamper(self, request: dict) -> dict:
        """What the learner's code has changed in global state so far (for explaining a failure)."""
        changed = self.snapshot.changed()[:10]
        return {"changes": [c.render("en") for c in changed], "changes_zh": [c.render("zh") for c in changed]}


def tell_verifier(value) -> None:
    """Send `value` (plain data: dicts, lists, strings, numbers) to the verifier now, as a note of the request being
    answered. Raises RuntimeError outside a request (at import, or in the verifier)."""
    if not SERVING:
        raise RuntimeError("the judge's objects can only be called while the judge is asking for something")
    runner, ident = SERVING
    runner.send(protocol.message(RunnerSays.NOTE, id=ident, value=value))


# Every module the runner's requests use, imported before the learner's file: once it is imported, a failure is the
# learner's, so a module missing from the judge's own environment must fail before that (INTERNAL_ERROR).
RUNNER_MODULES = ("judge.runner_side.compiling", "judge.shared.ir", "judge.shared.wire", "judge.shared.tamper",
                  "judge.shared.loaded", "judge.compiler.breaks", "judge.compiler.recording",
                  "judge.compiler.locations", "judge.compiler.logs")


def said(message) -> dict:
    """A message in the judge's own words as the runner sends it: "message" (English) and "message_zh"."""
    if not isinstance(message, T):
        return {"message": str(message)}
    zh = message.render("zh")
    return {"message": message.render("en"), **({"message_zh": zh} if zh else {})}


def run(job: dict, out_fd: int, scratch: Path, requests) -> None:
    """Load the submission, then answer requests until stdin closes."""
    phases.set_role("runner")
    runner = Runner(job, out_fd, scratch)
    try:
        if not runner.load():
            return
    except BaseException as exc:  # noqa: BLE001
        runner.send(protocol.message(RunnerSays.INTERNAL_ERROR, message=f"{type(exc).__name__}: {exc}"[:2000]))
        return
    runner.serve(requests)
    sys.stdout.flush()
