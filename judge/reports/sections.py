"""The report's sections beside its checks: the compiler's view (graphs, guards, kernels, compile events) and the
cost section (eager against compiled figures). Part of the report's schema (judge/reports/report.py)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from judge.reports.diagnostics import GuardOrigin
from judge.reports.localized import Localized


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
    """What running a graph op by op (eager) dispatched: counted by the verifier (judge/costs/measure.py)."""

    ops: int = Field(description="ATen operators that did work (each one a kernel in eager mode).")
    views: int = Field(0, description="View operators (no kernel, no memory traffic).")
    bytes_read: int = Field(description="Bytes the operators read: each tensor input's distinct elements.")
    bytes_written: int = Field(description="Bytes the operators wrote: each output's distinct elements (an in-place "
                                           "update writes its input).")

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written


class CompileCost(BaseModel):
    """What compiling cost, counted where it ran, in the verifier (judge/costs/measure.py): Dynamo's frames and guards,
    and the
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
    """What Inductor made of the graphs, compiled by the verifier (judge/costs/measure.py)."""

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
    """Time measured on a GPU (judge/costs/measure.py: measure_time): per call, medians over timed batches."""

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
