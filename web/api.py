"""The JSON API. Errors are JSON `{"detail": ...}`: 401 wrong or revoked token, 403 a token where only a browser
may go, 404 unknown, 413 too large, 422 malformed, 429 busy. A browser is its cookie; `practice submit` and
notebooks send a learner's token (`Authorization: Bearer tp_...`, see web/tokens.py), which is the same learner
under the same limits on the routes made for it only: submitting, reading its submissions, who it is, revoking
itself (`api_learner`); every other route takes the cookie only (`learner`)."""

from __future__ import annotations

import asyncio
from typing import Literal

from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.requests import ClientDisconnect

import judge.parent.job
from judge.parent.exercise import Exercise
from judge.reports.report import ProgressEvent, localized
from web.admission import address_key
from web.errors import InputError
from web.gpu_budget import gpu_exercises
from web.jsonbody import parse_json
from web.offload import in_thread
from web.schemas import (
    ExerciseDetail,
    ExerciseSummary,
    GraderSeen,
    Health,
    HistoryItem,
    LayerState,
    Solution,
    SubmissionCreated,
    SubmissionIn,
    SubmissionOut,
)
from web.store import DONE, Submission
from web.tables import BROWSER, CLI, NOTEBOOK
from web.timeline import clean_note

router = APIRouter()
LangQuery = Query(None, description="Give the report's texts in this language only; without it, the report holds "
                                    "English in its fields and every other language in `translations`.")
SSE_HEARTBEAT_S = 15.0


BEARER_REALM = {"WWW-Authenticate": 'Bearer realm="torch-practice"'}
REFUSED_TOKEN = ("this token is wrong or was revoked: make a new one on your /me page (or ask your instructor "
                 "for a new sign-in link) and run `practice login` again")


TOKEN_ROUTES_ONLY = ("a token only submits, reads its own submissions and revokes itself (`practice submit`, "
                     "`practice logout`); sign in in a browser for anything else")


def learner(request: Request) -> str:
    """The learner of this browser (its cookie). A request that carries a token is refused (403): a token is good
    only on the routes made for it (`api_learner`), so a leaked one cannot make a sign-in link, a password or more
    tokens."""
    if request.headers.get("authorization") is not None:
        raise HTTPException(403, TOKEN_ROUTES_ONLY)
    return request.state.learner_id


def api_learner(request: Request) -> str:
    """The learner of a request to a route made for tokens (submit, read one's submissions, who am I, revoke the
    token): its token's (`Authorization: Bearer`, from `practice login`; 401 when the token is wrong or revoked),
    else the browser's cookie's."""
    authorization = request.headers.get("authorization")
    if authorization is None:
        return request.state.learner_id
    known = getattr(request.state, "token_learner", None)
    if known is not None:
        return known
    scheme, _, token = authorization.partition(" ")
    learner_id = request.app.state.tokens.learner_of(token.strip()) if scheme.lower() == "bearer" else None
    if learner_id is None:
        raise HTTPException(401, REFUSED_TOKEN, headers=BEARER_REALM)
    request.state.token_learner = learner_id
    return learner_id


def origin_of(request: Request, body: bytes) -> str:
    """Where a submission comes from: 'browser' with the cookie; with a token, what the client says ('cli' or
    'notebook', default 'cli'). It is shown to instructors, never trusted for anything else."""
    if request.headers.get("authorization") is None:
        return BROWSER
    try:
        said = parse_json(body).get("origin")
    except (HTTPException, AttributeError):
        said = None
    return said if said in (CLI, NOTEBOOK) else CLI


def exercise_or_404(request: Request, exercise_id: str) -> Exercise:
    exercise = request.app.state.course.get(exercise_id)
    if exercise is None:
        raise HTTPException(404, f"unknown exercise '{exercise_id}'")
    return exercise


def submission_or_404(request: Request, submission_id: str) -> Submission:
    """The submission if it is this learner's; another learner's is as unknown as a missing one."""
    submission = request.app.state.store.get(submission_id)
    if submission is None or submission.learner_id != api_learner(request):
        raise HTTPException(404, f"unknown submission '{submission_id}'")
    return submission


def state_of(states: dict[str, str], exercise_id: str) -> str:
    return states.get(exercise_id, "not_started")


@router.get("/healthz", response_model=Health, tags=["meta"], responses={503: {"model": Health}})
def healthz(request: Request, response: Response) -> Health:
    """Liveness, the queue depth, the graders seen in the last minute, the compile cache layers' builds and
    whether the server is still warming up (web/warmup.py: its warm pools starting, or a base layer being built);
    503 and "failing" while this process's warm graders cannot start (until a grading shows they can)."""
    from web.warmup import warming_up

    state = request.app.state
    depths = state.queue.depth()
    snapshots = {name: p.snapshot() for name, p in state.layers.items()}
    pools = state.warm_pools.state
    if pools == "failed":
        response.status_code = 503
    return Health(status="failing" if pools == "failed" else "ok", exercises=len(state.course.all()),
                  sandbox=state.sandbox_name, queue=state.queue_kind,
                  queue_depth=sum(depths.values()), queues=depths,
                  workers=[GraderSeen(**g) for g in state.queue.graders()],
                  layers={name: LayerState(**s) for name, s in snapshots.items()}, pools=pools,
                  warming_up=warming_up(pools, snapshots))


@router.get("/api/exercises", response_model=list[ExerciseSummary], tags=["exercises"])
def list_exercises(request: Request) -> list[ExerciseSummary]:
    """Every exercise in course order, with this learner's state."""
    states = request.app.state.store.states(learner(request))
    return [ExerciseSummary.of(e, state_of(states, e.id)) for e in request.app.state.course.all()]


@router.get("/api/exercises/{exercise_id}", response_model=ExerciseDetail, tags=["exercises"])
def get_exercise(request: Request, exercise_id: str) -> ExerciseDetail:
    """Statement (Markdown, zh and en), starter, hints and limits; never hidden tests or solutions."""
    exercise = exercise_or_404(request, exercise_id)
    states = request.app.state.store.states(learner(request))
    return ExerciseDetail.of(exercise, state_of(states, exercise.id))


@router.get("/api/exercises/{exercise_id}/solution", response_model=Solution, tags=["exercises"],
            responses={403: {"description": "No accepted submission from this learner yet."}})
def get_solution(request: Request, exercise_id: str) -> Solution:
    exercise = exercise_or_404(request, exercise_id)
    if not request.app.state.store.has_accepted(learner(request), exercise.id):
        raise HTTPException(403, "the reference solution unlocks after an accepted submission")
    return Solution(exercise_id=exercise.id, source=exercise.read(exercise.reference))


@router.get("/api/exercises/{exercise_id}/submissions", response_model=list[HistoryItem], tags=["submissions"])
def list_submissions(request: Request, exercise_id: str) -> list[HistoryItem]:
    """This learner's submissions to the exercise, newest first."""
    exercise = exercise_or_404(request, exercise_id)
    rows = request.app.state.store.history(api_learner(request), exercise.id)
    return [HistoryItem(id=s.id, status=s.status, verdict=s.verdict, created_at=s.created_at) for s in rows]


_BODY_DOC = {"requestBody": {"required": True, "content": {
    "application/json": {"schema": SubmissionIn.model_json_schema()}}}}


@router.post("/api/exercises/{exercise_id}/submissions", status_code=202, response_model=SubmissionCreated,
             tags=["submissions"], openapi_extra=_BODY_DOC, responses={
                 413: {"description": "Source larger than the limit."},
                 422: {"description": "Body is not UTF-8 JSON with a string `source`."},
                 429: {"description": "Too many submissions, or one is still grading; see Retry-After."}})
async def create_submission(request: Request, exercise_id: str) -> SubmissionCreated:
    """Store a submission and queue it for grading; follow `events_url` for live progress."""
    exercise = await in_thread(exercise_or_404, request, exercise_id)
    who = await in_thread(api_learner, request)  # a wrong token is refused before the body is read
    body = await read_body(request, source_body_bytes())
    source = parse_source(body)
    note = parse_note(body)
    state = request.app.state
    address = address_key(request.client.host) if request.client else ""

    def admit() -> Submission:
        check_deadline(state.deadlines, who, exercise.id)
        return state.admission.admit(who, address, lambda: state.queue.add(
            who, exercise, source, origin=origin_of(request, body), address=address),
            gpu_exercises=gpu_exercises(state.course, exercise))

    submission = await in_thread(admit)
    if note is not None:
        await in_thread(state.store.set_note, who, submission.id, note)
    return SubmissionCreated(id=submission.id, status=submission.status, url=f"/api/submissions/{submission.id}",
                             events_url=f"/api/submissions/{submission.id}/events")


async def read_body(request: Request, cap: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise HTTPException(413, "request body too large")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > cap:
                raise HTTPException(413, "request body too large")
    except ClientDisconnect:  # gone, or cut off by the server's body deadline (web/server.py): nobody reads an answer
        raise HTTPException(400, "the client went away before sending the whole body") from None
    return bytes(body)


def source_body_bytes() -> int:
    """The largest request body that can carry a source the judge grades (every byte JSON-escaped, and room)."""
    return judge.parent.job.MAX_SOURCE_BYTES * 6 + 4096


def parse_source(body: bytes) -> str:
    """The `source` string of a JSON body; 422 unless UTF-8 JSON with a string, 413 when larger than the judge
    grades (`judge.parent.job.MAX_SOURCE_BYTES`, read at each request: the one declaration of the limit)."""
    max_bytes = judge.parent.job.MAX_SOURCE_BYTES
    data = parse_json(body)
    if not isinstance(data, dict) or "source" not in data:
        raise HTTPException(422, 'expected a JSON object {"source": "..."}')
    source = data["source"]
    if not isinstance(source, str):
        raise HTTPException(422, "'source' must be a string")
    try:
        size = len(source.encode("utf-8"))
    except UnicodeEncodeError:
        raise HTTPException(422, "'source' is not valid UTF-8 text (lone surrogate)") from None
    if size > max_bytes:
        raise HTTPException(413, f"source is {size} bytes; the limit is {max_bytes} bytes")
    return source


def parse_note(body: bytes) -> str | None:
    """The optional one-line `note` of a submission's JSON body (web.timeline.clean_note); 422 when it is not one."""
    note = parse_json(body).get("note")
    try:
        return clean_note(note)
    except InputError as exc:
        raise HTTPException(422, exc.text()) from None


def check_deadline(deadlines, learner_id: str, exercise_id: str) -> None:
    """403 when the learner's class refuses late submissions and the learner's own due time has passed."""
    passed = deadlines.refusal(learner_id, exercise_id)
    if passed is not None:
        raise HTTPException(403, f"the deadline for this exercise was {passed.strftime('%Y-%m-%d %H:%M')} UTC and your "
                                 "class does not take late submissions; ask your instructor for an extension")


@router.get("/api/submissions/{submission_id}", response_model=SubmissionOut, tags=["submissions"])
def get_submission(request: Request, submission_id: str,
                   lang: Literal["zh", "en"] | None = LangQuery) -> SubmissionOut:
    """Status, and once done the report."""
    out = SubmissionOut.of(submission_or_404(request, submission_id))
    if lang and out.report is not None:
        out.report = localized(out.report, lang)
    return out


@router.get("/api/submissions/{submission_id}/events", tags=["submissions"],
            response_class=StreamingResponse, responses={200: {"content": {"text/event-stream": {}}}})
async def submission_events(request: Request, submission_id: str,
                            lang: Literal["zh", "en"] | None = LangQuery) -> StreamingResponse:
    """Server-Sent Events: `queued`, `running`, one `check` per finished check, then `done` with the report."""
    await in_thread(submission_or_404, request, submission_id)
    return StreamingResponse(event_stream(request, submission_id, lang), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


def sse(event, lang: str | None = None) -> str:
    if lang:
        event = localized(event, lang)
    return f"event: {event.type}\ndata: {event.model_dump_json()}\n\n"


async def event_stream(request: Request, submission_id: str, lang: str | None = None):
    hub, store = request.app.state.hub, request.app.state.store
    while True:
        subscribed = hub.subscribe(submission_id)
        if subscribed is not None:
            break
        submission = await in_thread(store.get, submission_id)
        if submission is not None and submission.status == DONE:
            yield sse(ProgressEvent(type="done", report=submission.report()), lang)
            return
        await asyncio.sleep(0.5)  # stored but not yet queued (or queued by another process)
    history, queue = subscribed
    try:
        for event in history:
            yield sse(event, lang)
            if event.type == "done":
                return
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), SSE_HEARTBEAT_S)
            except asyncio.TimeoutError:
                # a grader that died after storing, before publishing
                finished = await in_thread(store.get, submission_id)
                if finished is not None and finished.status == DONE:
                    yield sse(ProgressEvent(type="done", report=finished.report()), lang)
                    return
                yield ": keep-alive\n\n"
                continue
            yield sse(event, lang)
            if event.type == "done":
                return
    finally:
        hub.unsubscribe(submission_id, queue)
