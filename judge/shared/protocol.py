"""The runner/verifier protocol, declared once: every message and request kind, with its fields.

Three parties exchange JSON lines (docs/architecture.md, "Messages"):

- the **verifier** (hidden tests) writes `VerifierSays` on its result channel, each stamped with its nonce;
- the **runner** (learner's code, untrusted) writes `RunnerSays` on its result channel and answers `Request`s;
- the **trusted side** (`judge.parent.grading`) relays `Request`s to the runner, `RELAYED` runner messages to the
  verifier, and tells the verifier `TrustedSays.RUNNER_GONE` with a `RunnerEnd` when the runner ends;
- a **loader** (an artifact's bytes loaded in a sandboxed run of their own, asked for by the verifier with
  `VerifierSays.LOAD_ARTIFACT`) writes one `LoaderSays.REPORT`, which the trusted side hands the verifier as
  `TrustedSays.ARTIFACT_LOADED`.

Each kind is a `str` (it is what travels in `"type"` or `"op"`) that carries the names of its fields;
`message(kind, **fields)` builds one and refuses a field the declaration lacks. Why the runner ended, and
what kind of error the learner's code raised, travel as the enums `RunnerEnd` and `ErrorKind`: code decides
on these values, never on a message's words.
"""

from __future__ import annotations

from enum import Enum


class Kind(str, Enum):
    """A message or request kind: its wire name, and the fields it may carry."""

    fields: tuple[str, ...]

    def __new__(cls, value: str, fields: tuple[str, ...] = ()):
        member = str.__new__(cls, value)
        member._value_ = value
        member.fields = fields
        return member

    def __str__(self) -> str:
        return self.value


class VerifierSays(Kind):
    """Verifier -> trusted side, on fd 3, each with `"nonce"`."""

    COLLECTED = "collected", ("names",)  # check names in run order
    CHECK = "check", ("check", "runner_end")  # a CheckResult; the RunnerEnd when the runner's end failed it
    RUNNER_REQUEST = "runner_request", ("request",)  # a Request, relayed to the runner as is
    RUNNER_NOT_LOADED = "runner_not_loaded"  # the runner reported a load error or ended before loading
    COMPILER = "compiler", ("view",)  # the compiler's view (judge.verifier_side.compiler_view), display only
    COST = "cost", ("section",)  # the report's cost section (judge.costs.section), display only
    RUNNER_RELEASED = "runner_released"  # the verifier needs no more answers: the runner may end
    DOCTOR = "doctor", ("findings",)  # a playground run's findings (judge/verifier_side/playground.py), display only
    # artifact bytes (base64) for the trusted side to load in a sandboxed run of their own (judge/parent/loading.py):
    # `inputs`, wire tensors the loaded function is called on; `modules`, {name: source} of the grader's own modules;
    # `artifact_kind`, what the bytes are (judge.shared.jobs.LoaderJob.kind: "aot" or "cache")
    LOAD_ARTIFACT = "load_artifact", ("id", "artifact", "inputs", "modules", "artifact_kind")
    INTERNAL_ERROR = "internal_error", ("message", "traceback")
    DONE = "done"


class RunnerSays(Kind):
    """Runner -> trusted side, on fd 3 (untrusted: only `RELAYED` kinds reach the verifier)."""

    IMPORTING = "importing"  # from here on, a dead process is the learner's doing
    LOADED = "loaded"
    LOAD_ERROR = "load_error", ("verdict", "message", "message_zh", "location", "traceback")
    RESPONSE = "response", ("id", "error")  # the answer to request `id`: `error`, or the request's own fields
    NOTE = "note", ("id", "value")  # data the learner's code hands the judge while request `id` runs (tell_verifier)
    INTERNAL_ERROR = "internal_error", ("message",)


# test a message with kind_of() before asking whether it is relayed
RELAYED = frozenset({RunnerSays.RESPONSE, RunnerSays.NOTE, RunnerSays.LOADED, RunnerSays.LOAD_ERROR})


class TrustedSays(Kind):
    """Trusted side -> verifier's stdin (besides the relayed runner messages)."""

    RUNNER_GONE = "runner_gone", ("cause", "reason", "signal", "exit_code")  # cause: a RunnerEnd
    # the answer to LOAD_ARTIFACT `id`: the loader's `report` (its LoaderSays.REPORT fields, untrusted: the artifact
    # ran there), or None with `end`, how the loader's run ended without one (a RunnerEnd and words)
    ARTIFACT_LOADED = "artifact_loaded", ("id", "report", "end")


class LoaderSays(Kind):
    """Loader -> trusted side, on fd 3: a sandboxed run that loads an artifact's bytes and calls what they hold
    (judge/loader_side/loader.py); no learner file is imported there, but the artifact's own code runs."""

    REPORT = "loader_report", ("load_error", "call_error", "outputs", "counters", "changed")


class Request(Kind):
    """Verifier -> runner (relayed). Each has `"id"` and `"op"`; judge/runner_side/runner.py documents what each
    answers."""

    COMPILE = "compile", ("session", "target", "options", "args", "kwargs", "mark_dynamic")
    CALL = "call", ("target", "args", "kwargs", "keep", "return_args")
    EXPLAIN = "explain", ("target", "args", "options")
    STATE = "state", ("target", "graph_inputs")
    LOAD_STATE = "load_state", ("target", "state")
    KEEP = "keep", ("value",)
    RESET = "reset"
    TAMPER = "tamper"


class ErrorKind(str, Enum):
    """The `"kind"` of a response's `"error"`: what went wrong in the runner (`judge.shared.learner_errors.kind_of`)."""

    GRAPH_BREAK = "graph_break"
    COMPILE_ERROR = "compile_error"
    MEMORY = "memory"
    ERROR = "error"  # any other exception of the learner's code
    PROTOCOL = "protocol"  # a request the runner cannot read, or a value it cannot decode
    TOO_LARGE = "too_large"  # the answer was larger than the runner may send


class RunnerEnd(str, Enum):
    """Why the runner is gone: the trusted side's cause (from the runner's outcome), or what the verifier saw."""

    START = "start"  # its process could not start
    TIME = "time"
    MEMORY = "memory"
    OUTPUT = "output"
    SIGNAL = "signal"  # killed by a signal (`signal` says which)
    EXIT = "exit"  # its process ended (`exit_code`)
    SILENT = "silent"  # seen by the verifier: no answer before its deadline
    CLOSED = "closed"  # seen by the verifier: the channel from the runner ended
    PROTOCOL = "protocol"  # seen by the verifier: it sent something the judge does not read

    @property
    def crashed(self) -> bool:
        """The learner's process ended or was killed (not a limit, not a failure to start)."""
        return self in (RunnerEnd.SIGNAL, RunnerEnd.EXIT, RunnerEnd.CLOSED)

    @classmethod
    def of(cls, value) -> RunnerEnd | None:
        """The member named by untrusted `value`, or None."""
        try:
            return cls(value)
        except ValueError:
            return None


def message(kind: Kind, **fields) -> dict:
    """A message (or request body) of `kind`: {"type": kind, **fields}; a field `kind` does not declare is a bug."""
    unknown = set(fields) - set(kind.fields)
    if unknown:
        raise ValueError(f"{type(kind).__name__}.{kind.name} has no field {', '.join(sorted(unknown))}")
    return {"type": kind.value, **fields}


def kind_of(raw, kinds: type[Kind]) -> Kind | None:
    """The kind of an untrusted message (its "type"), if it is one of `kinds`."""
    value = raw.get("type") if isinstance(raw, dict) else None
    try:
        return kinds(value) if isinstance(value, str) else None
    except ValueError:
        return None


__all__ = ["ErrorKind", "Kind", "LoaderSays", "RELAYED", "Request", "RunnerEnd", "RunnerSays", "TrustedSays",
           "VerifierSays", "kind_of", "message"]
