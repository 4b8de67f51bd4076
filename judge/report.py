"""The grading report: one versioned schema shared by the CLI, `--json`, the web UI and the API.

`Report.model_json_schema()` is the published JSON schema (see `docs/report-schema.json`).
Bump `REPORT_SCHEMA_VERSION` when a field changes meaning or disappears; adding an optional
field does not need a bump.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal, Union

from pydantic import BaseModel, Field

REPORT_SCHEMA_VERSION = 2


class Verdict(str, Enum):
    """The outcome of a grading. Every verdict but ACCEPTED means "not accepted"."""

    ACCEPTED = "ACCEPTED"
    WRONG_ANSWER = "WRONG_ANSWER"
    GRAPH_BREAK = "GRAPH_BREAK"
    RECOMPILE = "RECOMPILE"
    COMPILE_ERROR = "COMPILE_ERROR"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    LOAD_ERROR = "LOAD_ERROR"
    FORBIDDEN = "FORBIDDEN"
    TIME_LIMIT = "TIME_LIMIT"
    MEMORY_LIMIT = "MEMORY_LIMIT"
    OUTPUT_LIMIT = "OUTPUT_LIMIT"
    INTERNAL_ERROR = "INTERNAL_ERROR"


VERDICT_TEXT = {
    Verdict.ACCEPTED: "Accepted: every check passed.",
    Verdict.WRONG_ANSWER: "Wrong answer: the results differ from the original.",
    Verdict.GRAPH_BREAK: "Graph break: torch.compile could not capture your code as one graph.",
    Verdict.RECOMPILE: "Recompile: torch.compile compiled more often than allowed.",
    Verdict.COMPILE_ERROR: "Compile error: torch.compile failed on your code.",
    Verdict.RUNTIME_ERROR: "Runtime error: your code raised an exception or crashed.",
    Verdict.LOAD_ERROR: "Load error: your file could not be loaded.",
    Verdict.FORBIDDEN: "Forbidden: your code changed something a solution must not touch.",
    Verdict.TIME_LIMIT: "Time limit exceeded.",
    Verdict.MEMORY_LIMIT: "Memory limit exceeded.",
    Verdict.OUTPUT_LIMIT: "Output limit exceeded: your code printed too much.",
    Verdict.INTERNAL_ERROR: "Internal error: the judge failed; this is not your fault.",
}


class SourceLocation(BaseModel):
    """A place in a file, usually the learner's own."""

    file: str
    line: int
    column: int | None = None
    text: str = Field("", description="The source line, stripped.")
    function: str | None = None


class GraphBreakDiagnostic(BaseModel):
    kind: Literal["graph_break"] = "graph_break"
    reason: str = Field(description="Dynamo's reason, first lines only.")
    explanation: str = Field("", description="What the reason means, for a learner.")
    location: SourceLocation | None = Field(None, description="The learner's line where the graph broke.")
    user_stack: list[SourceLocation] = []


class Mismatch(BaseModel):
    index: list[int]
    expected: float | int | bool | str
    actual: float | int | bool | str


class MismatchDiagnostic(BaseModel):
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


class RecompileDiagnostic(BaseModel):
    kind: Literal["recompile"] = "recompile"
    compiles: int
    limit: int
    guard_failures: list[str] = Field([], description="Why each recompile happened (the guard that failed).")


class GraphDiagnostic(BaseModel):
    """What the compiler captured or generated, shown to help a learner see the graph."""

    kind: Literal["graph"] = "graph"
    title: str
    code: str
    highlight: list[str] = Field([], description="Node or kernel names the message refers to.")


class ErrorDiagnostic(BaseModel):
    kind: Literal["error"] = "error"
    exc_type: str
    message: str
    location: SourceLocation | None = None
    traceback: str = Field("", description="Truncated traceback, the raw detail one click away.")


Diagnostic = Annotated[
    Union[GraphBreakDiagnostic, MismatchDiagnostic, RecompileDiagnostic, GraphDiagnostic, ErrorDiagnostic],
    Field(discriminator="kind"),
]


class CheckResult(BaseModel):
    """One hidden test. Its name and message are shown; its code never is."""

    name: str
    title: str = ""
    passed: bool
    verdict: Verdict | None = Field(None, description="The verdict this failure implies; None when passed.")
    message: str = ""
    duration_s: float = 0.0
    diagnostics: list[Diagnostic] = []


class Report(BaseModel):
    schema_version: int = REPORT_SCHEMA_VERSION
    exercise_id: str
    verdict: Verdict
    summary: str = Field(description="One or two sentences for the learner.")
    checks: list[CheckResult] = []
    diagnostics: list[Diagnostic] = Field([], description="Diagnostics not tied to a check (load errors, crashes).")
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    duration_s: float = 0.0
    torch_version: str = ""
    sandbox: str = ""
    version_warning: str | None = Field(
        None, description="Set when the installed torch is not one of the exercise's verified_torch: the compiler "
                          "may behave differently there, so the verdict may too.")
    trust: Literal["verified", "self-checked"] = Field(
        "verified", description="'verified': decided outside the learner's process; 'self-checked': part of the "
                                "verdict rests on what the learner's process reported (see docs/security.md).")

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED

    def first_failure(self) -> CheckResult | None:
        return next((c for c in self.checks if not c.passed), None)


class ProgressEvent(BaseModel):
    """A live update while grading: queued, running, each check as it finishes, then done."""

    type: Literal["queued", "running", "check", "done"]
    check: CheckResult | None = None
    total_checks: int | None = None
    report: Report | None = None
