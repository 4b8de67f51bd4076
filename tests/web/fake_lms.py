"""A fake LTI 1.3 platform on 127.0.0.1: its own RSA keys, a JWKS, an OAuth 2 token endpoint and a line item.

It signs id_tokens as an LMS would, checks the tool's client-credentials assertion against the tool's published
key set (read from the app under test), and records every score posted to its line item. Nothing leaves the
machine; the server stops with the fixture.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
MEMBERSHIP_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
# The course's roster (Names and Role Provisioning Services), served in two pages.
ROSTER = [
    [{"user_id": "lms-user-42", "name": "Ada Lovelace", "status": "Active", "roles": [LEARNER]},
     {"user_id": "lms-teacher", "name": "Grace Hopper", "status": "Active", "roles": [INSTRUCTOR]}],
    [{"user_id": "lms-user-43", "name": "Alan Turing", "status": "Active", "roles": [LEARNER]},
     {"user_id": "lms-user-44", "name": "Gone Student", "status": "Inactive", "roles": [LEARNER]}],
]


def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class FakePlatform:
    """`start()` serves it; `id_token(...)` makes a launch; `scores` lists what the tool posted."""

    def __init__(self, client_id: str = "tool-client", deployment_id: str = "deploy-1"):
        self.client_id, self.deployment_id = client_id, deployment_id
        self.key, self.kid = rsa_key(), "platform-key-1"
        self.scores: list[dict] = []
        self.tokens: list[dict] = []
        self.granted: dict[str, str] = {}  # access token -> its scope
        self.roster_reads: list[str] = []
        self.score_arrived = threading.Event()
        self._scored = threading.Condition()
        self.tool_jwks: dict | None = None  # set by the test from the app's /lti/jwks
        self._server: ThreadingHTTPServer | None = None

    def wait_scores(self, count: int, timeout: float = 10.0) -> list[float]:
        """The scores given, once `count` have arrived (the tool tells the LMS after the learner's page learns the
        verdict, so a test waits for them)."""
        with self._scored:
            assert self._scored.wait_for(lambda: len(self.scores) >= count, timeout), \
                f"{count} score(s) expected, {len(self.scores)} arrived"
            return [s["scoreGiven"] for s in self.scores]

    # ---- URLs -----------------------------------------------------------------------------------------
    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def issuer(self) -> str:
        return self.base

    @property
    def lineitem(self) -> str:
        return self.base + "/api/lti/courses/7/line_items/3?type=exercise"

    @property
    def memberships_url(self) -> str:
        return self.base + "/api/lti/courses/7/names_and_roles"

    @property
    def deep_link_return_url(self) -> str:
        return self.base + "/deep_linking_return"

    def register(self, registry) -> str:
        platform = registry.add_platform(self.issuer, self.client_id, self.base + "/auth", self.base + "/token",
                                         self.base + "/jwks")
        return platform.id

    # ---- what the LMS signs ---------------------------------------------------------------------------
    def id_token(self, nonce: str, *, sub: str = "lms-user-42", exercise: str = "add-one", key=None,
                 deployment_id: str | None = None, name: str = "Ada Lovelace", roles=(LEARNER,),
                 roster: bool = False, deep_linking: bool = False) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer, "aud": self.client_id, "sub": sub, "iat": now, "exp": now + 300, "nonce": nonce,
            "name": name,
            CLAIM + "version": "1.3.0", CLAIM + "message_type": "LtiResourceLinkRequest",
            CLAIM + "deployment_id": deployment_id or self.deployment_id,
            CLAIM + "target_link_uri": f"http://testserver/exercises/{exercise}",
            CLAIM + "resource_link": {"id": "link-1"},
            CLAIM + "custom": {"exercise": exercise},
            "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": {
                "scope": [SCORE_SCOPE], "lineitem": self.lineitem},
            CLAIM + "roles": list(roles),
        }
        if roster:
            claims["https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"] = {
                "context_memberships_url": self.memberships_url, "service_versions": ["2.0"]}
        if deep_linking:
            claims[CLAIM + "message_type"] = "LtiDeepLinkingRequest"
            del claims[CLAIM + "resource_link"], claims[CLAIM + "custom"]
            claims["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = {
                "deep_link_return_url": self.deep_link_return_url, "accept_types": ["ltiResourceLink"],
                "accept_presentation_document_targets": ["iframe", "window"], "data": "opaque-42"}
        return jwt.encode(claims, pem(key or self.key), algorithm="RS256", headers={"kid": self.kid})

    # ---- the server -----------------------------------------------------------------------------------
    def start(self) -> FakePlatform:
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _reply(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.startswith("/api/lti/courses/7/names_and_roles"):
                    return self._roster()
                if self.path == "/jwks":
                    jwk = json.loads(RSAAlgorithm.to_jwk(platform.key.public_key()))
                    return self._reply(200, {"keys": [{**jwk, "kid": platform.kid, "alg": "RS256", "use": "sig"}]})
                self._reply(404, {"error": "not found"})

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/token":
                    return self._token(parse_qs(body.decode()))
                if self.path.startswith("/api/lti/courses/7/line_items/3/scores"):
                    return self._score(body)
                self._reply(404, {"error": "not found"})

            def _token(self, form: dict) -> None:
                assertion = form.get("client_assertion", [""])[0]
                try:
                    kid = jwt.get_unverified_header(assertion)["kid"]
                    jwk = next(k for k in platform.tool_jwks["keys"] if k["kid"] == kid)
                    claims = jwt.decode(assertion, RSAAlgorithm.from_jwk(json.dumps(jwk)), algorithms=["RS256"],
                                        audience=platform.base + "/token", issuer=platform.client_id)
                except Exception as exc:  # noqa: BLE001 - refused like a real platform, with the reason
                    return self._reply(401, {"error": "invalid_client", "error_description": str(exc)})
                scope = form.get("scope", [""])[0]
                if form.get("grant_type") != ["client_credentials"] or scope not in (SCORE_SCOPE, MEMBERSHIP_SCOPE):
                    return self._reply(400, {"error": "invalid_request"})
                platform.tokens.append({**claims, "_scope": scope})
                token = "token-" + secrets.token_hex(8)
                platform.granted[token] = scope
                self._reply(200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": scope})

            def _roster(self) -> None:
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if platform.granted.get(token) != MEMBERSHIP_SCOPE:
                    return self._reply(401, {"error": "no token for the membership scope"})
                if self.headers.get("Accept") != "application/vnd.ims.lti-nrps.v2.membershipcontainer+json":
                    return self._reply(406, {"error": "membership container only"})
                page = 1 if self.path.endswith("page=2") else 0
                platform.roster_reads.append(self.path)
                data = json.dumps({"id": platform.memberships_url, "context": {"id": "7"},
                                   "members": ROSTER[page]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.ims.lti-nrps.v2.membershipcontainer+json")
                if page == 0:
                    self.send_header("Link", f'<{platform.memberships_url}?page=2>; rel="next"')
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _score(self, body: bytes) -> None:
                if not self.headers.get("Authorization", "").startswith("Bearer token-"):
                    return self._reply(401, {"error": "no token"})
                if self.headers.get("Content-Type") != "application/vnd.ims.lis.v1.score+json":
                    return self._reply(415, {"error": "score content type"})
                with platform._scored:
                    platform.scores.append({**json.loads(body), "_query": self.path.split("?", 1)[-1],
                                            "_id": uuid.uuid4().hex})
                    platform._scored.notify_all()
                platform.score_arrived.set()
                self._reply(200, {"resultUrl": platform.lineitem + "/results/1"})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, name="fake-lms", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
