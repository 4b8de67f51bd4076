"""The report's diagnostics: what a check or a grading found (a graph break, a mismatch, a recompile, a graph, an
error), each where it happened in the learner's file. Part of the report's schema (judge/reports/report.py)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field

from judge.reports.localized import Localized


class SourceLocation(BaseModel):
    """A place in a file, usually the learner's own."""

    file: str
    line: int
    column: int | None = None
    text: str = Field("", description="The source line, stripped.")
    function: str | None = None


class PyTorchWords(Localized):
    """What PyTorch's graph-break registry says of one break type (judge/compiler/break_registry.py): its id, title,
    explanation and hints, and the page of that id; Chinese from the judge's catalogue of registry ids, English from
    the registry."""

    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("title", "explanation", "hints")
    gb_id: str = Field(description="The registry id, e.g. 'GB0170'.")
    title: str = Field(description="The registry's name of the break type (`gb_type`).")
    explanation: str = ""
    hints: str = Field("", description="PyTorch's hints, one per line.")
    url: str = Field("", description="The page of this id on PyTorch's graph-break site.")


class GraphBreakDiagnostic(Localized):
    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("explanation",)
    kind: Literal["graph_break"] = "graph_break"
    reason: str = Field(description="Dynamo's reason, first lines only.")
    explanation: str = Field("", description="What the reason means, for a learner.")
    location: SourceLocation | None = Field(None, description="The learner's line where the graph broke.")
    user_stack: list[SourceLocation] = []
    gb_id: str | None = Field(None, description="PyTorch's graph-break registry id of this break ('GB0170'), where "
                                                "Dynamo classified it.")
    pytorch: PyTorchWords | None = Field(None, description="PyTorch's own words for this id (set by the verifier "
                                                           "from the installed registry).")


class Mismatch(BaseModel):
    index: list[int]
    expected: float | int | bool | str
    actual: float | int | bool | str


class StageFinding(Localized):
    """Your code or the compiler? The captured graph run again under each compiler stage on the failing input, and
    the first stage whose result differs from the expected one (judge/verifier_side/stages.py; shown, never a
    verdict)."""

    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("explanation",)
    stage: Literal["eager", "aot_eager", "aot_eager_decomp_partition", "inductor"] = Field(
        description="The first stage that disagrees: 'eager' (the graph Dynamo captured from the learner's code, "
                    "run op by op: the learner's code computes this), 'aot_eager' (AOTAutograd's tracing), "
                    "'aot_eager_decomp_partition' (its decompositions and partitioning), 'inductor'.")
    agreed: list[str] = Field([], description="The earlier stages, each run here and found to agree.")
    subsystem: str = Field("", description="Where torch._inductor.compiler_bisector narrowed it within the stage "
                                           "(e.g. 'lowerings', 'decomposition', 'post_grad_passes'), if it did.")
    detail: str = Field("", description="What the bisector named within that subsystem: the operator whose "
                                        "lowering or decomposition, or the pass, changes the numbers.")
    explanation: str = Field("", description="The finding in words, for the learner.")


class MismatchDiagnostic(Localized):
    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("case", "what")
    kind: Literal["mismatch"] = "mismatch"
    case: str = Field(description="The input case, e.g. 'x [4, 16] float32, sum exactly zero'.")
    what: str = Field("output", description="Which value differed: 'output', 'output[1]', 'grad of x', ...")
    expected_shape: list[int] | None = None
    actual_shape: list[int] | None = None
    expected_dtype: str | None = None
    actual_dtype: str | None = None
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    mismatch_count: int | None = None
    total: int | None = None
    first_mismatches: list[Mismatch] = []
    rtol: float | None = None
    atol: float | None = None
    stage: StageFinding | None = Field(None, description="Your code or the compiler: the first compiler stage whose "
                                                         "result differs (set by the verifier on a compiled "
                                                         "graph's mismatch).")


class GuardOrigin(Localized):
    """Where a guard came from: the learner's line that made Dynamo add it, and what kind of specialisation it is
    (judge/compiler/guard_origin.py)."""

    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("explanation",)
    guard: str = Field(description="The guard as Dynamo words it, e.g. `L['n'] == 2`.")
    compile_id: str = Field("", description="The compile that installed it, e.g. '0/1'.")
    kind: Literal["value", "static_size", "zero_one", "duck", "size_branch", "type", "other"] = "other"
    location: SourceLocation | None = Field(None, description="The learner's line that added the guard.")
    explanation: str = Field("", description="What this kind of guard means, for a learner.")
    count: int = Field(1, description="How many times this guard failed from this line (in different calls or "
                                      "compiles); the finding is shown once.")
    also: list[SourceLocation] = Field([], description="The same guard's lines in the pieces after a graph break: "
                                                       "each piece is a frame of its own that checks it again.")


class RecompileDiagnostic(Localized):
    kind: Literal["recompile"] = "recompile"
    compiles: int
    limit: int
    guard_failures: list[str] = Field([], description="Why each recompile happened (the guard that failed).")
    origin: GuardOrigin | None = Field(None, description="Where the first failing guard came from.")


class GraphDiagnostic(Localized):
    """What the compiler captured or generated, shown to help a learner see the graph."""
    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("title",)

    kind: Literal["graph"] = "graph"
    title: str
    code: str
    highlight: list[str] = Field([], description="Node or kernel names the message refers to.")


class ErrorDiagnostic(Localized):
    """An exception: its message is Python's or torch's own text, shown under a fold (translated where the
    judge wrote it, e.g. a load error)."""

    kind: Literal["error"] = "error"
    exc_type: str
    message: str
    location: SourceLocation | None = None
    traceback: str = Field("", description="Truncated traceback, the raw detail one click away.")


Diagnostic = Annotated[
    GraphBreakDiagnostic | MismatchDiagnostic | RecompileDiagnostic | GraphDiagnostic | ErrorDiagnostic,
    Field(discriminator="kind"),
]
