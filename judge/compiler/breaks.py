"""Graph breaks for a learner: which Dynamo errors are breaks, the learner's line, the reason explained.

Used on both sides: the runner describes a break of the learner's code with these, the verifier words it.
"""

from __future__ import annotations

import re

import torch

from judge.compiler import break_registry
from judge.compiler.locations import is_learner_file, learner_frames, location, stack_locations
from judge.compiler.logs import artifact_log
from judge.compiler.recording import RecordingBackend
from judge.reports.i18n import T, in_code
from judge.reports.report import GraphBreakDiagnostic

# (pattern in Dynamo's reason, explanation for a learner)
_EXPLANATIONS = [
    (r"aliasing during higher order op tracing",
     T("a branch of `torch.cond` (or the body of another higher-order operator such as `while_loop`) returns one "
       "of its inputs, or a view of it, and an output may not share memory with an input: return `x.clone()` "
       "instead of `x`.")),
    (r"mutation during higher order op tracing",
     T("a branch of `torch.cond` (or the body of another higher-order operator) modifies an input in place "
       "(`x.sub_(...)`, `x[i] = ...`): compute a new tensor instead (`x = x - ...`).")),
    (r"When merging two branches|expected same (?:dtype|shape|device|stride)",
     T("the two branches of `torch.cond` return different dtypes, shapes or devices; both branches must "
       "return tensors that agree: convert in the branch (`.to(x.dtype)`) so both give the same.")),
    (r"body_fn_output and carried_inputs to have same metadata",
     T("the body of `torch.while_loop` returns a value whose dtype, shape or device differs from the value it was "
       "given; each iteration must hand the carried values back as they came in: convert in the body "
       "(`.to(x.dtype)`).")),
    (r"Tensor\.item\(\)|_local_scalar_dense|\bitem\b",
     T("`Tensor.item()` copies a value out of the tensor into Python, so Dynamo cannot keep tracing past it. "
       "Keep the value as a tensor (for example with `torch.where`).")),
    (r"data-dependent|guard on data-dependent|Data-dependent",
     T("a Python `if` (or `int()`, `bool()`) depends on a tensor's value, which is unknown while compiling. "
       "Compute both branches and select with `torch.where`, or use `torch.cond`.")),
    (r"builtin operator `print`|\bprint\b",
     T("`print()` is Python I/O that Dynamo cannot put in a graph.")),
    (r"torch\.compiler\.disable|skip|disable",
     T("the code calls a function that Dynamo was told to skip (`torch.compiler.disable` or a skipped file).")),
    (r"tolist", T("`Tensor.tolist()` copies the tensor into Python values, which Dynamo cannot trace.")),
]


# What Dynamo raises (as a TorchRuntimeError, not a graph break) when the branches of `torch.cond` disagree.
_BRANCHES_DISAGREE = re.compile(r"When merging two branches' output in torch\.cond,\s*expected same (\w+) but got "
                                r"(\S+?) and (\S+?)\.?(?=[\"')\s]|$)")

HOP_WRAPPER = "Got graph break/error:"  # torch._dynamo's UncapturedHigherOrderOpError, before the inner break
_HOP_NAME = re.compile(r"Higher Order Operator: (\S+)")

_PREDICATE_NOT_ONE = re.compile(r"Expected pred to be bool or single-element tensor")  # while tracing
_AMBIGUOUS_BOOL, _COND_KERNEL = "Boolean value of Tensor with more than one value is ambiguous", "in cond_op_dense"

GRAPH_BREAK_ERRORS = ("Unsupported", "UserError", "UncapturedHigherOrderOpError")


def is_graph_break_error(exc: BaseException) -> bool:
    """True for Dynamo's "cannot capture this" errors (not for failures of the code or the backend)."""
    return isinstance(exc, torch._dynamo.exc.TorchDynamoException) and any(
        cls.__name__ in GRAPH_BREAK_ERRORS for cls in type(exc).__mro__)


def explain_reason(reason: str) -> T:
    """A learner-readable explanation of a Dynamo graph-break reason (in both languages)."""
    for pattern, text in _EXPLANATIONS:
        if re.search(pattern, reason):
            return text
    return T("Dynamo could not trace this line into the graph.")


def explain_learner_error(message: str, traceback: str = "") -> T | None:
    """A learner's explanation of an error that torch words for its own developers while compiling (a branch
    mismatch Dynamo raises as a compile failure, a predicate torch.cond refuses), or None. `traceback`: where
    the error was raised, for an error whose words alone do not say it came from torch.cond."""
    found = _BRANCHES_DISAGREE.search(message)
    if found is not None:
        what, first, second = found.groups()
        return T("the two branches of `torch.cond` return a different {what} (`{first}` in one, `{second}` in the "
                 "other), and both must return tensors of the same dtype and device: convert in the branch that "
                 "differs (for example `.to(x.dtype)`).", what=in_code(what[:40]), first=in_code(first[:60]),
                 second=in_code(second[:60]))
    if _PREDICATE_NOT_ONE.search(message) or (_AMBIGUOUS_BOOL in message and _COND_KERNEL in traceback):
        return T("the predicate of `torch.cond` must be one boolean: a Python `bool` or a tensor with a single "
                 "element. Yours has more elements: reduce it to one value first (`.any()`, `.all()` or a "
                 "reduction such as `.sum()`).")
    return None


def short_reason(text: str) -> str:
    from judge.compiler.locations import LEARNER_FILES

    text = text.replace("Consider annotating your code using torch._check*().", "")
    for path, shown in LEARNER_FILES.items():
        text = text.replace(path, shown)
    lines = [ln.strip() for ln in text.strip().splitlines()
             if ln.strip() and not ln.strip().startswith(("Caused by", "Encountered graph break when attempting"))]
    keep = [ln for ln in lines[:4] if not ln.startswith(("For more", "Developer debug", "Hint: Please report"))]
    return "\n".join(keep[:3])[:600]


def graph_break_from_exception(exc: BaseException) -> GraphBreakDiagnostic:
    """Turn a Dynamo exception into a diagnostic pointing at the learner's line."""
    stack: list = []
    seen = exc
    while seen is not None and not stack:  # a higher-order operator's error carries the user stack on its cause
        stack = learner_frames(getattr(seen, "real_stack", None) or []) or stack_locations(str(seen))
        seen = seen.__cause__ or seen.__context__
    said = str(exc).split("User Stack")[0].split("from user code")[0]
    # An operator that must be captured whole (torch.cond, while_loop) wraps the break inside it: that one is the why.
    wrapped, said = HOP_WRAPPER in said, said.split(HOP_WRAPPER, 1)[-1]
    reason = short_reason(said) or type(exc).__name__
    explanation = explain_reason(reason)
    operator = _HOP_NAME.search(said)
    if wrapped and operator and operator.group(1) not in explanation.en:  # say where the break is, once
        explanation = T("inside `{operator}`, which must be captured whole (nothing in it may break the graph): "
                        "{explanation}", operator=in_code(operator.group(1)), explanation=explanation)
    return GraphBreakDiagnostic(reason=reason, explanation=explanation,
                                location=stack[-1] if stack else None, user_stack=stack,
                                gb_id=break_registry.classify(str(exc), getattr(exc, "gb_type", None)))


def graph_break_message(diag: GraphBreakDiagnostic, what: T | str) -> T:
    """`<what>: graph break at line N (`code`): <explanation>` in both languages; Dynamo's own first lines where
    the diagnostic explains nothing, and the explanation's English where it came without its Chinese."""
    if diag.explanation:
        explanation = diag.text_or_english("explanation")
    else:
        explanation = T("`{reason}`", reason=in_code("\n".join(diag.reason.strip().splitlines()[:2]), 800))
    if diag.location:
        return T("{what}: graph break at line {line} (`{code}`): {explanation}", what=what,
                 line=diag.location.line, code=in_code(diag.location.text), explanation=explanation)
    return T("{what}: graph break at a line outside your file: {explanation}", what=what, explanation=explanation)


_BREAK_AT = re.compile(r"Graph break in user code at (.+):(\d+)")
_REASON = re.compile(r"Graph Break Reason:\s*(.*?)(?:\n\s*User code traceback:|\Z)", re.S)


def graph_break_log():
    """Collect Dynamo's graph-break log records (every break, even one on the first line)."""
    return artifact_log("graph_breaks")


def breaks_in(fn, *args, dynamic=None) -> list[GraphBreakDiagnostic]:
    """Every graph break Dynamo takes in `fn(*args)` (compiled without fullgraph), in order: a function of this
    process (the runner's `explain`; the checks' `find_graph_breaks` sends the learner's there)."""
    torch._dynamo.reset()
    with graph_break_log() as records:
        torch.compile(fn, dynamic=dynamic, backend=RecordingBackend())(*args)
    torch._dynamo.reset()
    found = []
    for record in records:
        text = record.getMessage()
        at = _BREAK_AT.search(text)
        reason_match = _REASON.search(text)
        reason = short_reason(reason_match.group(1) if reason_match else text)
        stack = stack_locations(text)
        loc = stack[-1] if stack else None
        if loc is None and at and is_learner_file(at.group(1)):
            loc = location(at.group(1), int(at.group(2)))
        found.append(GraphBreakDiagnostic(reason=reason, explanation=explain_reason(reason),
                                          location=loc, user_stack=stack, gb_id=break_registry.classify(text)))
    return found
