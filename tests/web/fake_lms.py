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
        self.score_arrived = threading.Event()
        self.tool_jwks: dict | None = None  # set by the test from the app's /lti/jwks
        self._server: ThreadingHTTPServer | None = None

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

    def register(self, registry) -> str:
        platform = registry.add_platform(self.issuer, self.client_id, self.base + "/auth", self.base + "/token",
                                         self.base + "/jwks")
        return platform.id

    # ---- what the LMS signs ---------------------------------------------------------------------------
    def id_token(self, nonce: str, *, sub: str = "lms-user-42", exercise: str = "add-one", key=None,
                 deployment_id: str | None = None, name: str = "Ada Lovelace") -> str:
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
        }
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
                if form.get("grant_type") != ["client_credentials"] or SCORE_SCOPE not in form.get("scope", [""])[0]:
                    return self._reply(400, {"error": "invalid_request"})
                platform.tokens.append(claims)
                self._reply(200, {"access_token": "token-" + secrets.token_hex(8), "token_type": "Bearer",
                                  "expires_in": 3600, "scope": SCORE_SCOPE})

            def _score(self, body: bytes) -> None:
                if not self.headers.get("Authorization", "").startswith("Bearer token-"):
                    return self._reply(401, {"error": "no token"})
                if self.headers.get("Content-Type") != "application/vnd.ims.lis.v1.score+json":
                    return self._reply(415, {"error": "score content type"})
                platform.scores.append({**json.loads(body), "_query": self.path.split("?", 1)[-1],
                                        "_id": uuid.uuid4().hex})
                platform.score_arrived.set()
                self._reply(200, {"resultUrl": platform.lineitem + "/results/1"})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, name="fake-lms", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
