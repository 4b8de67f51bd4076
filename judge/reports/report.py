"""The grading report: one versioned schema shared by the CLI, `--json`, the web UI and the API.

`Report.model_json_schema()` is the published JSON schema (see `docs/report-schema.json`).
Bump `REPORT_SCHEMA_VERSION` when a field changes meaning or disappears; adding an optional
field does not need a bump.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from judge.reports.diagnostics import (  # noqa: F401 - the report's schema, importable from here as before
    Diagnostic,
    ErrorDiagnostic,
    GraphBreakDiagnostic,
    GraphDiagnostic,
    GuardOrigin,
    Mismatch,
    MismatchDiagnostic,
    PyTorchWords,
    RecompileDiagnostic,
    SourceLocation,
    StageFinding,
)
from judge.reports.i18n import T
from judge.reports.localized import (  # noqa: F401 - the report's schema, importable from here as before
    Localized,
    ModelT,
    localized,
)
from judge.reports.sections import (  # noqa: F401 - the report's schema, importable from here as before
    CapturedGraph,
    CompileCost,
    CompiledCost,
    CompileEvent,
    CompilerView,
    CostFigures,
    CostSection,
    EagerCost,
    TimedCost,
)

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


# A verdict's short name: what the CLI and the pages show beside its code ("Wrong answer · WRONG_ANSWER").
VERDICT_NAME = {
    Verdict.ACCEPTED: T("Accepted"),
    Verdict.WRONG_ANSWER: T("Wrong answer"),
    Verdict.GRAPH_BREAK: T("Graph break"),
    Verdict.RECOMPILE: T("Recompile"),
    Verdict.COMPILE_ERROR: T("Compile error"),
    Verdict.RUNTIME_ERROR: T("Runtime error"),
    Verdict.LOAD_ERROR: T("Load error"),
    Verdict.FORBIDDEN: T("Forbidden"),
    Verdict.TIME_LIMIT: T("Time limit exceeded"),
    Verdict.MEMORY_LIMIT: T("Memory limit exceeded"),
    Verdict.OUTPUT_LIMIT: T("Output limit exceeded"),
    Verdict.INTERNAL_ERROR: T("Internal error"),
}
# The verdict as a report's summary says it when nothing more specific does.
VERDICT_TEXT = {
    Verdict.ACCEPTED: T("Accepted: every check passed."),
    Verdict.WRONG_ANSWER: T("Wrong answer: the results differ from the original."),
    Verdict.GRAPH_BREAK: T("Graph break: torch.compile could not capture your code as one graph."),
    Verdict.RECOMPILE: T("Recompile: torch.compile compiled more often than allowed."),
    Verdict.COMPILE_ERROR: T("Compile error: torch.compile failed on your code."),
    Verdict.RUNTIME_ERROR: T("Runtime error: your code raised an exception or crashed."),
    Verdict.LOAD_ERROR: T("Load error: your file could not be loaded."),
    Verdict.FORBIDDEN: T("Forbidden: your code changed something a solution must not touch."),
    Verdict.TIME_LIMIT: T("Time limit exceeded."),
    Verdict.MEMORY_LIMIT: T("Memory limit exceeded."),
    Verdict.OUTPUT_LIMIT: T("Output limit exceeded: your code printed too much."),
    Verdict.INTERNAL_ERROR: T("Internal error: the judge failed; this is not your fault."),
}


class CheckResult(Localized):
    """One hidden test. Its name and message are shown; its code never is."""
    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("title", "message", "learner_process")

    name: str
    title: str = ""
    passed: bool
    verdict: Verdict | None = Field(None, description="The verdict this failure implies; None when passed.")
    message: str = ""
    duration_s: float = 0.0
    diagnostics: list[Diagnostic] = []
    properties: dict[str, int | float | str] = Field(
        {}, description="Facts the check records to make its verdict reproducible, e.g. a search's seed and "
                        "budget (pytest's record_property).")
    same_as: str = Field("", description="The name of an earlier failed check whose finding (the same graph break, "
                                         "recompile or error) this failure repeats: front-ends show the finding once "
                                         "and point to that check here. Empty: a finding of its own.")
    learner_process: str = Field(
        "", description="Set when the check, passed, rests on a fact the learner's own process reported (so it "
                        "cannot rule out forgery): which fact, and why nothing outside that process can observe it "
                        "(docs/security.md lists every such check). Empty: decided outside the learner's process.")


def finding_of(check: CheckResult) -> str:
    """What a failed check found, as a key: two checks with the same key failed for the same reason, whatever
    each check's own words (the same graph break at the same line, the same failing guard, the same error)."""
    if not check.diagnostics:
        return json.dumps(["message", check.message])
    keys = []
    for diag in check.diagnostics:
        if isinstance(diag, GraphBreakDiagnostic):
            where = diag.location.model_dump(mode="json") if diag.location else None
            keys.append(["graph_break", diag.gb_id, where, diag.reason.splitlines()[0] if diag.reason else ""])
        else:
            keys.append(diag.model_dump(mode="json", exclude={"translations"}))
    return json.dumps(keys, sort_keys=True, default=str)


def mark_repeats(checks: list[CheckResult]) -> None:
    """Set `same_as` on each failed check whose finding an earlier failed check already has."""
    first: dict[str, str] = {}
    for check in checks:
        if check.passed:
            continue
        key = finding_of(check)
        if key in first:
            check.same_as = first[key]
        else:
            first[key] = check.name


class TierSection(Localized):
    """One tier's outcome inside a later tier's report (judge/shared/tiers.py): the CPU tier a GPU grading followed."""

    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("summary",)
    tier: str = Field(description="The tier: 'cpu'.")
    verdict: Verdict
    summary: str = ""
    checks: list[CheckResult] = []
    duration_s: float = 0.0

    @classmethod
    def of(cls, report: Report) -> TierSection:
        return cls(tier=report.tier or "", verdict=report.verdict, summary=report.summary, checks=report.checks,
                   duration_s=report.duration_s,
                   translations={lang: {k: v for k, v in texts.items() if k == "summary"}
                                 for lang, texts in report.translations.items()})


class Report(Localized):
    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("summary", "sandbox")
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
    compiler: CompilerView | None = Field(None, description="What Dynamo captured, why it recompiled, its guards "
                                                             "and Inductor's code (the compiler's view).")
    cost: CostSection | None = Field(None, description="What compiling bought: ATen ops and bytes in eager mode, the "
                                                       "kernels and Inductor's byte estimate compiled, and time on "
                                                       "a GPU; for the learner's, the reference's and the starter's "
                                                       "function (judge/costs/measure.py; decides nothing by itself).")
    trust: Literal["verified", "self-checked"] = Field(
        "verified", description="'verified': decided outside the learner's process; 'self-checked': part of the "
                                "verdict rests on what the learner's process reported (see docs/security.md).")
    seed: int | None = Field(
        None, description="The grading's draw (judge/shared/draw.py): chose its inputs, sizes and searches; the "
                          "same file on the same exercise version draws the same. `grade(..., seed=...)` replays it.")
    fingerprint: str | None = Field(
        None, description="The exercise version this report was graded under (judge.parent.fingerprint: hidden tests, "
                          "reference, starter, public module, contract, limits, the judge's own version); None "
                          "for reports made before versions were recorded.")
    tier: str | None = Field(None, description="Set on a tier's own report (judge/shared/tiers.py): 'cpu' when only "
                                               "the exercise's CPU tier was graded; ACCEPTED then means it passed that "
                                               "tier, not the exercise.")
    tiers: list[TierSection] = Field([], description="The tiers graded before this report's (the CPU tier of a GPU "
                                                     "exercise), each with its verdict and checks.")

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED

    def first_failure(self) -> CheckResult | None:
        return next((c for c in self.checks if not c.passed), None)


class ProgressEvent(BaseModel):
    """A live update while grading: queued, running, each check as it finishes, then done; `tier` when a tier was
    passed and the file waits for the next (its report, its place in that queue and an estimate of the wait)."""

    type: Literal["queued", "running", "check", "tier", "done"]
    check: CheckResult | None = None
    total_checks: int | None = None
    report: Report | None = None
    position: int | None = Field(None, description="`tier`: its place in the queue it now waits in (1: next).")
    wait_s: float | None = Field(None, description="`tier`: an estimate of that wait, in seconds.")
