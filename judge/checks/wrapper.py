"""What Inductor's generated `call()` does outside the kernels it generated (extern and fallback calls).

Inductor's output code has one `call(args)` per graph: it allocates buffers, runs the generated kernels
(`cpp_fused_*` on the CPU, `triton_*` on the GPU) and calls everything it could not generate itself:
`extern_kernels.mm`, fallback ATen ops (`aten.sort.default(...)`) and custom ops (`torch.ops.ext.rmsnorm.default(...)`).
Those opaque calls are where fusion stops. Use with `judge.checks.inductor_code`.
"""

from __future__ import annotations

import re

from judge.checks.failures import Forbidden, WrongAnswer
from judge.reports.i18n import T
from judge.reports.report import GraphDiagnostic

# A call of something Inductor did not generate: extern_kernels.mm(, torch.ops.ns.op.default(, aten.op.default(
_OPAQUE = re.compile(r"\b((?:extern_kernels|torch\.ops|aten)(?:\.\w+)+)\s*\(")
# Wrapper plumbing that is not a computation.
_PLUMBING = ("torch.ops.inductor.", "torch.ops.aten._assert", "aten._assert")


# The wrapper functions that run a compiled graph: call() (older releases: `def call(args)`) and, where Inductor
# split the graph for CUDA graphs, each piece's launcher `partition_N(args)`.
_WRAPPER_FN = re.compile(r"def (?:call|partition_\d+)\((?:self, )?args\):")


def call_bodies(codes: list[str]) -> list[str]:
    """The body of each generated `def call(self, args)` (one per compiled graph; with the bodies of its
    `partition_N` launchers where there are some), comments removed."""
    bodies = []
    for code in codes:
        lines = code.splitlines()
        for i, line in enumerate(lines):
            if not _WRAPPER_FN.fullmatch(line.strip()):
                continue
            indent = len(line) - len(line.lstrip())
            body = []
            for inner in lines[i + 1:]:
                if inner.strip() and len(inner) - len(inner.lstrip()) <= indent:
                    break
                code_part = inner.split("#", 1)[0].rstrip()
                if code_part.strip():
                    body.append(code_part)
            bodies.append("\n".join(body))
    return bodies


def opaque_operator(exc: Forbidden) -> str:
    """The operator a captured graph calls that the judge cannot rebuild (a learner's custom op), or '' when `exc`
    refused the graph for anything else. Such a graph is still one graph; what it means for Inductor (an opaque
    call that stops fusion) is a check of its own."""
    called = getattr(exc, "called", "") or ""
    return called if called.startswith("torch.ops.") else ""


def opaque_calls(codes: list[str]) -> list[str]:
    """Calls in `call()` that run outside generated kernels, e.g. ['extern_kernels.mm', 'torch.ops.ext.rms.default']."""
    found = []
    for body in call_bodies(codes):
        found.extend(name for name in _OPAQUE.findall(body) if not name.startswith(_PLUMBING))
    return found


def assert_no_opaque_calls(codes: list[str], what: T | str = T("your function")) -> None:
    """Fail with WRONG_ANSWER if Inductor's `call()` runs anything besides its generated kernels."""
    calls = opaque_calls(codes)
    if not calls:
        return
    diag = GraphDiagnostic(title=T("Inductor's `call()`"), code="\n\n".join(call_bodies(codes)), highlight=calls)
    raise WrongAnswer(T(
        "Inductor compiled {what} but its `call()` still runs `{calls}` outside the kernels it generated. Inductor "
        "cannot see inside such a call (a custom op, a matmul or an op without a lowering), so nothing fuses across "
        "it. Write that part with plain tensor operations.", what=what, calls=", ".join(sorted(set(calls)))), [diag])
