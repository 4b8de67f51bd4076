"""The LTI 1.3 endpoints: OIDC login initiation, the launch, and the tool's key set.

    GET|POST /lti/login    the platform starts a login: redirect to its auth URL with a fresh state and nonce
    POST     /lti/launch   the platform posts the id_token: verify, map the user to a class member, open the exercise
    GET      /lti/jwks     the tool's public keys (the platform verifies the tool's grade-service assertions)
    GET      /lti/config.json   the tool's configuration for the LMS administrator (web.lti.config)
    POST     /lti/deep-link     the exercise an instructor picked after a deep-linking launch (web.lti.deep_linking)

An instructor's launch that carries the Names and Role Provisioning claim reads the course's roster into the class
(web.lti.roster).

The platform's posts are cross-site by nature: the middleware lets /lti/ through its cross-site check, and
these routes trust nothing but the signed id_token and a login state that is used once and that this browser
started (its cookie from /lti/login: web.lti.login_cookie).
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from web.forms import read_form
from web.hosts import site_link, site_url
from web.lti.launch import DEEP_LINKING, LtiRefused, verify_launch
from web.lti.login_cookie import LoginCookies
from web.middleware import CSP
from web.offload import in_thread

router = APIRouter(include_in_schema=False)


def _refused(exc: LtiRefused) -> Response:
    return PlainTextResponse(f"LTI launch refused: {exc}", status_code=exc.status,
                             headers={"Cache-Control": "no-store"})


async def _params(request: Request) -> dict[str, str]:
    if request.method == "POST":
        return await read_form(request)
    return dict(request.query_params)


@router.api_route("/lti/login", methods=["GET", "POST"], name="lti_login")
async def login(request: Request) -> Response:
    """OIDC third-party login initiation: answer with a redirect to the platform's auth URL."""
    return await in_thread(_login, request, await _params(request))


def _login(request: Request, params: dict[str, str]) -> Response:
    issuer, hint = params.get("iss", ""), params.get("login_hint", "")
    if not issuer or not hint:
        return _refused(LtiRefused(400, "the login needs iss and login_hint: start it from the LMS"))
    registry = request.app.state.lti
    platform = registry.find_platform(issuer, params.get("client_id"))
    if platform is None:
        return _refused(LtiRefused(400, f"unknown platform {issuer!r} (client id {params.get('client_id')!r}): "
                                        "register it with `practice lti add-platform`"))
    login_ = registry.new_login(platform.id)  # kept in this browser's cookie: nothing is stored for a login
    query = {"scope": "openid", "response_type": "id_token", "response_mode": "form_post", "prompt": "none",
             "client_id": platform.client_id, "redirect_uri": site_link(request, "lti_launch"),
             "login_hint": hint, "state": login_.state, "nonce": login_.nonce}
    if params.get("lti_message_hint"):
        query["lti_message_hint"] = params["lti_message_hint"]
    separator = "&" if "?" in platform.auth_login_url else "?"
    response = RedirectResponse(platform.auth_login_url + separator + urlencode(query), status_code=302,
                                headers={"Cache-Control": "no-store"})
    logins = login_cookies(request)
    response.headers.append("set-cookie", logins.header([*logins.pending(request.cookies), login_]))
    return response


def login_cookies(request: Request) -> LoginCookies:
    return request.app.state.lti_login_cookies


@router.post("/lti/launch", name="lti_launch")
async def launch(request: Request) -> Response:
    """The platform's form post of the id_token: the learner lands on the exercise, signed in as a class member."""
    return await in_thread(_launch, request, await read_form(request))


def _launch(request: Request, form: dict[str, str]) -> Response:
    state, logins = request.app.state, login_cookies(request)
    started = logins.find(request.cookies, form.get("state", ""))
    try:
        verified = verify_launch(state.lti, state.lti_keys, form.get("id_token", ""), form.get("state", ""), started)
        exercise = state.course.get(verified.exercise_id) if verified.exercise_id else None
        if verified.exercise_id and exercise is None:
            raise LtiRefused(404, f"the launch opens exercise {verified.exercise_id!r}, which this course does not "
                                  "have: fix the link's custom parameter exercise=ID")
    except LtiRefused as exc:
        return _refused(exc)
    response = _launched(request, verified, exercise)
    rest = [login for login in logins.pending(request.cookies) if login.state != form.get("state")]
    response.headers.append("set-cookie", logins.header(rest))  # this login is used
    return response


def _launched(request: Request, verified, exercise) -> Response:
    state = request.app.state
    if verified.instructor and verified.memberships_url:
        from web.lti.roster import read_roster_quietly

        read_roster_quietly(state.lti, verified.platform, verified.memberships_url, verified.class_id)
    if verified.message_type == DEEP_LINKING:
        return _picker(request, verified)
    learner_id = state.lti.learner_for(verified.platform.id, verified.sub, verified.class_id, verified.name)
    if exercise is not None and verified.lineitem:
        state.lti.remember_grade(verified.platform.id, verified.lineitem, verified.sub, learner_id, exercise.id)
    target = f"/exercises/{exercise.id}" if exercise is not None else "/"
    response = RedirectResponse(target, status_code=303, headers={"Cache-Control": "no-store"})
    cookie = state.cookies.learner_header(learner_id, state.classes.learner_epoch(learner_id))
    response.headers.append("set-cookie", cookie)
    return response


@router.get("/lti/jwks", name="lti_jwks")
def jwks(request: Request) -> Response:
    return JSONResponse(request.app.state.lti.jwks(), headers={"Cache-Control": "public, max-age=300"})


def _picker(request: Request, verified) -> Response:
    """The exercises to pick from, after a deep-linking launch (only an instructor's)."""
    from web.lti.deep_linking import context_token
    from web.pages import page

    if not verified.instructor:
        return _refused(LtiRefused(403, "only an instructor of the course picks the exercise a link opens"))
    state = request.app.state
    response = page(request, "lti_deep_link.html", {
        "exercises": state.course.all(), "context": context_token(state.secret_key, verified)})
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post("/lti/deep-link", name="lti_deep_link")
async def deep_link(request: Request) -> Response:
    """The picked exercise: a form that posts the signed LtiDeepLinkingResponse to the platform's return URL."""
    return await in_thread(_deep_link, request, await read_form(request))


def _deep_link(request: Request, form: dict[str, str]) -> Response:
    from web.lti.deep_linking import read_context, response_token
    from web.pages import page

    state = request.app.state
    try:
        context = read_context(state.secret_key, form.get("context", ""))
        exercise = state.course.get(form.get("exercise", ""))
        if exercise is None:
            raise LtiRefused(404, f"no exercise {form.get('exercise', '')!r} in this course: pick one of the list")
        base = site_url(request)
        return_url, token = response_token(state.lti, context, base, exercise.id, exercise.title.get("en"))
    except LtiRefused as exc:
        return _refused(exc)
    response = page(request, "lti_deep_link_return.html", {"return_url": return_url, "jwt": token,
                                                            "exercise": exercise})
    response.headers["Cache-Control"] = "no-store"
    # the page's own policy, its form allowed to post to the platform's return URL and nowhere else
    target = urlsplit(return_url)
    response.headers["Content-Security-Policy"] = CSP.format(nonce=request.state.csp_nonce).replace(
        "form-action 'self'", f"form-action 'self' {target.scheme}://{target.netloc}")
    return response


@router.get("/lti/config.json", name="lti_config")
def config(request: Request) -> Response:
    """What the LMS administrator pastes: tool URLs, the JWKS URL, redirect URIs, scopes, placements."""
    from web.lti.config import tool_configuration

    return JSONResponse(tool_configuration(site_url(request)), headers={"Cache-Control": "no-store"})
