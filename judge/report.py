"""The grading report: one versioned schema shared by the CLI, `--json`, the web UI and the API.

`Report.model_json_schema()` is the published JSON schema (see `docs/report-schema.json`).
Bump `REPORT_SCHEMA_VERSION` when a field changes meaning or disappears; adding an optional
field does not need a bump.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated, ClassVar, Literal, TypeVar

from pydantic import BaseModel, Field, model_validator

from judge.i18n import OTHER_LANGS, SOURCE_LANG, T

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


class Localized(BaseModel):
    """A model with learner-facing text: its `TEXT_FIELDS` hold English, `translations` the other languages.

    Pass a `judge.i18n.T` for a text field (when constructing, or through `set_text`): the English goes to
    the field, every translation into `translations`. `localized(lang)` gives the model in one language."""

    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ()
    translations: dict[str, dict[str, str]] = Field(
        {}, description="The text fields in languages other than English: {lang: {field: text}}.")

    @model_validator(mode="before")
    @classmethod
    def _split_texts(cls, data):
        if isinstance(data, dict) and any(isinstance(v, T) for v in data.values()):
            data = dict(data)
            translations = {lang: dict(fields) for lang, fields in (data.get("translations") or {}).items()}
            for name, value in list(data.items()):
                if isinstance(value, T):
                    data[name] = value.render(SOURCE_LANG)
                    _store(translations, name, value)
            data["translations"] = translations
        return data

    def set_text(self, name: str, value) -> None:
        """Set a text field to a T (or a plain string, which has no translation)."""
        rendered: dict = {}
        if isinstance(value, T):  # rendered first: `value` may be built from this very field
            _store(rendered, name, value)
            value = value.render(SOURCE_LANG)
        for fields in self.translations.values():
            fields.pop(name, None)
        for lang, fields in rendered.items():
            self.translations.setdefault(lang, {}).update(fields)
        setattr(self, name, value)

    def text(self, name: str) -> T:
        """Field `name` as a T in every language it has (to build a longer message from it)."""
        return T.of(self, name)

    def text_or_english(self, name: str) -> T:
        """Field `name` as a T; its English in every language where it lacks another (text the runner wrote)."""
        if all(name in self.translations.get(lang, {}) for lang in OTHER_LANGS):
            return self.text(name)
        return T.same(str(getattr(self, name) or ""))

    def missing_texts(self, lang: str) -> list[str]:
        """The text fields (here and in nested models) that are not empty and have no `lang` text."""
        missing = [name for name in self.TEXT_FIELDS
                   if getattr(self, name) and name not in self.translations.get(lang, {})]
        for name, value in self:
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, Localized):
                    missing += [f"{name}.{m}" for m in item.missing_texts(lang)]
        return missing


def _store(translations: dict, name: str, value: T) -> None:
    for lang in OTHER_LANGS:
        rendered = value.render(lang)
        if rendered is not None:
            translations.setdefault(lang, {})[name] = rendered


ModelT = TypeVar("ModelT", bound=BaseModel)


def localized(model: ModelT, lang: str) -> ModelT:
    """A copy of `model` (and the models in it) with every text field in `lang`, where it has that text."""
    updates = {}
    for name, value in model:
        if isinstance(value, BaseModel):
            updates[name] = localized(value, lang)
        elif isinstance(value, list) and any(isinstance(v, BaseModel) for v in value):
            updates[name] = [localized(v, lang) if isinstance(v, BaseModel) else v for v in value]
    if isinstance(model, Localized) and lang != SOURCE_LANG:
        updates.update(model.translations.get(lang, {}))
    return model.model_copy(update=updates)


class SourceLocation(BaseModel):
    """A place in a file, usually the learner's own."""

    file: str
    line: int
    column: int | None = None
    text: str = Field("", description="The source line, stripped.")
    function: str | None = None


class PyTorchWords(Localized):
    """What PyTorch's graph-break registry says of one break type (judge/break_registry.py): its id, title,
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
    the first stage whose result differs from the expected one (judge/stages.py; shown, never a verdict)."""

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
    (judge/guard_origin.py)."""

    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("explanation",)
    guard: str = Field(description="The guard as Dynamo words it, e.g. `L['n'] == 2`.")
    compile_id: str = Field("", description="The compile that installed it, e.g. '0/1'.")
    kind: Literal["value", "static_size", "zero_one", "duck", "size_branch", "type", "other"] = "other"
    location: SourceLocation | None = Field(None, description="The learner's line that added the guard.")
    explanation: str = Field("", description="What this kind of guard means, for a learner.")
    count: int = Field(1, description="How many times this guard failed from this line (in different calls or "
                                      "compiles); the finding is shown once.")


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


class CapturedGraph(BaseModel):
    """One graph Dynamo captured from the learner's code."""

    code: str = Field(description="The graph as Python (FX), with the learner's line above the nodes it made.")
    learner_lines: list[int] = Field([], description="The learner's lines the graph's nodes came from.")
    inputs: str = Field("", description="What the graph takes, e.g. 'x: float32[s0, 16], w: float32[16, 16]' "
                                        "(a symbol is a dynamic size).")


class CompilerView(BaseModel):
    """What the compiler made of the learner's code over a grading (shown after every grading; decides nothing)."""

    graphs: list[CapturedGraph] = []
    recompiles: list[str] = Field([], description="Why Dynamo compiled again: the guard that failed, as Dynamo says.")
    guards: str = Field("", description="The guards of the first compile, as Dynamo printed them in the learner's "
                                        "process (shown, never relied on).")
    kernels: list[str] = Field([], description="Code Inductor generated for those graphs, in the verifier.")
    timeline: list[CompileEvent] = Field([], description="Each call of a compiled target, in order: its inputs as "
                                                           "the compiler saw them and whether it compiled again.")
    origins: list[GuardOrigin] = Field([], description="Where each guard that failed came from.")


class CompileEvent(BaseModel):
    """One call of a compiled target: the inputs the compiler saw and what it did (decides nothing)."""

    test: str = Field("", description="The hidden test (or playground call) that made the call.")
    call: int = Field(description="The call's number within its test, from 1.")
    inputs: str = Field(description="The call's inputs, e.g. 'float32[4, 8], int 3'.")
    compiled: int = Field(0, description="Graphs Dynamo compiled on this call (0: a cached graph ran).")
    guard: str = Field("", description="The guard that failed and made it compile again, if one did.")
    line: int | None = Field(None, description="The learner's line that added that guard.")


CompilerView.model_rebuild()


class EagerCost(BaseModel):
    """What running a graph op by op (eager) dispatched: counted by the verifier (judge/cost.py)."""

    ops: int = Field(description="ATen operators that did work (each one a kernel in eager mode).")
    views: int = Field(0, description="View operators (no kernel, no memory traffic).")
    bytes_read: int = Field(description="Bytes the operators read: each tensor input's distinct elements.")
    bytes_written: int = Field(description="Bytes the operators wrote: each output's distinct elements (an in-place "
                                           "update writes its input).")

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written


class CompileCost(BaseModel):
    """What compiling cost, counted where it ran, in the verifier (judge/cost.py): Dynamo's frames and guards, and the
    seconds, shown and never deciding (they depend on the machine, its load and the compile caches)."""

    frames: int | None = Field(None, description="Frames Dynamo traced (a graph break adds the frame that resumes "
                                                 "after it; CompilationMetrics, one per frame). None for the "
                                                 "learner's function: Dynamo traced it in the learner's own process, "
                                                 "whose figures are never taken (the compiler view shows its guards).")
    guards: int | None = Field(None, description="Guards Dynamo installed on those frames (CompilationMetrics."
                                                 "guard_count, summed): what every later call checks before it may "
                                                 "reuse the compiled code. None for the learner's function.")
    dynamo_s: float | None = Field(None, description="Seconds Dynamo spent on those frames besides the backend's "
                                                     "compile (shown, never deciding). None for the learner's "
                                                     "function.")
    inductor_s: float = Field(0.0, description="Seconds Inductor spent compiling the graphs here (shown, never "
                                               "deciding; an FX-graph cache hit takes almost none).")


class CompiledCost(BaseModel):
    """What Inductor made of the graphs, compiled by the verifier (judge/cost.py)."""

    graphs: int = Field(1, description="Graphs Inductor compiled (more than one: the function has graph breaks).")
    kernels: list[str] = Field([], description="Kernels Inductor generated (C++ or Triton), by name.")
    extern_calls: list[str] = Field([], description="Calls outside the generated kernels (extern matmuls, fallback "
                                                    "ATen ops, custom ops).")
    bytes_estimate: int = Field(description="Inductor's own estimate of the bytes its scheduled nodes read and "
                                            "write (torch._inductor.metrics.num_bytes_accessed): not a hardware "
                                            "counter.")
    eager_ops_outside: int = Field(0, description="Operators that ran eagerly outside every compiled graph (after a "
                                                  "graph break).")
    eager_bytes_outside: int = Field(0, description="Bytes those eager operators read and wrote.")
    compile: CompileCost | None = Field(None, description="What compiling cost: frames, guards and seconds (beside "
                                                          "`graphs`).")

    @property
    def bytes(self) -> int:
        return self.bytes_estimate + self.eager_bytes_outside


class TimedCost(BaseModel):
    """Time measured on a GPU (judge/cost.py: measure_time): per call, medians over timed batches."""

    median_us: float = Field(description="Median GPU time per call over the timed batches, microseconds.")
    spread_us: float = Field(description="Half the distance between the batches' 25th and 75th percentiles.")
    batches: int
    calls_per_batch: int
    relative_standard_error: float
    cpu_us_per_step: float | None = Field(None, description="Median CPU time to issue one call (what CUDA graphs "
                                                            "remove), microseconds.")
    compile_s: float | None = Field(None, description="Time the first call took (compiling), apart from the rest.")


class CostFigures(Localized):
    """The figures of one function: the learner's, the reference's or the starter's."""

    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("unavailable",)
    who: Literal["learner", "reference", "starter"]
    eager: EagerCost | None = None
    compiled: CompiledCost | None = None
    eager_time: TimedCost | None = None
    compiled_time: TimedCost | None = None
    unavailable: str = Field("", description="Why this function has no figures (e.g. it did not compile to one "
                                             "graph).")


class CostSection(BaseModel):
    """What compiling bought: kernels, bytes moved and time, measured by the verifier on graphs it rebuilt."""

    inputs: str = Field(description="The inputs the figures are for, e.g. 'x: float32[8, 64], w: float32[64]'.")
    device: str = "cpu"
    torch_version: str = Field(description="The torch the figures were measured with: they are pinned to it.")
    estimate: Literal["inductor"] = Field("inductor", description="Compiled bytes are Inductor's estimate "
                                                                  "(torch._inductor.metrics), not a measurement.")
    figures: list[CostFigures] = []

    def of(self, who: str) -> CostFigures | None:
        return next((f for f in self.figures if f.who == who), None)


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
    """One tier's outcome inside a later tier's report (judge/tiers.py): the CPU tier a GPU grading followed."""

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
                                                       "function (judge/cost.py; decides nothing by itself).")
    trust: Literal["verified", "self-checked"] = Field(
        "verified", description="'verified': decided outside the learner's process; 'self-checked': part of the "
                                "verdict rests on what the learner's process reported (see docs/security.md).")
    seed: int | None = Field(
        None, description="The grading's draw (judge/draw.py): chose its inputs, sizes and searches; the same file on "
                          "the same exercise version draws the same. `grade(..., seed=...)` replays it.")
    fingerprint: str | None = Field(
        None, description="The exercise version this report was graded under (judge.fingerprint: hidden tests, "
                          "reference, starter, public module, contract, limits, the judge's own version); None "
                          "for reports made before versions were recorded.")
    tier: str | None = Field(None, description="Set on a tier's own report (judge/tiers.py): 'cpu' when only the "
                                               "exercise's CPU tier was graded; ACCEPTED then means it passed that "
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
