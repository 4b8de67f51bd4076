"""The instructor's pages: sign in, classes, a class's progress table (its CSV files: web/teach_exports.py), a
learner, an exercise.

A class page also sets deadlines (and one learner's extension), says how many verdicts come from an older
exercise version, queues regrades, and lists every verdict a regrade changed (also as regrades.csv).

Every class page is for that class's instructors only: anyone else (a learner, another class's instructor, an
anonymous visitor) gets 403. Instructor accounts come from `practice admin add-instructor`.
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from judge.parent.fingerprint import exercise_fingerprint
from judge.reports.report import Report, localized
from web.classes import Class, Instructor
from web.deadlines import parse_due, timing
from web.errors import InputError
from web.forms import PageRefused, local_path, read_form, refused_status, see_other
from web.hosts import site_link, site_url
from web.i18n import N_, gettext_for, strings
from web.offload import hashing, in_thread
from web.pages import lang_of, page
from web.progress import (
    SORTS,
    class_table,
    exercise_stats,
    first_solved_in_class,
    learner_counts,
    learner_submissions,
    sort_rows,
    version_counts,
)
from web.regrade import SCOPES
from web.timeline import timeline

router = APIRouter(include_in_schema=False)
MESSAGE_CHARS = 300
SUBMISSIONS_PER_PAGE = 20  # on a learner's page, each with its full report
DESCENDING_FIRST = ("solved", "attempts")  # counts sort most first; names and exercises (solved first) ascending


def signed_in(request: Request) -> Instructor | None:
    return request.app.state.classes.instructor(request.state.instructor_id)


def taught_class(request: Request, class_id: str) -> tuple[Instructor, Class]:
    """The instructor and the class, when the instructor teaches it; otherwise `PageRefused` (403, or 404)."""
    instructor = signed_in(request)
    if instructor is None:
        raise PageRefused(403, N_("This page is for the class's instructors: sign in as one of them."), signin=True)
    class_ = request.app.state.classes.get_class(class_id)
    if class_ is None:
        raise PageRefused(404, N_("No such class: check the address, or open the class from My classes."))
    if not request.app.state.classes.teaches(instructor.id, class_id):
        raise PageRefused(403, N_("You do not teach this class: only its instructors may see it. Ask one of them "
                                  "to add you."))
    return instructor, class_


@router.get("/signin", response_class=HTMLResponse)
def signin_page(request: Request) -> Response:
    target = local_path(request.query_params.get("next"), "/teach")
    if signed_in(request) is not None:
        return see_other(target)
    return page(request, "signin.html", {"next": target, "username": "", "error": None})


@router.post("/signin", response_class=HTMLResponse)
async def signin(request: Request) -> Response:
    form = await read_form(request)
    return await hashing(request, _signin, request, form)


def _signin(request: Request, form: dict[str, str]) -> Response:
    target = local_path(form.get("next"), "/teach")
    try:
        instructor = request.app.state.classes.sign_in_instructor(form.get("username", ""), form.get("password", ""),
                                                                  request.client.host if request.client else None)
    except InputError as exc:
        refused = refused_status(exc)
        response = page(request, "signin.html", {"next": target, "username": form.get("username", ""),
                                                 "error": exc.text(gettext_for(lang_of(request)))},
                        status=refused["status"])
        response.headers.update(refused["headers"])
        return response
    return see_other(target, request.app.state.cookies.instructor_header(instructor.id, instructor.session_epoch))


@router.post("/signout")
def signout(request: Request) -> Response:
    """Sign out: every session of this instructor ends, a copied cookie included."""
    instructor = signed_in(request)
    if instructor is not None:
        request.app.state.classes.end_instructor_sessions(instructor.id)
    return see_other("/", request.app.state.cookies.clear_instructor_header())


@router.get("/teach", response_class=HTMLResponse)
def teach_home(request: Request) -> Response:
    return _teach_home(request)


def _teach_home(request: Request, error: str | None = None, name: str = "") -> Response:
    instructor = signed_in(request)
    if instructor is None:
        return see_other("/signin?next=/teach")
    classes = request.app.state.classes.classes_of(instructor.id)
    return page(request, "teach.html", {"classes": classes, "error": error, "name": name},
                status=400 if error else 200)


@router.post("/teach/classes", response_class=HTMLResponse)
async def create_class(request: Request) -> Response:
    instructor = await in_thread(signed_in, request)
    if instructor is None:
        raise PageRefused(403, N_("Sign in as an instructor to create a class."), signin=True)
    return await in_thread(_create_class, request, instructor, await read_form(request))


def _create_class(request: Request, instructor: Instructor, form: dict[str, str]) -> Response:
    try:
        class_ = request.app.state.classes.create_class(instructor.id, form.get("name", ""))
    except InputError as exc:
        return _teach_home(request, exc.text(gettext_for(lang_of(request))), form.get("name", ""))
    return see_other(f"/teach/classes/{class_.id}")


def _due_fn(request: Request, class_id: str):
    deadlines = request.app.state.deadlines
    due, extended = deadlines.of_class(class_id), deadlines.extensions(class_id)
    return lambda exercise_id, learner_id: extended.get((exercise_id, learner_id)) or (
        due[exercise_id].due_at if exercise_id in due else None)


def table_rows(request: Request, class_: Class, regraded=None):
    exercises = request.app.state.course.all()
    ids = [e.id for e in exercises]
    regraded = regraded if regraded is not None else request.app.state.regrades.newest_done(class_id=class_.id)
    questions = request.app.state.questions
    rows = class_table(request.app.state.store.engine, class_.id, request.app.state.classes.members(class_.id), ids,
                       regraded, _due_fn(request, class_.id), questions.progress(class_id=class_.id),
                       questions.rules(class_.id))
    key = request.query_params.get("sort", "name")
    key = key if key in SORTS or key in ids else "name"
    descending = request.query_params.get("dir") == "desc"
    return exercises, ids, sort_rows(rows, key, descending), key, descending


@router.get("/teach/classes/{class_id}", response_class=HTMLResponse)
def class_page(request: Request, class_id: str) -> Response:
    return _class_page(request, class_id)


def _class_page(request: Request, class_id: str, error: str | None = None) -> Response:
    _, class_ = taught_class(request, class_id)
    state = request.app.state
    regraded = state.regrades.newest_done(class_id=class_.id)
    exercises, _, rows, key, descending = table_rows(request, class_, regraded)
    fingerprints = {e.id: exercise_fingerprint(e) for e in exercises}
    versions = version_counts(state.store.engine, class_.id, fingerprints, regraded)
    names = {m.learner_id: m.display_name for m in state.classes.members(class_.id)}
    join_url = site_link(request, "join_page", code=class_.join_code)

    def sort_url(column: str) -> str:
        flip = not descending if column == key else column in DESCENDING_FIRST
        return f"?sort={quote(column)}&dir={'desc' if flip else 'asc'}"

    waiting = state.regrades.waiting(class_.id)
    return page(request, "class.html", {
        "class_": class_, "exercises": exercises, "rows": rows, "sort": key, "descending": descending,
        "sort_url": sort_url, "submitted": any(row.attempts for row in rows),
        "graded_exercises": [e for e in exercises if versions[e.id][1] or waiting.get(e.id)],
        "join_url": join_url, "instructors": request.app.state.classes.instructors_of(class_.id),
        "query": request.url.query, "error": error, "versions": versions,
        "older": sum(old for old, _ in versions.values()), "graded": sum(total for _, total in versions.values()),
        "waiting": waiting, "changes": state.regrades.changes(class_id=class_.id),
        "names": names, "deadlines": state.deadlines.of_class(class_.id),
        "extensions": state.deadlines.extensions(class_.id), "course": state.course,
        "asking": [e for e in exercises if e.questions is not None], "rules": state.questions.rules(class_.id),
        "regraded": request.query_params.get("regraded")}, status=400 if error else 200)


@router.post("/teach/classes/{class_id}/regrade", response_class=HTMLResponse)
async def regrade(request: Request, class_id: str) -> Response:
    """Queue a regrade of the class's submissions to one exercise under its current version (after live ones)."""
    form = await read_form(request)
    return await in_thread(_regrade, request, class_id, form)


def _regrade(request: Request, class_id: str, form: dict[str, str]) -> Response:
    instructor, class_ = taught_class(request, class_id)
    exercise = request.app.state.course.get(form.get("exercise", ""))
    if exercise is None:
        return _class_page(request, class_id, error=gettext_for(lang_of(request))(N_("Choose an exercise to regrade.")))
    scope = form.get("scope", "all")
    made = request.app.state.queue.regrade(exercise.id, exercise_fingerprint(exercise), class_id=class_.id,
                                           latest=scope == "latest" and scope in SCOPES,
                                           reason=" ".join(form.get("reason", "").split()),
                                           requested_by=instructor.username)
    return see_other(f"/teach/classes/{class_id}?regraded={len(made)}#regrade")


@router.post("/teach/classes/{class_id}/deadlines", response_class=HTMLResponse)
async def set_deadline(request: Request, class_id: str) -> Response:
    """Set (or with `remove`, drop) an exercise's deadline; `learner` makes it that learner's extension."""
    form = await read_form(request)
    return await in_thread(_set_deadline, request, class_id, form)


def _set_deadline(request: Request, class_id: str, form: dict[str, str]) -> Response:
    taught_class(request, class_id)
    state, gettext = request.app.state, gettext_for(lang_of(request))
    exercise = state.course.get(form.get("exercise", ""))
    if exercise is None:
        return _class_page(request, class_id, error=gettext(N_("Choose the exercise the deadline is for.")))
    if form.get("remove"):
        state.deadlines.remove(class_id, exercise.id)
        return see_other(f"/teach/classes/{class_id}#deadlines")
    try:
        due = parse_due(form.get("due", ""))
        learner_id = form.get("learner", "")
        if learner_id:
            if state.classes.member(class_id, learner_id) is None:
                raise InputError(N_("This learner is not in the class."))
            state.deadlines.extend(class_id, exercise.id, learner_id, due)
        else:
            state.deadlines.set(class_id, exercise.id, due, refuse_late=bool(form.get("refuse_late")))
    except InputError as exc:
        return _class_page(request, class_id, error=exc.text(gettext))
    return see_other(f"/teach/classes/{class_id}#deadlines")


@router.post("/teach/classes/{class_id}/question-rules", response_class=HTMLResponse)
async def set_question_rule(request: Request, class_id: str) -> Response:
    """Whether "solved" needs the questions about the accepted file, for one exercise of the class."""
    form = await read_form(request)
    return await in_thread(_set_question_rule, request, class_id, form)


def _set_question_rule(request: Request, class_id: str, form: dict[str, str]) -> Response:
    taught_class(request, class_id)
    exercise = request.app.state.course.get(form.get("exercise", ""))
    if exercise is None or exercise.questions is None:
        return _class_page(request, class_id, error=gettext_for(lang_of(request))(
            N_("Choose an exercise that asks questions.")))
    request.app.state.questions.set_rule(class_id, exercise.id, form.get("require") == "yes")
    return see_other(f"/teach/classes/{class_id}#question-rules")


@router.post("/teach/classes/{class_id}/instructors", response_class=HTMLResponse)
async def add_instructor(request: Request, class_id: str) -> Response:
    form = await read_form(request)
    return await in_thread(_add_instructor, request, class_id, form)


def _add_instructor(request: Request, class_id: str, form: dict[str, str]) -> Response:
    taught_class(request, class_id)
    try:
        request.app.state.classes.add_class_instructor(class_id, form.get("username", ""))
    except InputError as exc:
        return _class_page(request, class_id, error=exc.text(gettext_for(lang_of(request))))
    return see_other(f"/teach/classes/{class_id}")


def _learner_page(request: Request, class_id: str, learner_id: str, new_link: str | None = None,
                  new_token: str | None = None, revoked: int | None = None) -> Response:
    _, class_ = taught_class(request, class_id)
    member = request.app.state.classes.member(class_id, learner_id)
    if member is None:
        raise PageRefused(404, N_("This learner is not in the class."))
    exercise_id = request.query_params.get("exercise") or None
    engine = request.app.state.store.engine
    counts = learner_counts(engine, class_id, learner_id)
    total = counts.get(exercise_id, 0) if exercise_id else sum(counts.values())
    pages = max(1, -(-total // SUBMISSIONS_PER_PAGE))
    page_no = min(max(_int(request.query_params.get("page"), 1), 1), pages)
    submissions = learner_submissions(engine, class_id, learner_id, exercise_id, limit=SUBMISSIONS_PER_PAGE,
                                      offset=(page_no - 1) * SUBMISSIONS_PER_PAGE)
    lang = lang_of(request)
    reports = {s.id: localized(Report.model_validate_json(s.report_json), lang).model_dump(mode="json")
               for s in submissions if s.report_json}
    course = request.app.state.course
    changes = request.app.state.regrades.changes(class_id=class_id, learner_id=learner_id)
    due = _due_fn(request, class_id)
    solved = first_solved_in_class(engine, class_id, learner_id, {c.submission.id: c.regrade for c in changes})
    deadlines = [{"class_": class_, "exercise": e, "due_at": due(e.id, learner_id),
                  "refuse_late": request.app.state.deadlines.of_class(class_id)[e.id].refuse_late,
                  "timing": timing(due(e.id, learner_id), solved.get(e.id))}
                 for e in course.all() if due(e.id, learner_id) is not None]
    shown = [e for e in course.all() if e.id in counts and (exercise_id is None or e.id == exercise_id)]
    timelines = [(e, timeline(engine, learner_id, e.id, class_id=class_id)) for e in shown]
    return page(request, "class_learner.html", {
        "class_": class_, "member": member, "submissions": submissions, "grouped": counts, "timelines": timelines,
        "page_no": page_no, "pages": pages, "total": total,
        "changes": changes, "deadlines": deadlines,
        "exercise_id": exercise_id, "course": course, "new_link": new_link, "new_token": new_token,
        "revoked": revoked,
        "server_url": site_url(request),
        "boot": {"reports": reports, "raw_output_chars": request.app.state.settings.raw_output_chars},
        "script_strings": strings(lang)})


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text else default
    except ValueError:
        return default


@router.get("/teach/classes/{class_id}/learners/{learner_id}", response_class=HTMLResponse)
def learner_page(request: Request, class_id: str, learner_id: str) -> Response:
    return _learner_page(request, class_id, learner_id)


def acting_on(request: Request, class_id: str, learner_id: str) -> None:
    """Refuse (`PageRefused`) to hand out a way into the learner's account unless the instructor teaches every
    class the learner is in: a link or token signs in to all of them."""
    instructor, _ = taught_class(request, class_id)
    if request.app.state.classes.member(class_id, learner_id) is None:
        raise PageRefused(404, N_("This learner is not in the class."))
    if request.app.state.classes.foreign_classes(learner_id, instructor.id):
        raise PageRefused(403, N_("This learner is also in a class you do not teach, and a sign-in link or token "
                                  "signs them in to all their classes: they can make one on their own page "
                                  "(/me), or an instructor of every class they are in can issue it."))


@router.post("/teach/classes/{class_id}/learners/{learner_id}/signin-link", response_class=HTMLResponse)
def reissue_link(request: Request, class_id: str, learner_id: str) -> Response:
    """A new personal sign-in link for the learner, shown once; the previous link and the learner's sessions end."""
    acting_on(request, class_id, learner_id)
    token = request.app.state.classes.issue_signin_token(learner_id)
    return _learner_page(request, class_id, learner_id, site_link(request, "link_page", token=token))


@router.post("/teach/classes/{class_id}/learners/{learner_id}/token", response_class=HTMLResponse)
def reissue_token(request: Request, class_id: str, learner_id: str) -> Response:
    """A new token for `practice submit`, shown once; every earlier token of the learner stops working."""
    acting_on(request, class_id, learner_id)
    token = request.app.state.tokens.reissue(learner_id, "issued by the instructor")
    return _learner_page(request, class_id, learner_id, new_token=token)


@router.post("/teach/classes/{class_id}/learners/{learner_id}/revoke", response_class=HTMLResponse)
def revoke_ways_in(request: Request, class_id: str, learner_id: str) -> Response:
    """End the learner's sign-in link and revoke every token of theirs: any instructor of any of their classes may
    (it hands nothing out, so another class of the learner's is no reason to refuse)."""
    taught_class(request, class_id)
    if request.app.state.classes.member(class_id, learner_id) is None:
        raise PageRefused(404, N_("This learner is not in the class."))
    request.app.state.classes.end_signin_link(learner_id)
    revoked = request.app.state.tokens.revoke_all(learner_id)
    return _learner_page(request, class_id, learner_id, revoked=revoked)


@router.get("/teach/classes/{class_id}/exercises/{exercise_id}", response_class=HTMLResponse)
def exercise_page(request: Request, class_id: str, exercise_id: str) -> Response:
    _, class_ = taught_class(request, class_id)
    exercise = request.app.state.course.get(exercise_id)
    if exercise is None:
        raise PageRefused(404, N_("No such exercise."))
    members = request.app.state.classes.members(class_id)
    stats = exercise_stats(request.app.state.store.engine, class_id, exercise_id, members, lang_of(request))
    return page(request, "class_exercise.html", {"class_": class_, "exercise": exercise, "stats": stats,
                                                 "members": len(members), "message_chars": MESSAGE_CHARS})


def refused_page(request: Request, exc: PageRefused) -> Response:
    """The HTML page of a `PageRefused`: the message in the page's language, a sign-in link when it helps."""
    message = gettext_for(lang_of(request))(exc.message).format(**{k: v for k, v in exc.params.items()
                                                                     if k != "signin"})
    signin = "/signin?next=" + quote(request.url.path) if exc.params.get("signin") else None
    return page(request, "refused.html", {"status": exc.status, "message": message, "signin": signin},
                status=exc.status)
