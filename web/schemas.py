"""The JSON shapes of the API (the report inside is the same JSON as the CLI's `--json`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, StrictStr

from judge.parent.exercise import Exercise, Limits, Text
from judge.reports.report import Report
from web.store import Submission

State = Literal["not_started", "attempted", "solved"]


class ExerciseSummary(BaseModel):
    id: str
    order: int
    title: Text
    chapter: Text
    section: Text
    difficulty: int
    tags: list[str]
    state: State
    needs_cuda: bool = Field(False, description="Graded only where a CUDA GPU is present (by a gpu-queue worker).")

    @classmethod
    def of(cls, e: Exercise, state: str) -> ExerciseSummary:
        return cls(id=e.id, order=e.order, title=e.title, chapter=e.chapter, section=e.section,
                   difficulty=e.difficulty, tags=e.tags, state=state, needs_cuda=e.needs_cuda)


class ExerciseDetail(ExerciseSummary):
    """What a learner may see: never the hidden tests, the wrong solutions or the reference."""

    entry_point: str
    learn: Text | None
    hints: list[Text]
    statement: Text = Field(description="Markdown, in both languages.")
    starter: str
    limits: Limits

    @classmethod
    def of(cls, e: Exercise, state: str) -> ExerciseDetail:
        base = ExerciseSummary.of(e, state).model_dump()
        return cls(**base, entry_point=e.entry_point, learn=e.learn, hints=e.hints, limits=e.limits,
                   statement=Text(zh=e.statement_text("zh"), en=e.statement_text("en")), starter=e.read(e.starter))


class SubmissionIn(BaseModel):
    source: StrictStr = Field(description="The learner's Python source, UTF-8, at most 64 KiB by default.")
    origin: Literal["cli", "notebook"] | None = Field(
        None, description="With a token: where the submission was made (`practice submit`: cli, the notebook's "
                          "`--submit`: notebook). Shown on the class page; a browser's is always 'browser'.")
    note: str | None = Field(None, description="The learner's one-line note on this attempt (at most 140 characters; "
                                               "whitespace collapses to single spaces), shown on their timeline.")


class SubmissionCreated(BaseModel):
    id: str
    status: str
    url: str
    events_url: str


class SubmissionOut(BaseModel):
    id: str
    exercise_id: str
    status: Literal["queued", "running", "done"]
    source: str
    verdict: str | None
    created_at: datetime
    finished_at: datetime | None
    report: Report | None = Field(description="The same JSON as `practice judge --json`; null until done.")

    @classmethod
    def of(cls, s: Submission) -> SubmissionOut:
        return cls(id=s.id, exercise_id=s.exercise_id, status=s.status, source=s.source, verdict=s.verdict,
                   created_at=s.created_at, finished_at=s.finished_at, report=s.report())


class HistoryItem(BaseModel):
    id: str
    status: str
    verdict: str | None
    created_at: datetime


class Solution(BaseModel):
    exercise_id: str
    source: str


class GraderSeen(BaseModel):
    """A grader that said it was alive in the last minute (the embedded one: the web process itself)."""

    name: str
    host: str
    pid: int
    queues: list[str]
    concurrency: int
    sandbox: str
    last_seen: datetime


class LayerState(BaseModel):
    """The build of a kind of compile cache layers (`judge.parent.cache_layers`) in this web process."""

    state: Literal["building", "ready", "failed", "off"] = Field(
        description="building: gradings compile as if there were no layers until it is ready; off: this backend "
                    "uses none.")
    layer: str | None = Field(None, description="The layer being built now (base, full, gpu).")
    pending: list[str] = Field(default_factory=list, description="Exercises whose references it still lacks, "
                                                                  "in the order they will be built.")


class Health(BaseModel):
    status: Literal["ok", "failing"] = Field(
        description="ok; failing (with HTTP 503, so that a load balancer stops sending work) while this process's "
                    "warm graders cannot start.")
    exercises: int
    sandbox: str = Field(description="The web process's sandbox; 'workers' when practice worker processes grade.")
    queue: Literal["embedded", "procrastinate"]
    queue_depth: int = Field(description="Submissions waiting for a grader, all queues.")
    queues: dict[str, int] = Field(description="Submissions waiting, per queue.")
    workers: list[GraderSeen] = Field(description="Graders seen in the last minute.")
    layers: dict[str, LayerState] = Field(
        default_factory=dict, description="Compile cache layers of this process's graders (cpu, gpu); none when "
                                          "other processes grade.")
    pools: Literal["starting", "ready", "failed", "off"] = Field(
        "off", description="The warm pools of this process's graders: starting (a submission waits for them), "
                           "ready, failed (the first submission says why), off (none here).")
    warming_up: bool = Field(
        False, description="True while the pools are starting or a compile cache's base layer is being built: "
                           "gradings meanwhile are slower than once the server is warm. The full and GPU layers "
                           "(the references' kernels) may still be building after that (see `layers`).")
