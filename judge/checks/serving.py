"""Serving checks: calls that must not compile again, and graphs that must stay static.

    outputs = serve_without_recompile(compiled, [(f"T={t}", (x_t,)) for t, x_t in ...], what="the decode step")
    assert_static_graphs(counter, what="core")
"""

from __future__ import annotations

import re

import torch

from judge.checks.failures import Recompile, WrongAnswer
from judge.compiler.logs import recompile_log
from judge.reports.i18n import T
from judge.reports.report import GraphDiagnostic, RecompileDiagnostic

FAIL_ON_RECOMPILE = "fail_on_recompile"

# (pattern in a guard-failure reason, explanation for a learner)
_GUARD_EXPLANATIONS = [
    (r"0/1 specialization|^2 <= |expected [01], actual|actual [01]$",
     T("sizes 0 and 1 are always specialised: a dynamic graph covers sizes >= 2 only, and a graph compiled "
       "at size 1 serves size 1 only")),
    (r"GLOBAL_STATE changed: grad_mode",
     T("grad mode differs from the calls that compiled the graphs; `torch.no_grad` and `torch.inference_mode` "
       "are part of the guards")),
    (r"dtype mismatch|expected dtype|dtype=",
     T("the dtype differs from the calls that compiled the graphs")),
    (r"size mismatch",
     T("this size was never seen while compiling, and the dimension was compiled as static")),
]


def explain_guard(reason: str) -> T | str:
    """A learner-readable explanation of one guard-failure reason, in both languages ('' when there is none)."""
    for pattern, text in _GUARD_EXPLANATIONS:
        if re.search(pattern, reason):
            return text
    return ""


def short_guard(reason: str) -> str:
    """The guard itself, without the source comment and hint Dynamo appends after '#'."""
    return reason.split("  #")[0].split(" # ")[0].strip()


def _is_recompile_refusal(exc: BaseException) -> bool:
    return isinstance(exc, RuntimeError) and FAIL_ON_RECOMPILE in str(exc) and "recompile" in str(exc).lower()


def serve_without_recompile(fn, cases, *, what: T | str = T("the compiled function")) -> list:
    """Call `fn(*args)` for every `(label, args)` in `cases` under set_stance("fail_on_recompile").

    Returns the outputs. When a call would compile again, raises Recompile naming the case and the
    guard that failed (found by repeating that one call with recompiles allowed).
    """
    outputs = []
    for label, args in cases:
        try:
            with torch.compiler.set_stance(FAIL_ON_RECOMPILE):
                outputs.append(fn(*args))
        except RuntimeError as exc:
            if not _is_recompile_refusal(exc):
                raise
            raise _recompile_failure(fn, label, args, what) from None
    return outputs


def _recompile_failure(fn, label: T | str, args, what: T | str) -> Recompile:
    with recompile_log() as reasons:
        fn(*args)
    guards = [short_guard(r) for r in reasons]
    explanation = explain_guard(reasons[0]) if guards else ""
    if explanation:
        message = T("{what} had to compile again when serving {label}. The guard that failed: `{guard}`: "
                    "{explanation}.", what=what, label=label, guard=guards[0], explanation=explanation)
    elif guards:
        message = T("{what} had to compile again when serving {label}. The guard that failed: `{guard}`.",
                    what=what, label=label, guard=guards[0])
    else:
        message = T("{what} had to compile again when serving {label}.", what=what, label=label)
    return Recompile(message, [RecompileDiagnostic(compiles=len(guards) + 1, limit=len(guards),
                                                         guard_failures=guards[:10])])


def symbolic_inputs(gm: torch.fx.GraphModule) -> list[str]:
    """Inputs of a captured graph whose sizes are symbolic, e.g. ['x [3, s0, 8]', 's0']."""
    found = []
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        value = node.meta.get("example_value")
        if isinstance(value, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in value.shape):
            found.append(f"{node.name} {[str(s) for s in value.shape]}".replace("'", ""))
        elif isinstance(value, (torch.SymInt, torch.SymFloat)):
            found.append(str(value))
        elif value is None:  # a graph rebuilt from the runner's IR: the recorded shape names its symbols
            recorded = node.meta.get("ir", {}).get("value")
            recorded = recorded if isinstance(recorded, dict) else {}
            shape = recorded.get("shape")
            if isinstance(shape, list) and any(not isinstance(s, int) for s in shape):
                found.append(f"{node.name} [{', '.join(str(s) for s in shape)}]")
            elif "sym" in recorded:
                found.append(str(recorded["sym"])[:40])
    return found


def assert_static_graphs(graphs: list[torch.fx.GraphModule], *, what: T | str = T("the graph")) -> None:
    """Fail with WrongAnswer if any captured graph takes inputs with symbolic (dynamic) sizes."""
    for i, gm in enumerate(graphs, start=1):
        symbolic = symbolic_inputs(gm)
        if symbolic:
            raise WrongAnswer(
                T("{what} was compiled as a dynamic graph (compile {i} takes `{inputs}`); it must be compiled for "
                  "static shapes only, so do not mark dimensions dynamic.", what=what, i=i,
                  inputs=", ".join(symbolic)),
                [GraphDiagnostic(title=T("compile {i}", i=i), code=gm.code.strip(), highlight=symbolic)])
