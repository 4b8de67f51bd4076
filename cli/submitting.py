"""Local work that counts in a class: `practice login`, `practice submit`, `practice logout` (and the
notebook's `--submit`).

`practice login URL` takes the learner's personal sign-in link (traded for a token of their own through
`POST /api/tokens`) or the server's address with a token made on `/me`; it checks the token (`GET /api/me`)
and keeps server and token in `credentials.json` of the user's config folder (`PRACTICE_CONFIG_DIR`, else
click's app folder: `~/.config/torch-practice` on Linux), readable by the user only (mode 0600).
`practice submit` sends the file to the server's API like the web page does, then follows the submission's
event stream: the server's graders decide, and their report is what is shown (a local verdict is never sent).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from judge.reports.i18n import T
from judge.reports.report import ProgressEvent, Report
from judge.shared.paths import config_dir

CREDENTIALS_FILE = "credentials.json"
LINK_PATH = "/signin/link/"
TIMEOUT = httpx.Timeout(30.0, read=None)  # an event stream is quiet while torch compiles (keep-alive each 15 s)


class SubmitError(Exception):
    """Something the learner can fix (no login yet, a refused token, a busy server); `message` is a T."""

    def __init__(self, message: T):
        super().__init__(message.render("en"))
        self.message = message


@dataclass(frozen=True)
class Credentials:
    server: str  # scheme://host[:port][/prefix], no trailing slash
    token: str

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}


def credentials_path() -> Path:
    return config_dir() / CREDENTIALS_FILE


def save_credentials(credentials: Credentials) -> Path:
    """Write server and token, readable and writable by the user only (0600, in a 0700 folder)."""
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / CREDENTIALS_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # a file that existed keeps its old mode through O_CREAT
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump({"server": credentials.server, "token": credentials.token}, out)
    return path


def load_credentials() -> Credentials:
    path = credentials_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Credentials(server=data["server"], token=data["token"])
    except FileNotFoundError:
        raise SubmitError(T("not signed in to a class server: run `practice login LINK` with the personal sign-in "
                            "link from your class's /me page (or `practice login URL --token TOKEN`).")) from None
    except (ValueError, KeyError, TypeError):
        raise SubmitError(T("{path} is not what `practice login` writes: run `practice login` again.",
                            path=str(path))) from None


def split_link(url: str) -> tuple[str, str | None]:
    """(server, sign-in token) of a personal sign-in link, or (server, None) for a server's address."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SubmitError(T("{url} is not an http(s) address: give your personal sign-in link "
                            "(https://.../signin/link/...) or the server's address with --token.", url=url))
    path = parts.path
    if LINK_PATH in path:
        prefix, _, token = path.partition(LINK_PATH)
        return f"{parts.scheme}://{parts.netloc}{prefix}".rstrip("/"), token.strip("/") or None
    return f"{parts.scheme}://{parts.netloc}{path}".rstrip("/"), None


def _refused(response: httpx.Response) -> SubmitError:
    try:
        detail = response.json().get("detail", response.text)
    except ValueError:
        detail = response.text[:300]
    if response.status_code == 401:
        return SubmitError(T("the server refused your token ({detail}).", detail=detail))
    if response.status_code == 429:
        return SubmitError(T("the server is busy with your submissions ({detail}); try again in {seconds} s.",
                             detail=detail, seconds=response.headers.get("retry-after", "a few")))
    return SubmitError(T("the server answered {status}: {detail}", status=response.status_code, detail=detail))


def _client(server: str) -> httpx.Client:
    return httpx.Client(base_url=server, timeout=TIMEOUT, follow_redirects=False)


def login(url: str, token: str | None = None) -> tuple[Credentials, list[dict]]:
    """Sign in with a sign-in link (traded for a new token) or a server address and a token; checks the token,
    stores it, and returns the credentials and the learner's classes."""
    server, link_token = split_link(url)
    try:
        with _client(server) as client:
            if token is None:
                if link_token is None:
                    raise SubmitError(T("{url} is not a personal sign-in link: give the link (…/signin/link/…) or "
                                        "add --token with a token made on your /me page.", url=url))
                made = client.post("/api/tokens", json={"signin_token": link_token,
                                                        "label": f"practice login on {socket.gethostname()}"[:100]})
                if made.status_code != 201:
                    raise _refused(made)
                token = made.json()["token"]
            credentials = Credentials(server, token.strip())
            me = client.get("/api/me", headers=credentials.headers())
            if me.status_code != 200:
                raise _refused(me)
    except httpx.HTTPError as exc:
        raise SubmitError(T("cannot reach {server}: {error}", server=server, error=str(exc))) from None
    save_credentials(credentials)
    return credentials, me.json()["classes"]


def logout() -> bool:
    """Revoke the stored token on its server (when reachable) and forget it; False when none was stored."""
    path = credentials_path()
    if not path.exists():
        return False
    try:
        credentials = load_credentials()
        with _client(credentials.server) as client:
            client.delete("/api/tokens/current", headers=credentials.headers())
    except (SubmitError, httpx.HTTPError):
        pass  # forgetting it here is what matters; a token left on the server can be revoked on /me
    path.unlink()
    return True


def _events(response: httpx.Response) -> Iterator[ProgressEvent]:
    """The ProgressEvents of a Server-Sent Events stream (`event:`/`data:` lines; comments are keep-alives)."""
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            yield ProgressEvent.model_validate_json("\n".join(data))
            data = []


def submit_source(credentials: Credentials, exercise_id: str, source: str, *, origin: str = "cli",
                  lang: str | None = None, on_event: Callable[[ProgressEvent], None] | None = None,
                  note: str | None = None) -> Report:
    """Send `source` (with the learner's one-line `note`, shown on their timeline) to the server and follow its
    grading; the report is the server's (in `lang`, or with every language in `translations`)."""
    emit = on_event or (lambda event: None)
    params = {"lang": lang} if lang else {}
    try:
        with _client(credentials.server) as client:
            created = client.post(f"/api/exercises/{exercise_id}/submissions", headers=credentials.headers(),
                                  json={"source": source, "origin": origin, **({"note": note} if note else {})})
            if created.status_code == 404:
                raise SubmitError(T("{server} has no exercise '{exercise}' (`practice list` lists this course's; the "
                                    "class's server may serve another).", server=credentials.server,
                                    exercise=exercise_id))
            if created.status_code != 202:
                raise _refused(created)
            events_url = created.json()["events_url"]
            with client.stream("GET", events_url, params=params, headers=credentials.headers()) as stream:
                if stream.status_code != 200:
                    stream.read()
                    raise _refused(stream)
                for event in _events(stream):
                    emit(event)
                    if event.type == "done" and event.report is not None:
                        return event.report
    except httpx.HTTPError as exc:
        raise SubmitError(T("lost the connection to {server}: {error}", server=credentials.server,
                            error=str(exc))) from None
    raise SubmitError(T("the server's event stream ended before the verdict: see the submission on the web page."))
