"""The trusted side of the zygote (`sandbox.zygote_process`): start it, ask it for prepared processes, and hand each
back as a `Forked`, which backend "prestarted" supervises as it does a `subprocess.Popen`.

A prepared process started fresh pays an interpreter start and the imports of torch and the grading core (about
2 s of CPU each on the lent H200); forked from the zygote it pays a fork, then its own CUDA context. The zygote is
started with the program's clean environment (`sandbox.fresh_process.child_env`, torch's CUDA check through NVML)
and lives as long as its `Zygote`; it dies with the thread that started it (the launcher's).
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field

from sandbox import channel, launcher
from sandbox.base import SandboxError
from sandbox.cuda_fork import NVML_CHECK
from sandbox.fresh_process import child_env
from sandbox.limits import Program

log = logging.getLogger(__name__)
READY_TIMEOUT_S = 300.0  # import torch and the grading core on a busy machine
KILLED = -signal.SIGKILL


class Forked:
    """A prepared process forked by the zygote, with the parts of subprocess.Popen that backend "prestarted" uses:
    its pid, its pipes and its return code (reported by the zygote, its parent)."""

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int):
        self.pid = pid
        self.stdin = os.fdopen(stdin, "wb", buffering=0)
        self.stdout = os.fdopen(stdout, "rb", buffering=0)
        self.stderr = os.fdopen(stderr, "rb", buffering=0)
        self.returncode: int | None = None
        self._ended = threading.Event()

    def ended(self, returncode: int) -> None:
        self.returncode = returncode
        self._ended.set()

    def close(self) -> None:
        """Close the pipes (a process never forked, or one its supervisor is done with)."""
        for stream in (self.stdin, self.stdout, self.stderr):
            stream.close()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"forked process {self.pid}", timeout or 0)
        assert self.returncode is not None
        return self.returncode


@dataclass
class _Request:
    child: Forked | None  # what a fork request forks
    done: threading.Event = field(default_factory=threading.Event)
    reply: dict = field(default_factory=dict)


class Zygote:
    """One zygote process of `program`; `fork()` asks it for a prepared process. Thread-safe."""

    def __init__(self, program: Program, python: str = sys.executable, env: dict | None = None):
        self.program = program
        self._scratch = tempfile.mkdtemp(prefix="practice-zygote-")
        zygote_env = {**child_env(self._scratch, program), **NVML_CHECK, **(env or {})}
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._ctl = ours
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._requests: dict[int, _Request] = {}
        self._children: dict[int, Forked] = {}
        self._closed = False
        self.log = tempfile.TemporaryFile(prefix="practice-zygote-")
        self.proc: subprocess.Popen | None = None
        try:
            self.proc = launcher.call(lambda: subprocess.Popen(
                [python, "-m", "sandbox.zygote_process", "--ctl-fd", str(theirs.fileno()), "--program",
                 program.module], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=self.log,
                stderr=subprocess.STDOUT, cwd=self._scratch, env=zygote_env, start_new_session=True,
                preexec_fn=_die_with_parent))
        except OSError as exc:
            self.close()
            raise SandboxError(f"the zygote could not be started: {exc}") from None
        finally:
            theirs.close()
        ours.settimeout(READY_TIMEOUT_S)
        try:
            msg, _ = channel.recv(ours)
        except (channel.ChannelClosed, TimeoutError) as exc:
            self.close()
            raise SandboxError(f"the zygote did not start: {exc}; {self.said()}") from None
        if msg.get("op") != "ready":
            said = self.said()
            self.close()
            raise SandboxError(f"the zygote failed to start: {msg.get('error', msg)}; {said}")
        ours.settimeout(None)
        self.pid = int(msg["pid"])
        threading.Thread(target=self._read, name="zygote-reader", daemon=True).start()

    def said(self) -> str:
        """The last of what the zygote printed."""
        if self.log.closed:
            return ""
        self.log.seek(0)
        return self.log.read()[-3000:].decode("utf-8", "replace")

    def alive(self) -> bool:
        return not self._closed and self.proc is not None and self.proc.poll() is None

    def state(self) -> dict:
        """The zygote's own account of itself (`sandbox.zygote_process.state`)."""
        return self._ask({"op": "state"}, [])

    def _ask(self, message: dict, fds: list[int], child: Forked | None = None) -> dict:
        """Send `message` (with `fds`) and wait for the reply that carries its id."""
        request = _Request(child)
        with self._lock:
            if self._closed:
                request.reply = {"error": "the zygote is closed"}
            else:
                rid = next(self._ids)
                self._requests[rid] = request
                try:
                    channel.send(self._ctl, {**message, "id": rid}, fds=fds)
                except channel.ChannelClosed as exc:
                    self._requests.pop(rid, None)
                    request.reply = {"error": f"the zygote's channel closed: {exc}"}
        if request.reply:
            request.done.set()
        request.done.wait()  # the reader answers it, or ends every request when the zygote's channel ends
        return request.reply

    def fork(self, argv: list[str], env: dict, cwd: str, *, uid: int | None, nice: int, file_bytes: int,
             result_w: int) -> Forked:
        """A process of the program forked by the zygote, started as `python -m <program> <argv>` would be, with
        `result_w` as its descriptor 3 (the caller closes its own). SandboxError when the zygote refuses or is gone."""
        pipes = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1], result_w]
        child = Forked(0, stdin=pipes[0][1], stdout=pipes[1][0], stderr=pipes[2][0])
        try:
            reply = self._ask({"op": "fork", "argv": argv, "env": env, "cwd": cwd, "uid": uid, "nice": nice,
                               "file_bytes": file_bytes}, theirs, child)
        finally:
            for fd in theirs[:3]:  # result_w stays the caller's
                os.close(fd)
        if reply.get("op") != "forked":
            child.close()
            raise SandboxError(f"the zygote did not fork: {reply.get('error', reply)}")
        return child

    def _read(self) -> None:
        """Replies to fork requests, and exits, until the zygote's channel ends (its children died with it)."""
        try:
            while True:
                msg, fds = channel.recv(self._ctl)
                for fd in fds:
                    os.close(fd)
                if msg.get("op") == "exited":
                    child = self._children.pop(int(msg["pid"]), None)
                    if child is not None:
                        child.ended(int(msg["returncode"]))
                    continue
                with self._lock:
                    request = self._requests.pop(int(msg.get("id") or 0), None)
                if request is None:
                    continue
                if msg.get("op") == "forked" and request.child is not None:
                    request.child.pid = int(msg["pid"])
                    self._children[request.child.pid] = request.child
                request.reply = msg
                request.done.set()
        except (channel.ChannelClosed, OSError, ValueError):
            pass
        finally:
            self._end()

    def _end(self) -> None:
        with self._lock:
            self._closed = True
            requests, self._requests = list(self._requests.values()), {}
        for request in requests:
            request.reply = {"error": f"the zygote ended; {self.said()}"}
            request.done.set()
        for child in list(self._children.values()):
            child.ended(KILLED)  # the zygote's children die with it (PR_SET_PDEATHSIG)
        self._children.clear()

    def close(self) -> None:
        """Stop the zygote; every process it forked dies with it."""
        self._closed = True
        try:
            self._ctl.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._ctl.close()
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self._scratch, ignore_errors=True)


def _die_with_parent() -> None:
    from sandbox import confine

    confine.die_with_parent()
