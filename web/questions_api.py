"""Questions about the learner's own accepted file over HTTP.

`GET /api/submissions/{id}/questions` gives the stored questions (none yet: `status` none); `POST` makes them once,
by compiling the accepted file on the trusted side (judge/parent/questions.py through the playground, admitted
as every run of learner code is: `web.admission`, kind `questions`); `POST /api/questions/{id}/answer` checks an
answer. All three are the submission's learner's only (their cookie): anyone else's submission or question is
as unknown as a missing one (404). A deployment whose web processes do not grade answers 503, as the playground.
"""

from __future__ import annotations

import logging
from typing import Literal

from fastapi import APIRouter, HTTPException, Query, Request

from judge.reports.report import Verdict
from web.api import learner, read_body
from web.errors import InputError
from web.i18n import gettext_for
from web.jsonbody import parse_json
from web.offload import in_thread
from web.pages import lang_of
from web.playground import ON_WORKERS, _sandbox, runs_here, runs_of
from web.store import Submission

router = APIRouter()
log = logging.getLogger(__name__)
ANSWER_BODY_BYTES = 1024
Lang = Query(None, description="The questions' language (default: the page's).")


def own_submission(request: Request, submission_id: str) -> Submission:
    submission = request.app.state.store.get(submission_id)
    if submission is None or submission.learner_id != learner(request):
        raise HTTPException(404, f"unknown submission '{submission_id}'")
    return submission


def _listed(request: Request, submission: Submission, lang: str) -> dict:
    asked = request.app.state.questions.asked(submission.id)
    return {"status": "ready" if asked else "none", "questions": [a.public(lang) for a in asked]}


@router.get("/api/submissions/{submission_id}/questions", tags=["questions"])
def get_questions(request: Request, submission_id: str, lang: Literal["zh", "en"] | None = Lang) -> dict:
    """The questions about this accepted submission, with what the learner found so far."""
    return _listed(request, own_submission(request, submission_id), lang or lang_of(request))


@router.post("/api/submissions/{submission_id}/questions", tags=["questions"], responses={
    404: {"description": "No such submission of this learner."},
    409: {"description": "The submission is not accepted, or its exercise asks no questions."},
    429: {"description": "A question run of this learner is still running, or too many a minute."},
    503: {"description": "This deployment grades on separate workers."}})
async def make_questions(request: Request, submission_id: str, lang: Literal["zh", "en"] | None = Lang) -> dict:
    """Make the questions about this accepted submission once (compiling it: up to a minute); then as GET."""
    from judge.parent.playground import run_playground
    from judge.parent.questions import FILENAME, make_questions as make

    state, lang = request.app.state, lang or lang_of(request)
    submission = await in_thread(own_submission, request, submission_id)
    exercise = state.course.get(submission.exercise_id)
    if submission.verdict != Verdict.ACCEPTED.value or exercise is None or exercise.questions is None:
        raise HTTPException(409, "questions are asked about an accepted submission of an exercise that has them")
    if await in_thread(state.questions.asked, submission.id):
        return await in_thread(_listed, request, submission, lang)
    if not runs_here(request):
        raise HTTPException(503, gettext_for(lang)(ON_WORKERS))
    sandbox = _sandbox(runs_of(request), state.sandbox_name)
    questions = await state.admission.run(request, "questions", submission.learner_id, lambda: make(
        exercise, submission.source, lambda source: run_playground(source, sandbox=sandbox, filename=FILENAME)))
    await in_thread(state.questions.save, submission.id, questions)
    return await in_thread(_listed, request, submission, lang)


def send_score(request: Request, learner_id: str, submission_id: str) -> None:
    """The learner's score on the submission's exercise to the LMS (web.lti.grades: sent once per change)."""
    submission = request.app.state.store.get(submission_id)
    try:
        request.app.state.score_sender(learner_id, submission.exercise_id)
    except Exception:  # the LMS is away: the answer stands, the next verdict sends the score
        log.exception("score after a question of %s not sent", learner_id)


@router.post("/api/questions/{question_id}/answer", tags=["questions"], responses={
    404: {"description": "No such question of this learner."},
    422: {"description": "Not {\"answer\": \"...\"} with one of the choices or a whole number."}})
async def answer_question(request: Request, question_id: str, lang: Literal["zh", "en"] | None = Lang) -> dict:
    """Check an answer: `correct`, and the question as it stands (its answer and explanation once solved). The
    same answer sent again counts once; a solved question stays solved."""
    who = await in_thread(learner, request)
    data = parse_json(await read_body(request, ANSWER_BODY_BYTES))
    if not isinstance(data, dict) or not isinstance(data.get("answer"), (str, int)) or isinstance(
            data.get("answer"), bool):
        raise HTTPException(422, 'expected a JSON object {"answer": "..."}')
    lang = lang or lang_of(request)
    try:
        found = await in_thread(request.app.state.questions.answer, who, question_id, str(data["answer"]))
    except InputError as exc:
        raise HTTPException(422, exc.text(gettext_for(lang))) from None
    if found is None:
        raise HTTPException(404, f"unknown question '{question_id}'")
    asked, correct = found
    if correct and asked.solved_at is not None:  # the class's rule may now give another score
        await in_thread(send_score, request, who, asked.submission_id)
    return {"correct": correct, "question": asked.public(lang)}
