"""The background judge ("daemon"): what its client (cli/daemon.py) and its server (cli/daemon_server.py) share.

Settings, declared once; the private folder that holds its socket; the fingerprint of the code it runs; the
messages, one JSON object per line over a Unix socket, each of a bounded size.

    client -> {"op": "status"}                     <- {"op": "status", "pid", "state", "fingerprint", ...}
    client -> {"op": "stop"}                       <- {"op": "stopping", "pid"}, then the daemon exits
    client -> {"op": "grade", "version", "fingerprint", "exercise": FOLDER, "source", "filename",
               "stop_after_first_failure", "tier"}     (tier: "" for the whole grading, "cpu": judge/shared/tiers.py)
              <- {"op": "event", "event": ProgressEvent}*    ("running" and one "check" per finished check)
              <- {"op": "alive"}*                              (every HEARTBEAT_S while it works)
              <- {"op": "report", "report": Report} | {"op": "refused", "reason", ...} | {"op": "error", "message"}

Stdlib only: the client path of a grading must stay light (no torch, no sandbox backends).
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import socket
import stat
import struct
import sys
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

VERSION = 2  # bump when a message changes meaning (2: a grade request names its tier)
MAX_REQUEST_BYTES = 1 << 20  # a grade request: the source (at most 64 KiB, judge.parent.job) JSON-escaped, and paths
MAX_REPLY_BYTES = 64 << 20  # one reply line: a report with its compiler view (generated code included)
HEARTBEAT_S = 5.0
SOCKET_NAME, LOCK_NAME, LOG_NAME = "daemon.sock", "daemon.lock", "daemon.log"
# Environment that reaches the sandbox's runs from the daemon's own (sandbox/local_backend.py, sandbox/limits.py):
# a daemon started under another value is another daemon.
RUN_ENVIRONMENT = ("PATH", "TMPDIR", "PRACTICE_INDUCTOR_CACHE")
# What the daemon's own grade() reads (judge/shared/draw.py): a file graded under another secret draws other inputs.
GRADE_ENVIRONMENT = ("PRACTICE_GRADING_SECRET", "PRACTICE_CONFIG_DIR")
PACKAGES = ("cli", "judge", "sandbox")  # the code a daemon runs (the learner's runs fork from its warm workers)


def _flag(value: str) -> bool:
    if value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if value.strip().lower() in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"'{value}' is not 0 or 1")


def _seconds(value: str) -> float:
    seconds = float(value)
    if not seconds > 0:
        raise ValueError(f"'{value}' is not a positive number of seconds")
    return seconds


@dataclass(frozen=True)
class DaemonSettings:
    """The background judge's settings: each field's default, environment variable and meaning, in one place."""

    enabled: bool = field(default=True, metadata={
        "env": "PRACTICE_DAEMON", "parse": _flag,
        "help": "0: every grading runs in fresh processes, as with --no-daemon (1: the background judge grades "
                "the default way, `practice EXERCISE` without --sandbox or with --sandbox local)."})
    idle_seconds: float = field(default=15 * 60.0, metadata={
        "env": "PRACTICE_DAEMON_IDLE_SECONDS", "parse": _seconds,
        "help": "The background judge stops after this long without a request."})
    silence_seconds: float = field(default=30.0, metadata={
        "env": "PRACTICE_DAEMON_SILENCE_SECONDS", "parse": _seconds,
        "help": "A grading through the background judge that hears nothing from it this long (it sends a "
                "heartbeat every 5 s) is taken as hung: the judge is stopped and the file graded in fresh "
                "processes."})
    dir: Path | None = field(default=None, metadata={
        "env": "PRACTICE_DAEMON_DIR", "parse": Path,
        "help": "The private folder of its socket, lock and log (default: $XDG_RUNTIME_DIR/torch-practice, "
                "else ~/.cache/torch-practice/daemon)."})

    @classmethod
    def from_env(cls, environ=None) -> DaemonSettings:
        """The defaults, overridden by the environment; ValueError names a variable that does not parse."""
        environ = os.environ if environ is None else environ
        values = {}
        for f in dataclasses.fields(cls):
            raw = environ.get(f.metadata["env"])
            if raw is None or (f.name == "dir" and not raw):
                continue
            try:
                values[f.name] = f.metadata["parse"](raw)
            except ValueError as exc:
                raise ValueError(f"{f.metadata['env']}: {exc}") from None
        return cls(**values)

    def environment(self) -> dict[str, str]:
        """These settings as the environment variables `from_env` reads back (the folder where one is set)."""
        env = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None:
                env[f.metadata["env"]] = ("1" if value else "0") if isinstance(value, bool) else str(value)
        return env

    def folder(self) -> Path:
        if self.dir is not None:
            return self.dir
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        if runtime and os.path.isdir(runtime):
            return Path(runtime) / "torch-practice"
        return Path.home() / ".cache" / "torch-practice" / "daemon"


class Unusable(Exception):
    """The daemon's folder cannot be trusted (another owner, open to others, a socket path too long)."""


def private_folder(settings: DaemonSettings, create: bool) -> Path | None:
    """The daemon's folder, checked to be this user's alone (made, mode 0700, when `create`); None when it does
    not exist and `create` is false. Unusable when it exists but is not private."""
    folder = settings.folder()
    if create:
        old = os.umask(0o077)
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        finally:
            os.umask(old)
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        raise Unusable(f"{folder} is not a folder")
    if info.st_uid != os.getuid():
        raise Unusable(f"{folder} belongs to uid {info.st_uid}, not to you (uid {os.getuid()})")
    if info.st_mode & 0o077:
        raise Unusable(f"{folder} can be entered by other users (mode {stat.S_IMODE(info.st_mode):o}); "
                       f"`chmod 700 {folder}` makes it private")
    if len(os.fsencode(folder / SOCKET_NAME)) >= 108:
        raise Unusable(f"{folder / SOCKET_NAME}: longer than a Unix socket's path may be")
    return folder


def lock_held(folder: Path) -> bool:
    """Whether a daemon holds the folder's lock (one is running or starting)."""
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def peer_credentials(sock: socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end of a connected Unix socket (SO_PEERCRED)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", raw)
    return pid, uid, gid


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in (b"Z", b"X")


# ---------------------------------------------------------------- identity


def code_roots() -> dict[str, Path]:
    """The folder of each package a daemon runs, as imported here."""
    roots = {}
    for name in PACKAGES:
        module = sys.modules.get(name) or __import__(name)
        roots[name] = Path(module.__file__).resolve().parent
    return roots


def fingerprint() -> str:
    """What a daemon must share with its client to grade for it: the judge's, the sandbox's and the CLI's code
    (every .py file's path and contents, and the compiled catalogs a report's Chinese comes from), the
    interpreter, the installed torch (its metadata: torch is not imported) and the environment its runs
    inherit. The exercise is not part of it: the daemon reads the exercise's folder afresh for every grading."""
    digest = hashlib.sha256()

    def add(*parts: str | bytes) -> None:
        for part in parts:
            digest.update(part.encode() if isinstance(part, str) else part)
            digest.update(b"\0")

    try:
        torch = version("torch")
    except PackageNotFoundError:
        torch = ""
    add(str(VERSION), sys.executable, sys.version, torch)
    add(*(f"{name}={os.environ.get(name, '')}" for name in RUN_ENVIRONMENT + GRADE_ENVIRONMENT))
    for name, root in code_roots().items():
        add(name, str(root))
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".mo") and p.is_file()
                           and "__pycache__" not in p.parts):
            add(path.relative_to(root).as_posix(), path.read_bytes())
    return digest.hexdigest()[:32]


# ---------------------------------------------------------------- messages


class Closed(Exception):
    """The other end closed the connection, or sent a line that is too long or not a JSON object."""


def send(sock: socket.socket, message: dict) -> None:
    """One message, one line (json.dumps escapes every newline inside it)."""
    sock.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")


class Lines:
    """Messages read from a socket, one JSON object per line, each at most `limit` bytes."""

    def __init__(self, sock: socket.socket, limit: int):
        self.sock, self.limit = sock, limit
        self.buffer = bytearray()
        self.scanned = 0  # the buffer's first bytes, known to hold no newline

    def read(self) -> dict:
        """The next message; Closed at the end of the stream or on a line over the limit; TimeoutError from the
        socket's own timeout."""
        while (end := self.buffer.find(b"\n", self.scanned)) < 0:
            self.scanned = len(self.buffer)
            if self.scanned > self.limit:
                raise Closed(f"a message longer than {self.limit} bytes")
            try:
                chunk = self.sock.recv(1 << 20)
            except ConnectionResetError as exc:
                raise Closed(str(exc)) from None
            if not chunk:
                raise Closed("the connection was closed")
            self.buffer += chunk
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        self.scanned = 0
        if len(line) > self.limit:
            raise Closed(f"a message longer than {self.limit} bytes")
        try:
            message = json.loads(line)
        except ValueError:
            raise Closed("a message that is not JSON") from None
        if not isinstance(message, dict):
            raise Closed("a message that is not a JSON object")
        return message
