"""Eager requests: call a runner object, copy a module's state, explain its graph breaks.

The runner sees every argument of these calls as it is (send `example_like(...)` where it must not see a
hidden value); what it answers can only make a check fail or explain why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from judge.remote.context import current
from judge.remote.failures import YOUR_FUNCTION, YOUR_MODULE, Protocol, raise_learner_error
from judge.remote.values import RunnerObject, decode_result, encode_arg, example_like, result_or_object
from judge.reports.i18n import T
from judge.reports.report import GraphBreakDiagnostic
from judge.shared.protocol import Request


@dataclass
class EagerResult:
    """One eager call's result, printed text, and what the learner's code handed the judge's objects."""

    value: object
    printed: str = ""
    kept: RunnerObject | None = None
    type_name: str = ""  # the runner's name for the result's type when it came back as a Ref (not data)
    notes: list = field(default_factory=list)  # what the judge's objects sent while the call ran, in order


def call_printing(target: RunnerObject, *args, what=YOUR_FUNCTION, keep: bool = False, **kwargs) -> EagerResult:
    """Call `target` eagerly in the runner on `args` (which the runner sees): its result and printed text.

    A result that is not data (a module, a function) comes back as a Ref to the object kept in the runner;
    with `keep`, `kept` is such a Ref even when the result is data (e.g. a GraphModule to run there later).
    """
    answer = current().runner.request(Request.CALL, target=target.spec, args=encode_arg(tuple(args)),
                                      kwargs=encode_arg(dict(kwargs)), keep=keep)
    if answer.get("error"):
        raise_learner_error(answer["error"], what)
    kept = target.kept(answer["handle"]) if keep and isinstance(answer.get("handle"), str) else None
    result = answer.get("result")
    type_name = str(result.get("type", ""))[:80] if isinstance(result, dict) and "handle" in result else ""
    return EagerResult(result_or_object(result, target), str(answer.get("printed", ""))[:20000], kept, type_name,
                       list(answer.get("notes", [])))


def call(target: RunnerObject, *args, what=YOUR_FUNCTION, **kwargs):
    """The result of calling `target` eagerly in the runner (see `call_printing`)."""
    return call_printing(target, *args, what=what, **kwargs).value


def state(target: RunnerObject, what=YOUR_MODULE, *, graph_inputs: bool = False) -> dict[str, torch.Tensor]:
    """A copy of the state_dict of a module kept in the runner (the verifier's own tensors from then on).

    With `graph_inputs`, every parameter and buffer instead (non-persistent buffers too): what a captured
    graph of the module reads, for `compiled.state["target"]`."""
    answer = current().runner.request(Request.STATE, target=target.spec, graph_inputs=graph_inputs)
    if answer.get("error"):
        raise_learner_error(answer["error"], what)
    found = answer.get("state")
    if not isinstance(found, dict):
        raise Protocol(T("malformed state"))
    return {str(k): decode_result(v, target) for k, v in found.items()}


def load_state(target: RunnerObject, tensors: dict[str, torch.Tensor], what=YOUR_MODULE) -> None:
    """module.load_state_dict(tensors) in the runner."""
    answer = current().runner.request(Request.LOAD_STATE, target=target.spec, state=encode_arg(dict(tensors)))
    if answer.get("error"):
        raise_learner_error(answer["error"], what)


def explain(target: RunnerObject, *args, dynamic=None, what=YOUR_FUNCTION) -> list[GraphBreakDiagnostic]:
    """Every graph break Dynamo takes in the runner on example inputs like `args`."""
    answer = current().runner.request(Request.EXPLAIN, target=target.spec,
                                      args=encode_arg(example_like(tuple(args))), options={"dynamic": dynamic})
    if answer.get("error"):
        raise_learner_error(answer["error"], what)
    found = []
    for item in answer.get("breaks", [])[:50] if isinstance(answer.get("breaks"), list) else []:
        try:
            found.append(GraphBreakDiagnostic.model_validate(item))
        except ValueError:
            raise Protocol(T("malformed graph-break description")) from None
    return found
