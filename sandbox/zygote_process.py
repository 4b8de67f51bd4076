"""The zygote: a process that has imported the program (torch, the grading core) but never started CUDA nor run a
job, and forks prepared processes for backend "prestarted" (`sandbox.zygote` is its trusted side).

Started as `python -m sandbox.zygote_process --program MODULE --ctl-fd N`; it calls the program's
`prepare_zygote()`, says `ready` on the control socket, then answers each `fork` request: the request carries
the child's argv (for the program's `main`), environment, folder, uid, niceness and file-size limit, and four
descriptors (stdin, stdout, stderr, result) that become the child's 0 to 3. The child becomes what `python -m
MODULE ARGV` started by `subprocess.Popen` would be (a new session, those descriptors and nothing else, that
environment alone, the uid dropped, dies with the zygote) and calls `MODULE.main(argv)`, which prepares the
device and waits for its job as a fresh process does. The zygote reports `forked` (the pid) and, when a child
ends, `exited` (its return code as Popen gives it). A `state` request is answered with `state()`.

What keeps a forked child as isolated as a fresh one: the zygote never sees a job (the job goes from the trusted
side to the child's stdin), never runs learner code, and closes the control socket in the child; before each fork
it checks that it has not started CUDA (`sandbox.cuda_fork`), and refuses the fork if it has.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import importlib
import os
import resource
import select
import signal
import socket
import sys
import tempfile
import threading
import traceback

from sandbox import channel, confine
from sandbox.cuda_fork import fork_hazard

PR_SET_DUMPABLE = 4
CHILD_FDS = 4  # stdin, stdout, stderr, result: the child's descriptors 0 to 3


def returncode(status: int) -> int:
    """A wait status as subprocess.Popen.returncode gives it (negative: the signal that ended it)."""
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _child(module, req: dict, fds: list[int]) -> None:
    """In the forked child: become a fresh process of the program, then run its main. Never returns."""
    code = 70
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        confine.die_with_parent()
        os.setsid()
        for target, fd in enumerate(fds):  # fds were moved clear of 0..3 by the zygote
            os.dup2(fd, target, inheritable=target <= 2)
        os.closerange(CHILD_FDS, 65536)  # the control socket, the wake-up pipe, whatever torch opened
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
        size = int(req["file_bytes"])
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        if req.get("nice"):
            os.nice(int(req["nice"]))
        if req.get("uid") is not None:
            confine.drop_privileges(int(req["uid"]))
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # as a fresh process (the zygote is not dumpable)
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        tempfile.tempdir = None  # read again from this environment's TMPDIR
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            numpy.random.seed()  # `random` reseeds itself at fork; numpy's global generator does not
        sys.argv = [module.__name__, *req["argv"]]
        code = int(module.main(req["argv"]) or 0)
    except BaseException:  # noqa: BLE001 - said on stderr, then exit without unwinding into the zygote's loop
        try:
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
        os._exit(code)


def _clear_of_targets(fds: list[int]) -> list[int]:
    """Each descriptor duplicated above the targets 0..3 (so dup2 onto the targets never overwrites a source)."""
    import fcntl

    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds]
    for fd in fds:
        os.close(fd)
    return moved


def serve(ctl: socket.socket, module) -> None:
    """Answer fork requests and report exits until the channel closes."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    while True:
        readable, _, _ = select.select([ctl, wake_r], [], [])
        if wake_r in readable:
            try:
                while os.read(wake_r, 4096):
                    pass
            except BlockingIOError:
                pass
            _report_exits(ctl)
        if ctl in readable:
            req, fds = channel.recv(ctl)
            if req.get("op") == "stop":
                return
            if req.get("op") == "state":
                for fd in fds:
                    os.close(fd)
                channel.send(ctl, {"op": "state", "id": req.get("id"), **state()})
                continue
            if req.get("op") != "fork" or len(fds) != CHILD_FDS:
                for fd in fds:
                    os.close(fd)
                channel.send(ctl, {"op": "refused", "id": req.get("id"), "error": "not a fork request"})
                continue
            hazard = fork_hazard()
            if hazard is not None:  # the CUDA rule: no child of this process could use CUDA
                for fd in fds:
                    os.close(fd)
                channel.send(ctl, {"op": "refused", "id": req.get("id"), "error": hazard})
                continue
            fds = _clear_of_targets(fds)
            pid = os.fork()
            if pid == 0:
                ctl.close()
                _child(module, req, fds)
            for fd in fds:
                os.close(fd)
            channel.send(ctl, {"op": "forked", "id": req.get("id"), "pid": pid})


def state() -> dict:
    """What the trusted side may ask of the zygote: whether torch is imported and CUDA untouched here."""
    torch = sys.modules.get("torch")
    return {"torch_imported": torch is not None,
            "cuda_initialized": bool(torch is not None and torch.cuda.is_initialized()),
            "hazard": fork_hazard(), "threads": len(os.listdir("/proc/self/task"))}


def other_threads() -> list[str]:
    """The names of this process's threads other than the calling one (seen on an H200 with a CUDA build of torch
    2.11: importing Inductor's benchmarking module starts the CUDA driver's thread "cuda0000...")."""
    names = []
    for task in os.listdir("/proc/self/task"):
        if int(task) != threading.get_native_id():
            try:
                with open(f"/proc/self/task/{task}/comm") as fh:
                    names.append(fh.read().strip())
            except OSError:  # it ended meanwhile
                pass
    return names


def _report_exits(ctl: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        channel.send(ctl, {"op": "exited", "pid": pid, "returncode": returncode(status)})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="sandbox.zygote_process")
    parser.add_argument("--ctl-fd", type=int, required=True, help="inherited control socket")
    parser.add_argument("--program", required=True, help="module providing prepare_zygote() and main(argv)")
    args = parser.parse_args(argv)
    ctl = socket.socket(fileno=args.ctl_fd)
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no process of another run may trace or read it
    try:
        module = importlib.import_module(args.program)
        module.prepare_zygote()
        gc.freeze()  # children's collections skip the prepared heap instead of copying it page by page
        hazard = fork_hazard()
        if hazard is not None:
            raise RuntimeError(f"preparing the zygote started CUDA: {hazard}")
        others = other_threads()
        if others:  # a fork copies their locks as they are, held or not, into every child
            raise RuntimeError(f"preparing the zygote started {len(others)} thread(s) of its own "
                               f"({', '.join(others[:4])}): a child forked from it could find one's lock held")
    except BaseException as exc:
        channel.send(ctl, {"op": "failed", "error": f"{type(exc).__name__}: {exc}"[:2000]})
        raise
    channel.send(ctl, {"op": "ready", "pid": os.getpid()})
    try:
        serve(ctl, module)
    except channel.ChannelClosed:
        pass


if __name__ == "__main__":
    main()
    os._exit(0)
