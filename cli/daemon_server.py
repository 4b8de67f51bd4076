"""The background judge ("daemon"): one per user, a warm `local` sandbox kept for the one-shot grading commands.

Started by `practice EXERCISE` (cli/daemon.py) as `python -c ... cli.daemon_server`, in a session of its own. It
binds its socket in the user's private folder before anything heavy is imported, then warms the sandbox's runner
and verifier workers (torch imported once, as for `--watch`). Each grade request loads the exercise from its
folder afresh and goes through the one `judge.parent.grading.grade()`, one at a time; the learner's code runs only in
the processes the sandbox forks, never here. Only this user's processes are answered (SO_PEERCRED). It exits
after `idle_seconds` without a request, on `stop`, on SIGTERM or SIGINT, and when its workers cannot start.
"""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from cli.daemon_protocol import (
    HEARTBEAT_S,
    LOCK_NAME,
    MAX_REQUEST_BYTES,
    SOCKET_NAME,
    VERSION,
    Closed,
    DaemonSettings,
    Lines,
    fingerprint,
    peer_credentials,
    private_folder,
    send,
)

if TYPE_CHECKING:
    from sandbox.base import Sandbox

log = logging.getLogger("practice.daemon")
LOCK_WAIT_S = 15.0  # a daemon being replaced may still be closing its workers
CLOSE_WAIT_S = 10.0


class Daemon:
    def __init__(self, folder: Path, settings: DaemonSettings):
        self.folder, self.settings = folder, settings
        self.fingerprint = fingerprint()
        self.started = time.time()
        self.state = "warming up"
        self.gradings = 0
        self.active = 0
        self.last_active = time.monotonic()
        self.stopping = threading.Event()
        self.grading = threading.Lock()  # one grading at a time
        self.counts = threading.Lock()
        self.sandbox: Sandbox | None = None
        self.sandbox_made = threading.Event()
        self.listener: socket.socket | None = None
        self.inode = 0

    # ------------------------------------------------------------ life

    def bind(self) -> None:
        path = self.folder / SOCKET_NAME
        try:
            path.unlink()  # a socket of a daemon that died (we hold the lock: no live one owns it)
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listener.bind(str(path))
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        listener.listen(16)
        self.listener, self.inode = listener, os.stat(path).st_ino

    def warm(self) -> None:
        """Make the sandbox and start its runner and verifier workers; a grading that arrives meanwhile waits
        for them inside the sandbox."""
        try:
            from judge.parent.grading import make_sandbox
            from sandbox.warm import WarmSandbox

            sandbox = make_sandbox("local")
            assert isinstance(sandbox, WarmSandbox)  # the local backend keeps warm workers
            self.sandbox = sandbox
            self.sandbox_made.set()
            sandbox.warm_up(pools=("runner", "verifier"))
            self.state = "ready"
            log.info("ready (%.1f s after start)", time.time() - self.started)
        except Exception as exc:  # a daemon without workers has nothing to offer
            log.exception("the sandbox's workers could not start: %s", exc)
            self.state = "failed"
            self.sandbox_made.set()
            self.stopping.set()

    def serve(self) -> None:
        assert self.listener is not None
        threading.Thread(target=self.warm, name="daemon-warm", daemon=True).start()
        while not self.stopping.is_set():
            with self.counts:
                idle = time.monotonic() - self.last_active if not self.active else 0.0
            if idle >= self.settings.idle_seconds:
                log.info("idle for %.0f s: stopping", idle)
                break
            self.listener.settimeout(max(0.05, min(0.5, self.settings.idle_seconds - idle)))
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self.answer, args=(conn,), name="daemon-connection", daemon=True).start()

    def close(self) -> None:
        """Remove the socket (while it is still ours), then stop the workers."""
        path = self.folder / SOCKET_NAME
        try:
            if os.stat(path).st_ino == self.inode:
                path.unlink()
        except FileNotFoundError:
            pass
        if self.listener is not None:
            self.listener.close()
        if self.sandbox is not None:
            closing = threading.Thread(target=self.sandbox.close, daemon=True)
            closing.start()
            closing.join(CLOSE_WAIT_S)

    # ------------------------------------------------------------ one connection

    def answer(self, conn: socket.socket) -> None:
        with conn:
            _, uid, _ = peer_credentials(conn)
            if uid != os.getuid():
                log.warning("refused a connection of uid %d", uid)
                _quietly(send, conn, {"op": "refused", "reason": "uid"})
                return
            conn.settimeout(self.settings.silence_seconds)
            try:
                request = Lines(conn, MAX_REQUEST_BYTES).read()
            except (Closed, OSError) as exc:
                log.warning("a request could not be read: %s", exc)
                return
            conn.settimeout(None)
            op = request.get("op")
            if op == "status":
                _quietly(send, conn, self.status())
            elif op == "stop":
                _quietly(send, conn, {"op": "stopping", "pid": os.getpid()})
                self.stopping.set()
            elif op == "grade":
                self.grade(conn, request)
            else:
                _quietly(send, conn, {"op": "error", "message": f"unknown op {op!r}"})

    def status(self) -> dict:
        return {"op": "status", "pid": os.getpid(), "state": self.state, "fingerprint": self.fingerprint,
                "version": VERSION, "gradings": self.gradings, "started": self.started,
                "idle_seconds": self.settings.idle_seconds, "executable": sys.executable}

    def grade(self, conn: socket.socket, request: dict) -> None:
        if request.get("version") != VERSION or request.get("fingerprint") != self.fingerprint:
            _quietly(send, conn, {"op": "refused", "reason": "fingerprint", "fingerprint": self.fingerprint})
            return
        from judge.shared.tiers import TIERS

        fields = {"exercise": str, "source": str, "filename": str, "stop_after_first_failure": bool, "tier": str}
        wrong = [name for name, kind in fields.items() if not isinstance(request.get(name), kind)]
        wrong += ["tier"] if not wrong and request["tier"] not in ("", *TIERS) else []
        if wrong:
            _quietly(send, conn, {"op": "error", "message": f"malformed request: {', '.join(wrong)}"})
            return
        with self.counts:
            self.active += 1
        lock = threading.Lock()
        done = threading.Event()

        def say(message: dict) -> None:
            with lock:
                _quietly(send, conn, message)

        def heartbeat() -> None:
            while not done.wait(HEARTBEAT_S):
                say({"op": "alive"})

        threading.Thread(target=heartbeat, name="daemon-heartbeat", daemon=True).start()
        try:
            say({"op": "event", "event": {"type": "queued"}})
            with self.grading:
                say(self._graded(request, say))
        finally:
            done.set()
            with self.counts:
                self.active -= 1
                self.last_active = time.monotonic()

    def _graded(self, request: dict, say) -> dict:
        """The grading's last message: its report, or why there is none."""
        from judge.parent.exercise import ExerciseError, load_exercise
        from judge.parent.grading import grade
        from judge.reports.report import ProgressEvent

        try:
            exercise = load_exercise(request["exercise"])
        except ExerciseError as exc:
            return {"op": "error", "message": str(exc)}
        self.sandbox_made.wait()
        if self.sandbox is None:
            return {"op": "error", "message": "the sandbox's workers could not start"}

        def on_event(event: ProgressEvent) -> None:
            if event.type != "done":  # the report comes once, last
                say({"op": "event", "event": event.model_dump(mode="json", exclude_none=True)})

        started = time.monotonic()
        report = grade(exercise, request["source"], sandbox=self.sandbox, on_event=on_event,
                       filename=request["filename"], stop_after_first_failure=request["stop_after_first_failure"],
                       tier=request["tier"] or None)
        self.gradings += 1
        log.info("graded %s (%s) in %.2f s", exercise.id, report.verdict.value, time.monotonic() - started)
        return {"op": "report", "report": report.model_dump(mode="json")}


def _quietly(fn, *args) -> None:
    """Send, ignoring a client that went away (its grading still ends here, one at a time)."""
    try:
        fn(*args)
    except OSError:
        pass


def take_lock(folder: Path) -> int | None:
    """The folder's lock, held for this daemon's life; None when another daemon keeps it past LOCK_WAIT_S."""
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                return None
            time.sleep(0.1)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s daemon[%(process)d] %(message)s")
    settings = DaemonSettings.from_env()
    folder = private_folder(settings, create=True)
    assert folder is not None  # made above
    if take_lock(folder) is None:
        log.info("another daemon holds %s: exiting", folder / LOCK_NAME)
        return
    daemon = Daemon(folder, settings)
    daemon.bind()
    log.info("listening on %s (fingerprint %s)", folder / SOCKET_NAME, daemon.fingerprint)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: daemon.stopping.set())
    try:
        daemon.serve()
    except BaseException:  # said in the log, then the same way out
        log.exception("the daemon failed")
    finally:
        daemon.close()
        log.info("stopped after %d grading(s)", daemon.gradings)
        logging.shutdown()
        os._exit(0)  # threads of a grading a client left, and the sandbox's, end with the process


if __name__ == "__main__":
    main()
