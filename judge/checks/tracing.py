"""Errors raised while Dynamo traces the learner's code that are not Dynamo's own exception types.

Some tracing failures surface as plain Python errors (an IndexError when an unbacked SymInt from
`int(tensor)` is used as an index); Dynamo appends "from user code:" and the learner's line.
"""

from __future__ import annotations

from judge.checks.failures import GraphBreak
from judge.compiler.breaks import graph_break_from_exception
from judge.reports.i18n import T

USER_CODE_MARKER = "from user code:"


def raised_while_tracing(exc: BaseException) -> bool:
    """True when `exc` was raised by Dynamo while tracing user code (its message names the user line)."""
    return USER_CODE_MARKER in str(exc)


def as_graph_break(exc: BaseException, *, what: T | str, explanation: T | str | None = None) -> GraphBreak:
    """A GraphBreak naming the learner's line of a tracing failure, with `explanation` (a T, or plain text) if
    given."""
    diag = graph_break_from_exception(exc)
    if explanation:
        diag.set_text("explanation", explanation)
    first = str(exc).split(USER_CODE_MARKER)[0].strip().splitlines()
    diag.reason = f"{type(exc).__name__}: {first[0] if first else ''}"[:600]
    if diag.location:
        message = T("{what}: Dynamo could not trace line {line} (`{code}`): {explanation}", what=what,
                    line=diag.location.line, code=diag.location.text, explanation=diag.text("explanation"))
    else:
        message = T("{what}: Dynamo could not trace your code: {explanation}", what=what,
                    explanation=diag.text("explanation"))
    return GraphBreak(message, [diag])
