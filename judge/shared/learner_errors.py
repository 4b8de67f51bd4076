"""One classifier of the exceptions the learner's code raises, for both sides.

The runner describes an exception of the learner's code as data (`describe`, sent in a response's
`"error"`); the verifier's plugin words an exception a hidden test's own compile raised. Both ask `kind_of`
which `judge.shared.protocol.ErrorKind` it is, so the same exception is the same kind of failure on either side.
"""

from __future__ import annotations

import traceback

import torch

from judge.compiler.breaks import graph_break_from_exception, is_graph_break_error
from judge.compiler.locations import learner_location_from_traceback, stack_locations, to_display_names
from judge.shared.protocol import ErrorKind

OUT_OF_MEMORY_WORDS = ("can't allocate memory", "not enough memory")  # what the allocator says in a RuntimeError


def kind_of(exc: BaseException) -> ErrorKind:
    """A graph break, a failure of torch.compile itself, the process running out of memory, or any other error.

    Out of memory wins over a compile failure: a compile that could not allocate ran out of memory."""
    if is_graph_break_error(exc):
        return ErrorKind.GRAPH_BREAK
    if isinstance(exc, MemoryError) or any(words in str(exc) for words in OUT_OF_MEMORY_WORDS):
        return ErrorKind.MEMORY
    if _is_compile_error(exc):
        return ErrorKind.COMPILE_ERROR
    return ErrorKind.ERROR


def _is_compile_error(exc: BaseException) -> bool:
    """Dynamo's and Inductor's own exceptions (InductorError and BackendCompilerFailed are Dynamo's too)."""
    return isinstance(exc, torch._dynamo.exc.TorchDynamoException) or \
        type(exc).__module__.startswith("torch._dynamo")


def describe(exc: BaseException) -> dict:
    """An exception of the learner's code as data: kind, message, the learner's line, a graph-break diagnosis."""
    loc = learner_location_from_traceback(exc.__traceback__)
    if loc is None:  # a plain error Dynamo raised while tracing names the learner's line in its text only
        found = stack_locations(str(exc).split("from user code:", 1)[1]) if "from user code:" in str(exc) else []
        loc = found[-1] if found else None
    kind = kind_of(exc)
    extra = {}
    if kind is ErrorKind.GRAPH_BREAK:
        extra["diagnostic"] = graph_break_from_exception(exc).model_dump(mode="json")
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {"kind": kind.value, "type": type(exc).__name__, "message": to_display_names(str(exc))[:2000],
            "location": loc.model_dump(mode="json") if loc else None, "traceback": tb[-4000:], **extra}
