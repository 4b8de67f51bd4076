"""Scores to the LMS through Assignment and Grade Services, after a verdict is stored or regraded.

The score is the learner's best on the exercise (1 once any submission's verdict, after regrades, is ACCEPTED;
else 0); where a class of the learner makes "solved" need the questions about the accepted file
(web/questions.py), 1 only once they are all answered. A verdict of the grader's own failure (INTERNAL_ERROR) is
never sent and never lowers a score.
A target's `sent_score` is claimed before sending (`LtiRegistry.claim_send`), so the same score is
sent once however often verdicts arrive; a failed send is undone and tried at the next verdict. The token comes
from the platform's token URL (OAuth 2 client credentials, a JWT assertion signed with the tool's key).
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timezone
from urllib.parse import urlencode, urlsplit, urlunsplit

import jwt
from sqlalchemy import select
from sqlalchemy.engine import Engine

from judge.reports.report import Verdict
from web.lti.launch import HTTP_TIMEOUT_S, SCORE_SCOPE
from web.lti.registry import GradeTarget, LtiRegistry, Platform
from web.questions import QuestionStore
from web.regrade import Regrades
from web.tables import DONE, SubmissionRow

log = logging.getLogger(__name__)
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
QUESTIONS_OPEN = "ACCEPTED, questions not all answered"  # the score's comment when the class's rule holds it back


def best_score(engine: Engine, learner_id: str, exercise_id: str) -> tuple[float | None, str | None]:
    """(1.0 or 0.0, the verdict that decides it): ACCEPTED anywhere after regrades makes 1. A verdict of the
    grader's own failure (INTERNAL_ERROR) does not count: (None, None) when no other verdict is there."""
    with engine.connect() as conn:
        rows = conn.execute(select(SubmissionRow.id, SubmissionRow.verdict).where(
            SubmissionRow.learner_id == learner_id, SubmissionRow.exercise_id == exercise_id,
            SubmissionRow.status == DONE).order_by(SubmissionRow.created_at)).all()
    newest = Regrades(engine).newest_done([sid for sid, _ in rows]) if rows else {}
    verdicts = [v for v in (newest[sid].verdict if sid in newest else verdict for sid, verdict in rows)
                if v != Verdict.INTERNAL_ERROR.value]
    if Verdict.ACCEPTED.value in verdicts:
        questions = QuestionStore(engine)
        if questions.required_for(learner_id, exercise_id) and not questions.answered_all(learner_id, exercise_id):
            return 0.0, QUESTIONS_OPEN
        return 1.0, Verdict.ACCEPTED.value
    return (0.0, verdicts[-1]) if verdicts else (None, None)


def scores_url(lineitem: str) -> str:
    """The line item's scores endpoint: `/scores` after its path, its query kept."""
    parts = urlsplit(lineitem)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/scores"))


def _post(url: str, body: bytes, headers: dict[str, str]) -> bytes:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
        return response.read()


def access_token(registry: LtiRegistry, platform: Platform, scope: str) -> str:
    """An access token of `platform` for `scope` (OAuth 2 client credentials with a JWT assertion signed with the
    tool's key): the score scope here, the roster's in web.lti.roster."""
    kid, pem = registry.signing_key()
    now = int(time.time())
    assertion = jwt.encode({"iss": platform.client_id, "sub": platform.client_id, "aud": platform.auth_token_url,
                            "iat": now, "exp": now + 300, "jti": uuid.uuid4().hex}, pem, algorithm="RS256",
                           headers={"kid": kid})
    body = urlencode({"grant_type": "client_credentials",
                      "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                      "client_assertion": assertion, "scope": scope}).encode("ascii")
    answer = json.loads(_post(platform.auth_token_url, body, {"Content-Type": "application/x-www-form-urlencoded"}))
    return answer["access_token"]


class GradeSender:
    """A queue listener: sends the learner's score on the exercise to every line item it goes to."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.registry = LtiRegistry(engine)

    def __call__(self, learner_id: str, exercise_id: str) -> None:
        targets = self.registry.grade_targets(learner_id, exercise_id)
        if not targets:
            return
        score, verdict = best_score(self.engine, learner_id, exercise_id)
        if score is None:
            return  # only the grader's own failures: nothing the LMS should record
        for target in targets:
            if not self.registry.claim_send(target, score):
                continue  # this score is there already
            try:
                self.send(target, score, verdict)
            except Exception as exc:  # noqa: BLE001 - the LMS is away or refused: try again at the next verdict
                log.warning("score for %s on %s not sent to %s: %s", learner_id, exercise_id, target.lineitem, exc)
                self.registry.send_failed(target, target.sent_score, f"{type(exc).__name__}: {exc}")

    def token(self, target: GradeTarget) -> str:
        """An access token for the score scope."""
        return access_token(self.registry, target.platform, SCORE_SCOPE)

    def send(self, target: GradeTarget, score: float, verdict: str | None) -> None:
        body = {"userId": target.sub, "scoreGiven": score, "scoreMaximum": 1.0,
                "activityProgress": "Completed", "gradingProgress": "FullyGraded",
                "timestamp": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                "comment": verdict or ""}
        _post(scores_url(target.lineitem), json.dumps(body).encode("utf-8"),
              {"Content-Type": SCORE_TYPE, "Authorization": f"Bearer {self.token(target)}"})
