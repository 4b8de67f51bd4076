"""The client of the background judge ("daemon", cli/daemon_server.py): grade through it, start, ask, stop it.

`practice EXERCISE [FILE]` (the default way, no --sandbox or --sandbox local) grades through a running daemon of
this very code (same fingerprint: cli/daemon_protocol.py): its warm workers start a grading at once. Without one,
the file is graded in fresh processes as before, and a daemon is started when that grading is done (it warms
while the learner reads the report: the first grading is no slower than without it). A daemon of other code is
stopped and replaced. A daemon that fails (closes the connection, stops answering, sends what is not a report,
or answers INTERNAL_ERROR) costs a note: the file is graded again in fresh processes, so its verdict is never the
daemon's failure.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cli.daemon_protocol import (
    LOG_NAME,
    MAX_REPLY_BYTES,
    SOCKET_NAME,
    VERSION,
    Closed,
    DaemonSettings,
    Lines,
    Unusable,
    alive,
    code_roots,
    fingerprint,
    lock_held,
    peer_credentials,
    private_folder,
    send,
)
from judge.parent.exercise import Exercise
from judge.reports.i18n import T
from judge.reports.report import ProgressEvent, Report, Verdict

if TYPE_CHECKING:
    from sandbox.base import Sandbox

STARTING_WAIT_S = 5.0  # a daemon that holds the lock binds its socket within this
STOP_WAIT_S = 15.0
OnEvent = Callable[[ProgressEvent], None]



def starting(settings: DaemonSettings) -> T:
    return T("A background judge is starting: from now on a grading starts at once, without importing torch "
             "again. It stops after {minutes} idle minutes; `practice daemon stop` stops it now, --no-daemon "
             "(or PRACTICE_DAEMON=0) grades without it.", minutes=f"{settings.idle_seconds / 60:g}")


def fell_back(reason: T) -> T:
    return T("The background judge failed ({reason}); your file was graded in fresh processes instead.",
             reason=reason)


def not_used(reason: str) -> T:
    return T("The background judge is not used: {reason}", reason=T.same(reason))


CLOSED = T("it closed the connection")
MALFORMED = T("its answer was malformed")
INTERNAL = T("it answered with an internal error")


class Unavailable(Exception):
    """The daemon could not grade; `reason` says why, in the learner's words."""

    def __init__(self, reason: T):
        super().__init__(str(reason))
        self.reason = reason


class OtherCode(Exception):
    """The running daemon runs other code (its fingerprint differs); it must be replaced."""

    def __init__(self, pid: int):
        super().__init__(f"daemon {pid} runs other code")
        self.pid = pid


@dataclass
class Connection:
    sock: socket.socket
    pid: int
    lines: Lines = field(init=False)

    def __post_init__(self):
        self.lines = Lines(self.sock, MAX_REPLY_BYTES)

    def ask(self, message: dict, timeout: float) -> dict:
        self.sock.settimeout(timeout)
        send(self.sock, message)
        return self.lines.read()

    def close(self) -> None:
        self.sock.close()


def connect(settings: DaemonSettings, wait_for_start: bool = True) -> Connection | None:
    """A connection to this user's running daemon, or None when none runs (no socket, a stale one, or a daemon
    that holds the lock but did not bind its socket within STARTING_WAIT_S). Unusable: the folder is not private."""
    folder = private_folder(settings, create=False)
    if folder is None:
        return None
    deadline = time.monotonic() + (STARTING_WAIT_S if wait_for_start else 0.0)
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(folder / SOCKET_NAME))
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if time.monotonic() < deadline and lock_held(folder):  # starting: its socket comes next
                time.sleep(0.1)
                continue
            return None
        pid, uid, _ = peer_credentials(sock)
        if uid != os.getuid():  # the folder is ours alone; never talk to another user's process
            sock.close()
            raise Unusable(f"{folder / SOCKET_NAME} is served by uid {uid}")
        return Connection(sock, pid)


def status(settings: DaemonSettings) -> dict | None:
    """The running daemon's status message (with `current`: whether it runs this code), or None."""
    conn = connect(settings)
    if conn is None:
        return None
    try:
        answer = conn.ask({"op": "status"}, settings.silence_seconds)
    except (Closed, OSError):
        return None
    finally:
        conn.close()
    answer["current"] = answer.get("fingerprint") == fingerprint()
    return answer


def stop(settings: DaemonSettings, pid: int | None = None) -> int | None:
    """Stop the running daemon and wait until it is gone (SIGKILL when it does not go): its pid, or None when
    none ran. `pid`: the daemon to end when it no longer answers (a hung one)."""
    conn = None
    if pid is None:
        conn = connect(settings)
        if conn is None:
            return None
        pid = conn.pid
    try:
        if conn is not None:
            conn.ask({"op": "stop"}, settings.silence_seconds)
    except (Closed, OSError):
        pass
    finally:
        if conn is not None:
            conn.close()
    if conn is None:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_S
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive(pid):
        _signal(pid, signal.SIGKILL)
    return pid


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def start(settings: DaemonSettings) -> int:
    """Start a daemon in a session of its own (it outlives this command) and return its pid; it runs this code
    (its packages' folder first on its path) under `settings` (passed as their environment variables), logs to
    its folder's daemon.log and exits by itself if another daemon holds the folder's lock."""
    folder = private_folder(settings, create=True)
    assert folder is not None  # made above
    root = str(code_roots()["cli"].parent)
    boot = "import sys; sys.path.insert(0, sys.argv[1]); from cli.daemon_server import main; main()"
    env = {**os.environ, **settings.environment(), "PRACTICE_DAEMON_DIR": str(folder)}
    with open(os.open(folder / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as log:
        proc = subprocess.Popen([sys.executable, "-c", boot, root], stdin=subprocess.DEVNULL, stdout=log,
                                stderr=log, cwd=folder, env=env, start_new_session=True, close_fds=True)
    return proc.pid


def grade(conn: Connection, exercise: Exercise, source: str, filename: str, on_event: OnEvent | None,
          settings: DaemonSettings, stop_after_first_failure: bool = False, tier: str | None = None) -> Report:
    """Grade through the daemon at `conn`: its events go to `on_event`, its report comes back. OtherCode when it
    runs other code; Unavailable when it fails (the connection is closed either way)."""
    request = {"op": "grade", "version": VERSION, "fingerprint": fingerprint(), "exercise": str(exercise.root),
               "source": source, "filename": filename, "stop_after_first_failure": stop_after_first_failure,
               "tier": tier or ""}
    try:
        conn.sock.settimeout(settings.silence_seconds)
        send(conn.sock, request)
        while True:
            message = conn.lines.read()
            op = message.get("op")
            if op == "alive":
                continue
            if op == "event":
                if on_event is not None and message.get("event", {}).get("type") != "queued":
                    on_event(ProgressEvent.model_validate(message["event"]))
                continue
            if op == "report":
                report = Report.model_validate(message["report"])
                if report.verdict is Verdict.INTERNAL_ERROR:
                    raise Unavailable(INTERNAL)
                return report
            if op == "refused" and message.get("reason") == "fingerprint":
                raise OtherCode(conn.pid)
            if op == "error":
                raise Unavailable(T("it could not grade: {message}", message=str(message.get("message"))[:300]))
            raise Unavailable(MALFORMED)
    except TimeoutError:
        stop(settings, pid=conn.pid)  # hung: end it, the next grading starts a new one
        raise Unavailable(T("it did not answer for {seconds} s", seconds=f"{settings.silence_seconds:g}")) from None
    except (Closed, OSError):
        raise Unavailable(CLOSED) from None
    except ValueError:  # a report or an event that does not validate
        raise Unavailable(MALFORMED) from None
    finally:
        conn.close()


class DaemonGrader:
    """Grades one exercise's files through the daemon when one of this code runs, else in fresh processes (then
    starts one); `notes` collects what the learner should read once the grading is done."""

    def __init__(self, exercise: Exercise, settings: DaemonSettings, fresh: Callable[[], Sandbox]):
        """`fresh`: makes the sandbox of a grading without the daemon (closed after it)."""
        self.exercise, self.settings, self.fresh = exercise, settings, fresh
        self.notes: list[T] = []
        self.used_daemon = False

    def __call__(self, source: str, filename: str, on_event: OnEvent | None = None,
                 stop_after_first_failure: bool = False, tier: str | None = None) -> Report:
        try:
            report = self._through_daemon(source, filename, on_event, stop_after_first_failure, tier)
        except Unusable as exc:
            self.notes.append(not_used(str(exc)))
            return self._fresh(source, filename, on_event, stop_after_first_failure, tier)
        except Unavailable as exc:
            self.notes.append(fell_back(exc.reason))
            return self._fresh(source, filename, on_event, stop_after_first_failure, tier)
        if report is not None:
            self.used_daemon = True
            return report
        report = self._fresh(source, filename, on_event, stop_after_first_failure, tier)
        try:
            start(self.settings)
        except (OSError, Unusable) as exc:
            self.notes.append(not_used(str(exc)))
        else:
            self.notes.append(starting(self.settings))
        return report

    def _through_daemon(self, source, filename, on_event, stop_after_first_failure, tier=None) -> Report | None:
        """The daemon's report; None when no daemon of this code runs (one of other code is stopped first)."""
        conn = connect(self.settings)
        if conn is None:
            return None
        try:
            return grade(conn, self.exercise, source, filename, on_event, self.settings, stop_after_first_failure,
                         tier)
        except OtherCode as exc:
            stop(self.settings, pid=exc.pid)  # replaced: this grading runs fresh, then starts one of this code
            return None

    def _fresh(self, source, filename, on_event, stop_after_first_failure, tier=None) -> Report:
        from judge.parent.grading import grade as grade_here

        sandbox = self.fresh()
        try:
            return grade_here(self.exercise, source, sandbox=sandbox, filename=filename, on_event=on_event,
                              stop_after_first_failure=stop_after_first_failure, tier=tier)
        finally:
            sandbox.close()


def log_path(settings: DaemonSettings) -> Path:
    return settings.folder() / LOG_NAME
