"""The learner's timeline over HTTP: as JSON (`GET /api/exercises/{id}/timeline`), as the exercise page's section
(`GET /exercises/{id}/timeline`, what the page script puts back after a grading), and the learner's note on one
of their attempts (`PUT /api/submissions/{id}/note`, or the page's form).

Every route reads the requester's own attempts only: the learner is the cookie's (or, on the JSON routes made for
tokens, the token's); an attempt of anyone else is as unknown as a missing one (404). Instructors read a member's
timeline on the class's pages (web/teach.py).
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel

from web.api import api_learner, exercise_or_404, learner, read_body
from web.attempt_facts import Facts
from web.errors import InputError
from web.forms import read_form, see_other
from web.i18n import gettext_for
from web.jsonbody import parse_json
from web.offload import in_thread
from web.pages import lang_of, page
from web.timeline import NOTE_CHARS, Attempt, clean_note, timeline

router = APIRouter()
NOTE_BODY_BYTES = 4096


class AttemptOut(BaseModel):
    """One attempt on the timeline; `diff` is [kind, line] with kind add, del, hunk or same."""

    number: int
    id: str
    created_at: str
    origin: str
    status: str
    verdict: str | None
    facts: Facts | None
    note: str | None
    diff: list[tuple[str, str]]
    added: int
    removed: int
    diff_cut: int

    @classmethod
    def of(cls, a: Attempt) -> AttemptOut:
        return cls(number=a.number, id=a.id, created_at=a.created_at.isoformat(), origin=a.origin, status=a.status,
                   verdict=a.verdict, facts=a.facts, note=a.note, diff=a.diff, added=a.added, removed=a.removed,
                   diff_cut=a.diff_cut)


class NoteIn(BaseModel):
    note: str | None = None


@router.get("/api/exercises/{exercise_id}/timeline", response_model=list[AttemptOut], tags=["submissions"])
def get_timeline(request: Request, exercise_id: str) -> list[AttemptOut]:
    """This learner's attempts at the exercise, oldest first, each with the facts the judge measured, the diff from
    the attempt before it and the learner's note."""
    exercise = exercise_or_404(request, exercise_id)
    return [AttemptOut.of(a) for a in timeline(request.app.state.store.engine, api_learner(request), exercise.id)]


def set_note(request: Request, who: str, submission_id: str, text: str | None) -> str | None:
    """Store the learner's note on their own attempt; 404 for anyone else's, 422 for a note too long."""
    try:
        note = clean_note(text)
    except InputError as exc:
        raise HTTPException(422, exc.text()) from None
    if not request.app.state.store.set_note(who, submission_id, note):
        raise HTTPException(404, f"unknown submission '{submission_id}'")
    return note


@router.put("/api/submissions/{submission_id}/note", tags=["submissions"], responses={
    404: {"description": "No such submission of this learner."},
    422: {"description": f"Not a JSON object with a string `note` of at most {NOTE_CHARS} characters."}})
async def put_note(request: Request, submission_id: str) -> dict:
    """Set (or with an empty or null `note`, clear) the learner's one-line note on their attempt."""
    who = await in_thread(api_learner, request)
    data = parse_json(await read_body(request, NOTE_BODY_BYTES))
    if not isinstance(data, dict) or not isinstance(data.get("note", ""), (str, type(None))):
        raise HTTPException(422, 'expected a JSON object {"note": "..."}')
    return {"note": await in_thread(set_note, request, who, submission_id, data.get("note"))}


@router.post("/exercises/{exercise_id}/notes/{submission_id}", include_in_schema=False)
async def post_note(request: Request, exercise_id: str, submission_id: str) -> Response:
    """The exercise page's note form: back to the timeline, or the page's refusal in its language."""
    form = await read_form(request)
    return await in_thread(_post_note, request, exercise_id, submission_id, form.get("note", ""))


def _post_note(request: Request, exercise_id: str, submission_id: str, text: str) -> Response:
    exercise = exercise_or_404(request, exercise_id)
    try:
        note = clean_note(text)
    except InputError as exc:
        raise HTTPException(422, exc.text(gettext_for(lang_of(request)))) from None
    if not request.app.state.store.set_note(learner(request), submission_id, note):
        raise HTTPException(404, f"unknown submission '{submission_id}'")
    return see_other(f"/exercises/{exercise.id}#attempt-{submission_id}")


@router.get("/exercises/{exercise_id}/timeline", response_class=HTMLResponse, include_in_schema=False)
def timeline_fragment(request: Request, exercise_id: str) -> HTMLResponse:
    """The exercise page's timeline section alone (the page script swaps it in after a grading)."""
    exercise = exercise_or_404(request, exercise_id)
    attempts = timeline(request.app.state.store.engine, learner(request), exercise.id)
    return page(request, "_timeline_fragment.html", {"exercise": exercise, "attempts": attempts,
                                                      "note_chars": NOTE_CHARS, "editable": True})
