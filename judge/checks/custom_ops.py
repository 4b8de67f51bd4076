"""Custom operators in a captured graph, and `torch.library.opcheck` with messages for a learner."""

from __future__ import annotations

import torch
import torch.fx

from judge.checks.failures import WrongAnswer
from judge.reports.i18n import T
from judge.reports.report import GraphDiagnostic

# opcheck's sub-tests and what a failure of each one means for the person who registered the op
OPCHECK_MEANING = {
    "test_schema": T("the op does something its schema does not declare: it returns (a view of) an input, or "
                     "mutates an input without listing it in `mutates_args`"),
    "test_autograd_registration": T("the op's autograd registration is incomplete"),
    "test_faketensor": T("the fake implementation (`register_fake`) does not describe the real output: its shape, "
                         "dtype, device or strides differ from what the real kernel returns"),
    "test_aot_dispatch_dynamic": T("the op does not work when traced with symbolic shapes (AOTAutograd, "
                                   "`dynamic=True`)"),
}


def _overload(target) -> torch._ops.OpOverload | None:
    if isinstance(target, torch._ops.OpOverload):
        return target
    if isinstance(target, torch._ops.OpOverloadPacket):
        names = target.overloads()
        return getattr(target, "default" if "default" in names else names[0]) if names else None
    return None


def custom_op_nodes(gm: torch.fx.GraphModule, namespace: str) -> list[tuple[torch.fx.Node, torch._ops.OpOverload]]:
    """Every node of `gm` that calls an operator registered in `namespace` (e.g. "ext"), with the overload."""
    found = []
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        op = _overload(node.target)
        if op is not None and op.namespace == namespace:
            found.append((node, op))
    return found


def assert_calls_custom_op(gm: torch.fx.GraphModule, namespace: str, what: T | str = T("the captured graph")):
    """The custom-op nodes of `namespace` in `gm`; WrongAnswer showing the graph if there is none."""
    found = custom_op_nodes(gm, namespace)
    if found:
        return found
    ops = sorted({str(_overload(n.target)) for n in gm.graph.nodes
                  if n.op == "call_function" and _overload(n.target) is not None
                  and _overload(n.target).namespace not in ("aten", "prims", "higher_order")})
    diags = [GraphDiagnostic(title=T("captured graph"), code=gm.code.strip())]
    if ops:
        raise WrongAnswer(T("{what} calls no operator in the `{namespace}` namespace (it calls `{ops}`, in another "
                            "namespace): register the kernel with `torch.library.custom_op(\"{namespace}::<name>\", "
                            "...)` and call that op.", what=what, namespace=namespace, ops=", ".join(ops)), diags)
    raise WrongAnswer(T("{what} calls no operator in the `{namespace}` namespace: register the kernel with "
                        "`torch.library.custom_op(\"{namespace}::<name>\", ...)` and call that op.", what=what,
                        namespace=namespace), diags)


def assert_opcheck(op: torch._ops.OpOverload, args: tuple, kwargs: dict | None = None, *, case: T | str) -> None:
    """Run torch.library.opcheck(op, args, kwargs); WrongAnswer naming the failed sub-test and what it means."""
    try:
        results = torch.library.opcheck(op, args, kwargs, raise_exception=False)
    except Exception as exc:  # noqa: BLE001 - opcheck itself can fail on a broken registration
        first = (str(exc).splitlines() or [""])[0][:300]
        raise WrongAnswer(T("`torch.library.opcheck({op})` on {case} failed: `{error}: {detail}`", op=op, case=case,
                            error=type(exc).__name__, detail=first)) from None
    for test, outcome in results.items():
        if outcome == "SUCCESS":
            continue
        detail = str(outcome).strip().splitlines()[0][:400] if outcome else ""
        meaning = OPCHECK_MEANING.get(test)
        if meaning is None:
            raise WrongAnswer(T("`torch.library.opcheck({op})` on {case}: `{test}` failed. Detail: `{detail}`", op=op,
                                case=case, test=test, detail=detail))
        raise WrongAnswer(T("`torch.library.opcheck({op})` on {case}: `{test}` failed: {meaning}. Detail: `{detail}`",
                            op=op, case=case, test=test, meaning=meaning, detail=detail))
