"""Every setting of the web app, declared once: name, default, help, and env var `PRACTICE_<NAME>`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from judge.shared.paths import EXERCISES_DIR
from sandbox.backends import SANDBOXES


class Settings(BaseSettings):
    """Web app settings; override any of them with `PRACTICE_<NAME>` (e.g. `PRACTICE_PORT=9000`)."""

    model_config = SettingsConfigDict(env_prefix="PRACTICE_", extra="ignore")

    host: str = Field("127.0.0.1", description="Address to listen on.")
    port: int = Field(8000, ge=0, le=65535, description="Port to listen on.")
    data_dir: Path = Field(Path("data"), description="Folder for the database and the cookie secret.")
    database_url: str | None = Field(
        None, description="sqlite:///PATH or postgresql://USER:PASSWORD@HOST:PORT/DB; "
                          "default: sqlite:///<data_dir>/practice.db.")
    migrate_on_start: bool = Field(True, description="Migrate the database schema when the web app starts.")
    queue: Literal["auto", "embedded", "procrastinate"] = Field(
        "auto", description="Who grades: embedded (threads of the web process) | procrastinate (`practice worker` "
                            "processes, PostgreSQL only) | auto (procrastinate on PostgreSQL, else embedded).")
    worker_queues: list[Literal["cpu", "gpu"]] = Field(
        ["cpu"], description="practice worker: the queues it serves; repeat --queue for both (gpu needs a CUDA "
                             "device).")
    worker_name: str | None = Field(None, description="practice worker: its name; default: HOST-PID.")
    heartbeat_seconds: float = Field(
        5.0, gt=0, description="practice worker: how often it says it is alive.")
    stalled_after_seconds: float = Field(
        30.0, gt=0, description="A job whose worker has been silent this long is given to another worker.")
    exercises_dir: Path = Field(EXERCISES_DIR, description="The course: one folder per exercise.")
    reload_exercises: bool = Field(False, description="Pick up edits to the exercises folder without a restart.")
    sandbox: str = Field(
        "auto", json_schema_extra={"enum": list(SANDBOXES)},
        description="How submissions run (default auto: bwrap when it runs here; none and local need "
                    "PRACTICE_ALLOW_UNSANDBOXED=1).")
    allow_unsandboxed: bool = Field(
        False, description="Allow sandbox 'none' or 'local' (runs submissions as this user); for tests and local "
                           "use only.")
    workers: int = Field(
        default_factory=lambda: os.cpu_count() or 1, ge=0,
        description="Submissions graded at once (default: the number of CPUs).")
    gpu_graders: int = Field(
        0, ge=0, description="GPU gradings at once on a CUDA machine (and prepared processes per GPU pool); 0: the "
                             "graders' concurrency, lowered to one per core and one per 4 GiB of free GPU memory "
                             "(web/gpu_sizing.py).")
    gpu_seconds_per_hour: float = Field(
        0, ge=0, description="GPU-seconds of grading one learner may use in an hour on exercises that need CUDA (the "
                             "durations of their graded submissions); past it a GPU submission is refused until "
                             "the hour's oldest gradings leave the window; 0: no limit.")
    submissions_per_minute: int = Field(6, ge=1, description="Submissions one learner may make per minute.")
    secret_key: str | None = Field(
        None, description="Signs learner cookies; default: a random key kept in <data_dir>/secret_key.")
    cookie_secure: bool = Field(False, description="Send cookies only over HTTPS (set behind a TLS proxy).")
    learner_session_days: float = Field(
        90, gt=0, description="A learner's browser stays signed in this many days after its last visit (an "
                              "anonymous learner's work is then out of reach).")
    instructor_session_hours: float = Field(
        12, gt=0, description="An instructor's sign-in lasts this many hours.")
    signin_link_days: float = Field(
        7, gt=0, description="A personal sign-in link works once, within this many days of being made.")
    signin_failures_per_name: int = Field(
        5, ge=1, description="Failed password sign-ins for one name from one client address before each further one "
                             "blocks that name there for longer.")
    signin_failures_per_address: int = Field(
        20, ge=1, description="Failed password sign-ins from one client address before it is blocked likewise.")
    signin_failures_per_name_anywhere: int = Field(
        50, ge=1, description="Failed password sign-ins for one name from all addresses before the name is blocked "
                              "likewise, except from addresses it signed in from (so strangers cannot lock the "
                              "owner out).")
    raw_output_chars: int = Field(20_000, ge=100, description="Raw output shown per stream before truncating.")
    # What bounds hostile traffic (docs/security.md, "The web server under hostile traffic").
    submissions_per_minute_per_address: int = Field(
        60, ge=1, description="Submissions, playground runs and cost measurements one client address may start per "
                              "minute, together, whatever learners it claims to be (a cookie is free); raise it for a "
                              "class behind one NAT address.")
    max_queued_submissions: int = Field(
        200, ge=1, description="Submissions waiting for a grader and runs waiting for a slot, in all; beyond it "
                               "another is refused (429).")
    max_queued_per_address: int | None = Field(
        None, ge=1, description="Of those, what one client address may have waiting; default: a quarter of "
                                "max_queued_submissions (at least 1), so one address cannot fill the queue.")
    password_hashes_at_once: int = Field(
        default_factory=lambda: max(1, (os.cpu_count() or 1) // 2), ge=1,
        description="Sign-ins, joins and password changes that run Argon2 (~64 MiB, tens of ms each) at once, off "
                    "the event loop; the others wait without holding a thread.")
    base_url: str | None = Field(
        None, description="The address learners use (https://practice.example.edu): links in pages are built from "
                          "it and its host is answered; default: links from the request's host (an allowed one).")
    allowed_hosts: list[str] = Field(
        [], description="Host names answered besides localhost, IP addresses and base_url's host ('*.example.edu' "
                        "a domain's, '*' any); another Host header gets 400, so DNS rebinding cannot reach the server.")
    max_connections: int = Field(
        500, ge=1, description="Connections and requests served at once; past it a request gets 503.")
    keep_alive_seconds: int = Field(5, ge=1, description="An idle keep-alive connection is closed after this long.")
    header_seconds: float = Field(
        10.0, gt=0, description="A client has this long to send a request's headers (from the connection's start or "
                                "the previous response); then 408 and the connection is closed.")
    body_seconds: float = Field(
        60.0, gt=0, description="A client has this long, after the headers, to send a request's body; then 408.")
    max_header_bytes: int = Field(16 * 1024, ge=1024, description="Largest request line and headers, in bytes.")

    @field_validator("sandbox")
    @classmethod
    def _known_sandbox(cls, name: str) -> str:
        if name not in SANDBOXES:
            raise ValueError(f"unknown sandbox {name!r}; choose one of: {', '.join(SANDBOXES)}")
        return name

    def queued_per_address_limit(self) -> int:
        return self.max_queued_per_address or max(1, self.max_queued_submissions // 4)

    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'practice.db').resolve()}"

    def resolved_queue(self) -> str:
        """embedded or procrastinate; procrastinate needs PostgreSQL."""
        from web.db import is_postgres
        from web.errors import StartupError

        postgres = is_postgres(self.resolved_database_url())
        if self.queue == "procrastinate" and not postgres:
            raise StartupError("queue 'procrastinate' needs a PostgreSQL database: pass --database-url "
                               "postgresql://USER:PASSWORD@HOST:5432/DB, or use the embedded queue with SQLite")
        if self.queue == "auto":
            return "procrastinate" if postgres else "embedded"
        return self.queue

    def resolved_secret_key(self) -> str:
        """The configured key, or one generated once and kept in the data folder."""
        if self.secret_key:
            return self.secret_key
        path = self.data_dir / "secret_key"
        if not path.is_file():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            path.touch(mode=0o600)
            path.write_text(os.urandom(32).hex(), encoding="ascii")
        return path.read_text(encoding="ascii").strip()
