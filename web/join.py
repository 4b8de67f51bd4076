"""The learner's side of a class: join through the class's link, sign back in elsewhere, `/me`.

Joining keeps the browser's learner (the cookie's id) and so every submission made before. In another
browser a learner signs in with the display name and password, or through a personal sign-in link (their
instructor can reissue it; the old link then stops working). Without a class nothing changes: solo use is
anonymous, as before. `/me` also makes and revokes the learner's tokens for `practice submit` and notebooks
(web/tokens.py), sets the password and makes a new sign-in link (each asking for the current password where there
is one, except just after a sign-in link) and signs out. A new link, a new password and signing out end the
learner's other sessions (web/sessions.py), and offer to revoke every token too. A sign-in link works once, for
`signin_link_days`. Every route here takes the browser's cookie only: a token is refused (web/api.py).
"""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from web.api import learner
from web.classes import Class
from web.errors import InputError
from web.forms import PageRefused, read_form, refused_status, see_other
from web.hosts import site_link, site_url
from web.i18n import N_, gettext_for
from web.offload import hashing, in_thread
from web.pages import lang_of, page
from web.sessions import LINK_RESET_S
from web.standing import learner_course

router = APIRouter(include_in_schema=False)
LINK_GONE = N_("This sign-in link does not work any more (it was used already, it expired, or a newer one replaced "
               "it): make a new one on your page in a browser where you are signed in, or ask your instructor for "
               "one.")


def session_cookie(request: Request, learner_id: str, epoch: int | None = None, reset: bool = False) -> str:
    """The learner cookie of a session of `learner_id` at its account's current epoch; `reset`: a new password
    may be set without the current one for `LINK_RESET_S` (after a personal sign-in link)."""
    epoch = request.app.state.classes.learner_epoch(learner_id) if epoch is None else epoch
    return request.app.state.cookies.learner_header(learner_id, epoch, int(time.time()) + LINK_RESET_S if reset else 0)


def class_by_code(request: Request, code: str) -> Class:
    class_ = request.app.state.classes.class_by_code(code)
    if class_ is None:
        raise PageRefused(404, N_("This join link matches no class: check that you copied the whole link, or ask "
                                  "your instructor for the current one."))
    return class_


def _join_page(request: Request, class_: Class, status: int = 200, **context) -> Response:
    member = request.app.state.classes.member(class_.id, learner(request))
    defaults = {"join_error": None, "signin_error": None, "display_name": "", "signin_name": "",
                "other_classes": member is None and bool(request.app.state.classes.memberships(learner(request)))}
    return page(request, "join.html", {"class_": class_, "member": member, **defaults, **context}, status=status)


@router.get("/join/{code}", response_class=HTMLResponse, name="join_page")
def join_page(request: Request, code: str) -> Response:
    return _join_page(request, class_by_code(request, code))


@router.post("/join/{code}", response_class=HTMLResponse)
async def join(request: Request, code: str) -> Response:
    form = await read_form(request)
    return await hashing(request, _join, request, code, form)


def _join(request: Request, code: str, form: dict[str, str]) -> Response:
    class_ = class_by_code(request, code)
    try:
        request.app.state.classes.join(class_.id, learner(request), form.get("display_name", ""),
                                       form.get("password", ""))
    except InputError as exc:
        return _join_page(request, class_, 400, join_error=exc.text(gettext_for(lang_of(request))),
                          display_name=form.get("display_name", ""))
    return see_other("/me")


@router.post("/join/{code}/signin", response_class=HTMLResponse)
async def signin(request: Request, code: str) -> Response:
    """Sign in as a member of the class with display name and password: this browser becomes that learner."""
    form = await read_form(request)
    return await hashing(request, _signin, request, code, form)


def _signin(request: Request, code: str, form: dict[str, str]) -> Response:
    class_ = class_by_code(request, code)
    try:
        member = request.app.state.classes.sign_in_learner(class_.id, form.get("display_name", ""),
                                                           form.get("password", ""), client_address(request))
    except InputError as exc:
        refused = refused_status(exc)
        response = _join_page(request, class_, refused["status"], signin_error=exc.text(gettext_for(lang_of(request))),
                              signin_name=form.get("display_name", ""))
        response.headers.update(refused["headers"])
        return response
    return see_other("/me", session_cookie(request, member.learner_id))


def client_address(request: Request) -> str | None:
    return request.client.host if request.client else None


def _me(request: Request, status: int = 200, **context) -> Response:
    state, who = request.app.state, learner(request)
    memberships = state.classes.memberships(who)
    defaults = {"password_error": None, "password_saved": False, "new_link": None, "new_token": None,
                "link_error": None, "token_error": None,
                "has_password": bool(memberships) and state.classes.has_password(who),
                "may_reset": request.state.learner_session.may_reset_password()}
    tokens = state.tokens.live(who) if memberships else []
    return page(request, "me.html", {"memberships": memberships, "tokens": tokens,
                                     "server_url": site_url(request), **defaults,
                                     "link_days": f"{state.settings.signin_link_days:g}",
                                     **learner_course(request, who), **context}, status=status)


@router.get("/me", response_class=HTMLResponse)
def me(request: Request) -> Response:
    return _me(request)


@router.post("/me/password", response_class=HTMLResponse)
async def set_password(request: Request) -> Response:
    form = await read_form(request)
    return await hashing(request, _set_password, request, form)


def _set_password(request: Request, form: dict[str, str]) -> Response:
    _ = gettext_for(lang_of(request))
    if not request.app.state.classes.memberships(learner(request)):
        raise PageRefused(403, N_("Join a class first: a password signs you in to your classes."))
    if form.get("password", "") != form.get("password2", ""):
        return _me(request, 400, password_error=_("The two passwords differ: type the same password twice."))
    try:
        epoch = request.app.state.classes.set_learner_password(
            learner(request), form.get("password", ""), form.get("current", ""),
            request.state.learner_session.may_reset_password(), client_address(request))
    except InputError as exc:
        refused = refused_status(exc, 400)
        response = _me(request, refused["status"], password_error=exc.text(_))
        response.headers.update(refused["headers"])
        return response
    revoke_tokens_if_asked(request, form)
    response = _me(request, password_saved=True, may_reset=False)
    response.headers.append("set-cookie", session_cookie(request, learner(request), epoch))  # this browser stays
    return response


def revoke_tokens_if_asked(request: Request, form: dict[str, str]) -> None:
    """The forms that change how one gets in (new password, new link, sign-out) offer to revoke every token, ticked
    by default: a token that leaked with the old way in stops too."""
    if form.get("revoke_tokens"):
        request.app.state.tokens.revoke_all(learner(request))


def password_refused(request: Request, form: dict[str, str], error_key: str) -> Response | None:
    """The page again with the error under `error_key` when the learner has a password and `current` is not it
    (except within a sign-in link's reset window); None when they may go on."""
    try:
        request.app.state.classes.check_current_password(
            learner(request), form.get("current", ""), request.state.learner_session.may_reset_password(),
            client_address(request))
    except InputError as exc:
        refused = refused_status(exc, 400)
        response = _me(request, refused["status"], **{error_key: exc.text(gettext_for(lang_of(request)))})
        response.headers.update(refused["headers"])
        return response
    return None


@router.post("/me/signin-link", response_class=HTMLResponse)
async def new_link(request: Request) -> Response:
    """A personal sign-in link, shown once; the previous one stops working. Asks for the password, if any."""
    form = await read_form(request, empty_ok=True)
    return await hashing(request, _new_link, request, form)


def _new_link(request: Request, form: dict[str, str]) -> Response:
    if not request.app.state.classes.memberships(learner(request)):
        raise PageRefused(403, N_("Join a class first: a sign-in link signs you in to your classes."))
    refused = password_refused(request, form, "link_error")
    if refused is not None:
        return refused
    token = request.app.state.classes.issue_signin_token(learner(request))
    revoke_tokens_if_asked(request, form)
    response = _me(request, new_link=site_link(request, "link_page", token=token))
    response.headers.append("set-cookie", session_cookie(request, learner(request)))  # this browser stays
    return response


@router.post("/me/signout")
async def learner_signout(request: Request) -> Response:
    """Sign out: every session of this learner ends (in every browser); this one becomes a new anonymous one."""
    form = await read_form(request, empty_ok=True)
    return await in_thread(_learner_signout, request, form)


def _learner_signout(request: Request, form: dict[str, str]) -> Response:
    if not request.app.state.classes.memberships(learner(request)):
        raise PageRefused(403, N_("Join a class first: signing out is for learners of a class (without one, "
                                  "your work lives only in this browser)."))
    revoke_tokens_if_asked(request, form)
    request.app.state.classes.end_learner_sessions(learner(request))
    return see_other("/", request.app.state.cookies.clear_learner_header())


def _link_learner(request: Request, token: str):
    learner_id = request.app.state.classes.learner_by_token(token)
    memberships = request.app.state.classes.memberships(learner_id) if learner_id else []
    if not memberships:
        raise PageRefused(404, LINK_GONE)
    return learner_id, memberships


@router.get("/signin/link/{token}", response_class=HTMLResponse, name="link_page")
def link_page(request: Request, token: str) -> Response:
    """Asks before signing in: a link opened by a preview bot or planted by someone else changes nothing."""
    learner_id, memberships = _link_learner(request, token)
    return page(request, "signin_link.html", {"memberships": memberships,
                                              "already": learner_id == learner(request)})


@router.post("/signin/link/{token}")
def link_signin(request: Request, token: str) -> Response:
    """Sign in with the link, which is used up: a link works once."""
    _link_learner(request, token)
    learner_id = request.app.state.classes.use_signin_token(token)
    if learner_id is None:  # used at this very moment by another request
        raise PageRefused(404, LINK_GONE)
    return see_other("/me", session_cookie(request, learner_id, reset=True))


@router.post("/me/tokens", response_class=HTMLResponse)
async def new_token(request: Request) -> Response:
    """A token for `practice submit` and notebooks, shown once (only its hash is kept). Asks for the password, if
    any."""
    form = await read_form(request)
    return await hashing(request, _new_token, request, form)


def _new_token(request: Request, form: dict[str, str]) -> Response:
    if not request.app.state.classes.memberships(learner(request)):
        raise PageRefused(403, N_("Join a class first: a token sends your local work to your classes."))
    refused = password_refused(request, form, "token_error")
    if refused is not None:
        return refused
    token = request.app.state.tokens.issue(learner(request), form.get("label", "") or "practice")
    return _me(request, new_token=token)


@router.post("/me/tokens/{token_id}/revoke", response_class=HTMLResponse)
def revoke_token(request: Request, token_id: str) -> Response:
    """Revoke one of this learner's tokens: `practice submit` with it is refused from now on (401)."""
    request.app.state.tokens.revoke(learner(request), token_id)
    return see_other("/me")
