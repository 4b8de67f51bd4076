"""On-demand cost figures: "what would Inductor make of my graph?" for an exercise whose checks do not compile
with Inductor (it declares no [cost], so its gradings carry no cost section and pay nothing for one).

`POST /api/submissions/{id}/cost` grades the stored submission again with the cost section on (inputs from the
exercise's [contract]: judge.costs.spec.spec_for), in a thread of this web process once `web.admission` admits it and
a slot is free (`GET` says `running` meanwhile); `GET` says
`running`, `done` (with the section, or a message when none could be made) or `none` (never asked). Results live
in memory: asking again after a restart measures again. Offered by the embedded server only (a PostgreSQL
deployment's graders are other processes).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel

from judge.costs.spec import spec_for
from judge.parent.exercise import Exercise
from judge.reports.report import CostSection, localized
from web.admission import address_key
from web.api import LangQuery, exercise_or_404, learner, submission_or_404
from web.offload import in_thread
from web.store import DONE

router = APIRouter()
MAX_KEPT = 256  # results kept per process


class CostOut(BaseModel):
    status: Literal["none", "running", "done"]
    cost: CostSection | None = None
    message: str = ""
    # While running: "waiting" for a grader slot (`ahead`: runs waiting before it was asked) or "grading"
    # (`checks_done` so far), so that a page under load shows where its measurement is.
    phase: Literal["", "waiting", "grading"] = ""
    ahead: int = 0
    checks_done: int = 0


def offered(exercise: Exercise, queue_kind: str) -> bool:
    """Whether the page offers on-demand figures: no [cost] of its own, a [contract] to take inputs from, the CPU
    (GPU exercises grade on the gpu queue's machines), and this process grades."""
    return (exercise.cost is None and spec_for(exercise, True) is not None and not exercise.needs_cuda
            and queue_kind == "embedded")


class CostDemands:
    """The on-demand measurements of this process, each result kept in memory; each one is admitted and waits for
    a slot as every run of learner code does (`web.admission`), in the background: its learner polls."""

    def __init__(self, sandbox_name: str):
        self.sandbox_name = sandbox_name
        self.lock = threading.Lock()
        self.results: dict[str, CostOut] = {}
        self._tasks: set[asyncio.Task] = set()
        self._sandbox = None

    async def start(self, request: Request, who: str, submission, exercise: Exercise) -> CostOut:
        with self.lock:
            known = self.results.get(submission.id)
        if known is not None:
            return known
        admission = request.app.state.admission
        address = address_key(request.client.host) if request.client else ""
        ticket = await in_thread(admission.reserve, "cost", who, address)
        with self.lock:
            known = self.results.get(submission.id)
            mine = known is None  # not asked for meanwhile by another request
            if mine:
                self.results[submission.id] = known = CostOut(status="running", phase="waiting",
                                                             ahead=admission.waiting())
        if mine:
            task = asyncio.ensure_future(self._measure(admission, ticket, submission, exercise))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        else:
            admission.give_up(ticket)
        return known

    async def _measure(self, admission, ticket, submission, exercise: Exercise) -> None:
        try:
            done = await admission.run_ticket(ticket, lambda: self._measured(submission, exercise))
        except Exception as exc:  # noqa: BLE001 - said to the page, never raised into a task's void
            done = CostOut(status="done", message=f"the measurement failed: {type(exc).__name__}")
        with self.lock:
            self.results[submission.id] = done
            while len(self.results) > MAX_KEPT:
                self.results.pop(next(iter(self.results)))

    def _measured(self, submission, exercise: Exercise) -> CostOut:
        from judge import grade  # late: the grading core pulls in torch-related modules
        from judge.parent.grading import make_sandbox

        with self.lock:
            if self._sandbox is None:
                self._sandbox = make_sandbox(self.sandbox_name)
            sandbox = self._sandbox
        progress = CostOut(status="running", phase="grading")
        self._say(submission.id, progress)

        def on_event(event) -> None:
            if event.type == "check":
                progress.checks_done += 1
                self._say(submission.id, progress.model_copy())

        report = grade(exercise, submission.source, sandbox=sandbox, measure_cost=True, on_event=on_event)
        return CostOut(status="done", cost=report.cost,
                       message="" if report.cost else f"no cost figures ({report.verdict.value})")

    def _say(self, submission_id: str, progress: CostOut) -> None:
        with self.lock:
            if self.results.get(submission_id, progress).status == "running":
                self.results[submission_id] = progress

    def get(self, submission_id: str) -> CostOut:
        return self.results.get(submission_id, CostOut(status="none"))

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()


def demands(request: Request) -> CostDemands:
    state = request.app.state
    if getattr(state, "cost_demands", None) is None:
        state.cost_demands = CostDemands(state.sandbox_name)
    return state.cost_demands


def _localized(out: CostOut, lang: str | None) -> CostOut:
    if lang and out.cost is not None:
        return out.model_copy(update={"cost": localized(out.cost, lang)})
    return out


@router.post("/api/submissions/{submission_id}/cost", status_code=202, response_model=CostOut, tags=["submissions"],
             responses={409: {"description": "Not graded yet, or the exercise offers no on-demand figures."},
                        429: {"description": "Too many runs, or one of yours is running; see Retry-After."}})
async def request_cost(request: Request, submission_id: str,
                       lang: Literal["zh", "en"] | None = LangQuery) -> CostOut:
    """Measure the cost figures of a graded submission (its graph compiled with Inductor by the judge)."""
    learner(request)  # a browser's: a token does not run code beyond its submissions
    submission = await in_thread(submission_or_404, request, submission_id)
    exercise = exercise_or_404(request, submission.exercise_id)
    if submission.status != DONE:
        raise HTTPException(409, "the submission is still being graded")
    report = submission.report()
    if report is not None and report.cost is not None:
        return _localized(CostOut(status="done", cost=report.cost), lang)
    if not offered(exercise, request.app.state.queue_kind):
        raise HTTPException(409, f"exercise '{exercise.id}' offers no on-demand cost figures here")
    return _localized(await demands(request).start(request, submission.learner_id, submission, exercise), lang)


@router.get("/api/submissions/{submission_id}/cost", response_model=CostOut, tags=["submissions"])
def read_cost(request: Request, submission_id: str, lang: Literal["zh", "en"] | None = LangQuery) -> CostOut:
    """The on-demand cost figures of a submission: none (never asked), running, or done."""
    learner(request)
    submission = submission_or_404(request, submission_id)
    report = submission.report()
    if report is not None and report.cost is not None:
        return _localized(CostOut(status="done", cost=report.cost), lang)
    return _localized(demands(request).get(submission.id), lang)

