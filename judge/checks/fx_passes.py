"""Run a learner's FX pass on the ATen graph AOTAutograd produces, and count what the graph holds and runs.

    gm, args = aten_graph(model, x)          # the post-AOTAutograd inference graph and its real inputs
    out = apply_pass(silu_pass, gm)          # the learner's pass, called outside torch.compile
    out = apply_pass(entry, gm)              # entry: a judge.remote.Ref; the pass runs in the runner on gm's IR
    op_counts(out)["aten.silu.default"]      # what the graph holds
    output, ran = executed_ops(out, *args)   # what actually ran (catches a forgotten gm.recompile())
"""

from __future__ import annotations

import collections

import torch
import torch.fx

from judge.checks.failures import WrongAnswer
from judge.checks.instrument import executed_ops as _counted_ops
from judge.reports.i18n import T, in_code
from judge.reports.report import GraphDiagnostic


def aten_graph(fn, *inputs) -> tuple[torch.fx.GraphModule, list]:
    """The ATen forward graph AOTAutograd hands to the compiler for `fn(*inputs)` (inference, no grad),
    with the real tensors it is called with (lifted parameters first, then the inputs)."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    captured: dict = {}

    def forward_compiler(gm, example_inputs):
        captured["gm"] = gm

        def run(*args):
            captured.setdefault("args", list(args))
            return gm(*args)

        return make_boxed_func(run)

    with torch.no_grad():
        torch.compile(fn, backend=aot_autograd(fw_compiler=forward_compiler), fullgraph=True)(*inputs)
    torch._dynamo.reset()
    return captured["gm"], captured["args"]


def apply_pass(pass_fn, gm: torch.fx.GraphModule, name: T | str = T("your pass")) -> torch.fx.GraphModule:
    """Call the learner's pass (its exceptions propagate as theirs) and check it returned a valid GraphModule.

    `pass_fn` may be a `judge.remote.Ref` (the learner's entry point): see `apply_remote_pass`."""
    from judge import remote

    if isinstance(pass_fn, remote.Ref):
        return apply_remote_pass(pass_fn, gm, name)[0]
    result = pass_fn(gm)
    if not isinstance(result, torch.fx.GraphModule):
        raise _not_a_graph_module(name, type(result).__name__)
    try:
        result.graph.lint()
    except Exception as exc:  # noqa: BLE001 - lint raises plain RuntimeErrors
        raise WrongAnswer(_invalid_graph(name, exc), [graph_diagnostic(result)]) from None
    return result


def _not_a_graph_module(name: T | str, kind: str) -> WrongAnswer:
    return WrongAnswer(T("{name} must return a `torch.fx.GraphModule` (usually the one it was given, edited); it "
                         "returned `{kind}`", name=name, kind=kind))


def _invalid_graph(name: T | str, detail) -> T:
    return T("{name} left an invalid graph: `{detail}`", name=name, detail=in_code(str(detail).strip()))


def apply_remote_pass(pass_ref, gm: torch.fx.GraphModule, name: T | str = T("your pass")):
    """Run the learner's pass in the runner and rebuild the graph it returns here: (graph, Ref to the runner's
    returned object, for asking what running it there does).

    `gm` travels as IR (the runner sees the graph, never the inputs it will run on); the returned graph, with
    its submodules, is rebuilt from `judge.shared.ir`'s allowlist, so what the verifier checks and runs is data."""
    from judge import remote

    try:
        answer = remote.call_printing(pass_ref, gm, what=name, keep=True)
    except remote.MalformedGraph as exc:
        raise WrongAnswer(_invalid_graph(name, exc.detail)) from None
    result = answer.value
    if not isinstance(result, torch.fx.GraphModule):
        kind = answer.type_name or type(result).__name__
        raise _not_a_graph_module(name, kind)
    return result, answer.kept


def target_name(target) -> str:
    """'aten.mul.Tensor' for an OpOverload, 'torch.nn.functional.silu' for a function, the string otherwise."""
    if isinstance(target, str):
        return target
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return str(target)
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    return f"{module}.{name}" if module else name


def op_counts(gm: torch.fx.GraphModule) -> collections.Counter:
    """How many call_function nodes the graph has per target, e.g. {'aten.mul.Tensor': 2}."""
    return collections.Counter(target_name(n.target) for n in gm.graph.nodes if n.op == "call_function")


def dead_nodes(gm: torch.fx.GraphModule) -> list[str]:
    """Names of computations nobody uses (left behind by a pass that forgot to erase them)."""
    return [n.name for n in gm.graph.nodes if n.op == "call_function" and not n.users and not n.is_impure()]


def graph_diagnostic(gm: torch.fx.GraphModule, title: T | str = T("graph after your pass"),
                     highlight: list[str] | None = None) -> GraphDiagnostic:
    return GraphDiagnostic(title=title, code=gm.graph.python_code("self").src.strip(), highlight=highlight or [])


def executed_ops(fn, *args) -> tuple[object, collections.Counter]:
    """Call `fn(*args)` and count the ATen ops that really ran, e.g. {'aten.silu.default': 2}
    (judge.checks.instrument.executed_ops: through torch.cond and while_loop too)."""
    return _counted_ops(fn, *args)
