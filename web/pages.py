"""The HTML pages: the exercise list and the exercise page (Jinja2; the page script is static/app.js)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.templating import Jinja2Templates

from judge.parent.battery import battery
from judge.reports.i18n import text
from web.api import learner, state_of
from web.cost_api import offered as cost_offered
from web.i18n import LANGS, install, origin_name, pick_lang, strings, verdict_name
from web.render import inline_code, markdown_html, pygments_css
from web.standing import learner_course
from web.timeline import NOTE_CHARS, timeline

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
install(templates.env)
templates.env.filters["code"] = inline_code  # `code` spans of a message or a sentence as <code>
LANG_COOKIE = "practice_lang"


def duration_text(delta) -> str:
    """A time span as h:mm:ss (days as hours), the same in every language."""
    seconds = max(0, int(delta.total_seconds()))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def lang_of(request: Request) -> str:
    """The request's language: `?lang=`, else the remembered choice, else Chinese."""
    return pick_lang(request.query_params.get("lang") or request.cookies.get(LANG_COOKIE))


def viewer(request: Request) -> dict:
    """Who is looking, for the page header: the signed-in instructor's name, or the learner's display name."""
    state = request.app.state
    instructor = state.classes.instructor(request.state.instructor_id)
    memberships = [] if instructor else state.classes.memberships(learner(request))
    return {"instructor": instructor.username if instructor else None,
            "member": memberships[0][1].display_name if memberships else None}


def page(request: Request, name: str, context: dict, status: int = 200) -> HTMLResponse:
    """Render a template in the request's language; `?lang=` switches it and is remembered."""
    asked = request.query_params.get("lang")
    lang = lang_of(request)
    other = next(code for code in LANGS if code != lang)
    context = {"viewer": viewer(request), **context, "lang": lang, "other_lang": other, "t": strings(lang),
               "verdict_name": lambda v: verdict_name(lang, v), "origin_name": lambda o: origin_name(lang, o),
               "duration": duration_text,
               "lang_switch": str(request.url.include_query_params(lang=other).replace(scheme="", netloc=""))}
    response = templates.TemplateResponse(request, name, context, status_code=status)
    if asked in LANGS:
        response.set_cookie(LANG_COOKIE, lang, max_age=365 * 24 * 3600, samesite="lax", httponly=True)
    return response


@router.get("/", response_class=HTMLResponse)
def index(request: Request) -> HTMLResponse:
    states = request.app.state.store.states(learner(request))
    rows = [(e, state_of(states, e.id)) for e in request.app.state.course.all()]
    return page(request, "index.html", {"rows": rows})


@router.get("/exercises/{exercise_id}", response_class=HTMLResponse)
def exercise_page(request: Request, exercise_id: str) -> HTMLResponse:
    exercise = request.app.state.course.get(exercise_id)
    if exercise is None:
        return page(request, "not_found.html", {}, status=404)
    lang = lang_of(request)
    store, who = request.app.state.store, learner(request)
    accepted = store.has_accepted(who, exercise.id)
    history = store.history(who, exercise.id)
    accepted_submission = next((s.id for s in history if s.verdict == "ACCEPTED"), None)
    standing = learner_course(request, who)
    return page(request, "exercise.html", {
        "exercise": exercise,
        "deadlines": [d for d in standing["deadlines"] if d["exercise"].id == exercise.id],
        "changes": [c for c in standing["changes"] if c.submission.exercise_id == exercise.id],
        "course": request.app.state.course,
        "statement_html": markdown_html(exercise.statement_text(lang)),
        "hints": [markdown_html(h.get(lang)) for h in exercise.hints],
        "history": history, "accepted_submission": accepted_submission,
        "questions_required": exercise.questions is not None and request.app.state.questions.required_for(
            who, exercise.id),
        "attempts": timeline(store.engine, who, exercise.id), "note_chars": NOTE_CHARS,
        "reference": exercise.code(exercise.reference, lang) if accepted else None,
        "battery": proven_against(exercise, lang),
        **grader_notices(request, exercise),
        "boot": {"exercise_id": exercise.id, "starter": exercise.code(exercise.starter, lang), "accepted": accepted,
                 "lang": lang, "questions_for": accepted_submission,
                 "raw_output_chars": request.app.state.settings.raw_output_chars,
                 "cost_on_demand": cost_offered(exercise, request.app.state.queue_kind),
                 "style_nonce": request.state.csp_nonce},
    })


def proven_against(exercise, lang: str) -> dict:
    """The exercise's battery (judge/parent/battery.py) in the page's language: one summary line and a line per kind."""
    proven = battery(exercise)
    summary = proven.summary()
    return {"summary": text(summary, lang) if summary is not None else None,
            "lines": [text(line, lang) for line in proven.lines()]}


def grader_notices(request: Request, exercise) -> dict:
    """What the exercise page says about the graders: `no_gpu_grader` (an exercise that needs CUDA, and no grader
    of the gpu queue was seen: submissions wait, after their CPU tier where `cpu_tier`), `warming` (compile cache
    layers still being built, with how many exercises to go), both for the exercise's kind of grader."""
    from judge.parent.requirements import needs_cuda
    from judge.shared.tiers import has_cpu_tier

    gpu = needs_cuda(exercise)
    graders = request.app.state.queue.graders()
    progress = request.app.state.layers.get("gpu" if gpu else "cpu")
    snapshot = progress.snapshot() if progress is not None else {"state": "off", "pending": []}
    return {"no_gpu_grader": gpu and not any("gpu" in g["queues"] for g in graders), "cpu_tier": has_cpu_tier(exercise),
            "warming": snapshot["state"] == "building", "warming_pending": len(snapshot["pending"])}


@router.get("/docs", response_class=HTMLResponse)
def api_docs(request: Request) -> HTMLResponse:
    """FastAPI's OpenAPI page, with Swagger UI served from /static (no CDN, no inline script)."""
    return templates.TemplateResponse(request, "docs.html", {})


@router.get("/assets/pygments.css")
def highlight_css() -> Response:
    return Response(pygments_css(), media_type="text/css", headers={"Cache-Control": "public, max-age=3600"})
