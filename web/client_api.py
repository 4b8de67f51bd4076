"""The API of `practice login` / `practice logout` (and the notebook's `--submit`): tokens for a learner.

`POST /api/tokens` trades a learner's personal sign-in link (its token, used up) for a token of their own; `GET /api/me`
says whom a token (or cookie) stands for; `DELETE /api/tokens/current` revokes the token presented. Only
members of a class get tokens: a class is what local work counts in.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import BaseModel, Field, StrictStr

from web.api import BEARER_REALM, api_learner

router = APIRouter()
NOT_A_LINK = ("this sign-in link does not work (it was used already, it expired, a newer one replaced it, or it was "
              "mistyped): make a new one on your /me page, or ask your instructor for one")


class TokenIn(BaseModel):
    signin_token: StrictStr = Field(description="The last part of a personal sign-in link (/signin/link/TOKEN).")
    label: StrictStr = Field("practice login", max_length=100, description="Where the token will be used; "
                                                                          "shown on the learner's /me page.")


class ClassIn(BaseModel):
    name: str
    display_name: str


class Me(BaseModel):
    classes: list[ClassIn]


class TokenOut(Me):
    token: str = Field(description="Send as `Authorization: Bearer TOKEN`; shown once, only its hash is kept.")


def _me(request: Request, learner_id: str) -> list[ClassIn]:
    return [ClassIn(name=c.name, display_name=m.display_name)
            for c, m in request.app.state.classes.memberships(learner_id)]


@router.post("/api/tokens", status_code=201, response_model=TokenOut, tags=["tokens"],
             responses={401: {"description": "The sign-in link is unknown, replaced, or not a class member's."}})
def create_token(request: Request, body: TokenIn) -> TokenOut:
    """A token for `practice submit`, in exchange for the learner's personal sign-in link (used up: a link works
    once)."""
    classes_ = request.app.state.classes
    learner_id = classes_.learner_by_token(body.signin_token)
    classes = _me(request, learner_id) if learner_id else []
    if not classes or classes_.use_signin_token(body.signin_token) != learner_id:
        raise HTTPException(401, NOT_A_LINK)
    token = request.app.state.tokens.issue(learner_id, body.label)
    return TokenOut(token=token, classes=classes)


@router.get("/api/me", response_model=Me, tags=["tokens"], responses={401: {"description": "Wrong or revoked token."}})
def me(request: Request) -> Me:
    """The classes of the learner this token (or cookie) stands for."""
    return Me(classes=_me(request, api_learner(request)))


@router.delete("/api/tokens/current", status_code=204, tags=["tokens"],
               responses={401: {"description": "Wrong or revoked token."}})
def revoke_current(request: Request) -> Response:
    """Revoke the token this request carries (`practice logout`)."""
    if request.headers.get("authorization") is None:
        raise HTTPException(401, "send the token to revoke as `Authorization: Bearer TOKEN`", headers=BEARER_REALM)
    api_learner(request)
    request.app.state.tokens.revoke_token(request.headers["authorization"].partition(" ")[2].strip())
    return Response(status_code=204)
