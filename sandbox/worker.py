"""The warm worker: runs inside the sandbox, imports torch once, forks one confined child per job.

Started by a backend as `python -I -c <bootstrap>` with the control socket on `--ctl-fd`. It says
`ready` once warm, then serves `run` requests. Each request carries the job and three pipe ends
(result, stdout, stderr) that the trusted side reads directly, so nothing a submission writes
passes through the worker. The worker reports only how the child ended; limits, OOM and output
caps are judged by the trusted side from the cgroup and the pipes.

As root (bubblewrap): worker -> keeper (new namespaces, child subreaper) -> submission (pid 1 of
its own pid namespace, in its run cgroup, unprivileged uid, private /tmp). When the submission
ends, the kernel kills everything else in its pid namespace.
Unprivileged (Docker, worker is the container's pid 1): worker -> submission; afterwards the
worker kills every other process in the container and empties /tmp and /dev/shm.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import signal
import socket
import sys
import traceback

from sandbox import channel, confine

PR_SET_DUMPABLE = 4


def _status(code: int) -> dict:
    if os.WIFSIGNALED(code):
        return {"exit_code": None, "signal": os.WTERMSIG(code)}
    return {"exit_code": os.WEXITSTATUS(code) if os.WIFEXITED(code) else None, "signal": None}


PROGRAM: dict = {}  # the imported program module, set once at start


def _run_job(job_json: str, scratch: str) -> None:
    PROGRAM["module"].run_job(job_json, confine.RESULT_FD, scratch)


def _submission(req: dict, fds: list[int], ctl: socket.socket, privileged: bool) -> None:
    """In the forked child: confine, then grade. Never returns."""
    code = 70
    try:
        ctl.close()
        confine.lower_oom_priority()
        limits, uid = req["limits"], req["uid"]
        if privileged:
            confine.join_cgroup(req["cgroup_procs"])
            confine.set_hostname()
            scratch = confine.private_mounts(uid, req["tmp_mb"], req["hidden_mounts"], req.get("cache_layer"))
        else:
            scratch = req["scratch"]
            if req.get("cache_layer"):
                confine.link_cache(req["cache_layer"])
        confine.own_fds(*fds)
        os.setsid()
        local = bool(req.get("local"))
        confine.set_rlimits(limits, per_user_processes=not local)
        if local:  # no cgroup watches a local run: its memory is capped by address space, as backend "none" does
            confine.set_address_space(limits["memory_mb"] + req.get("address_space_headroom_mb", 0))
        if privileged:
            confine.drop_privileges(uid)
        confine.clean_env(scratch, req.get("env", {}))
        os.chdir(scratch)
        os.umask(0o077)
        if not local and not confine.lock_down():
            print("seccomp: no filter for this architecture", file=sys.stderr)
        os.write(confine.SETUP_FD, b"1")  # tells the worker the sandbox is complete; learner code next
        os.close(confine.SETUP_FD)
        _run_job(req.pop("job"), scratch)  # no second copy of the hidden tests stays reachable
        code = 0
    except BaseException:  # noqa: BLE001 - report anything, then exit without unwinding into the worker
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


def _keeper(req: dict, fds: list[int], ctl: socket.socket) -> None:
    """Root-side middle process: new namespaces, fork the submission, wait for all of it. Never returns."""
    try:
        confine.die_with_parent()
        confine.subreaper()
        confine.unshare_all()
        pid = os.fork()
        if pid == 0:
            _submission(req, fds, ctl, privileged=True)
        for fd in fds:
            os.close(fd)
        _, code = os.waitpid(pid, 0)
        _reap_all()
        status = _status(code)
        os._exit(200 + status["signal"] if status["signal"] else min(status["exit_code"], 199))
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(255)


def _reap_all() -> None:
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _decode_keeper(code: int) -> dict:
    status = _status(code)
    if status["exit_code"] is not None and 200 <= status["exit_code"] < 255:
        return {"exit_code": None, "signal": status["exit_code"] - 200}
    if status["exit_code"] == 255 or status["signal"]:
        return {"exit_code": None, "signal": None, "error": "the sandbox keeper failed"}
    return status


def _kill_others(child: int) -> None:
    """As the container's pid 1, kill(-1) ends every other process; elsewhere only the child's group."""
    try:
        if os.getpid() == 1:
            os.kill(-1, signal.SIGKILL)
        else:
            os.killpg(child, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _clean_dir(path: str) -> None:
    for name in os.listdir(path):
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, ignore_errors=True)
        else:
            try:
                os.unlink(full)
            except OSError:
                pass


def serve(ctl: socket.socket, privileged: bool, local_scratch: str | None = None) -> None:
    """Answer run requests until the channel closes or a `stop` arrives.

    `local_scratch`: a worker of the local backend (no container, the user's own uid): each run's scratch is
    a folder under it, the trusted side learns the run's pid (its process group) to kill it, and only that
    folder is emptied afterwards."""
    runs = 0
    while True:
        req, fds = channel.recv(ctl)
        if req.get("op") == "stop":
            return
        runs += 1
        if local_scratch:
            req["scratch"], req["local"] = os.path.join(local_scratch, f"run-{runs}"), True
            os.mkdir(req["scratch"], 0o700)
        elif not privileged:
            req["scratch"] = f"/tmp/run-{runs}"
            os.mkdir(req["scratch"], 0o700)
        setup_r, setup_w = os.pipe()
        fds.append(setup_w)
        pid = os.fork()
        if pid == 0:
            os.close(setup_r)
            if privileged:
                _keeper(req, fds, ctl)
            _submission(req, fds, ctl, privileged=False)
        for fd in fds:
            os.close(fd)
        if local_scratch:
            channel.send(ctl, {"op": "forked", "pid": pid})
        _, code, usage = os.wait4(pid, 0)
        status = _decode_keeper(code) if privileged else _status(code)
        # The child's CPU and its waited-for children's (the keeper's: the submission's): the only count of a local
        # run's CPU, and a second one beside the run cgroup's for the others
        status["cpu_s"] = usage.ru_utime + usage.ru_stime
        os.set_blocking(setup_r, False)
        try:
            status["setup_ok"] = os.read(setup_r, 1) == b"1"
        except BlockingIOError:
            status["setup_ok"] = False
        os.close(setup_r)
        if local_scratch:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            _reap_all()
            shutil.rmtree(req["scratch"], ignore_errors=True)
        elif not privileged:
            _kill_others(pid)
            _reap_all()
            for path in ("/tmp", "/dev/shm"):
                if os.path.isdir(path):
                    _clean_dir(path)
        channel.send(ctl, {"op": "exited", **status})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="sandbox.worker")
    parser.add_argument("--ctl-fd", type=int, default=None, help="inherited control socket")
    parser.add_argument("--ctl-path", default=None, help="Unix socket to connect to instead")
    parser.add_argument("--program", required=True, help="module providing prepare_worker() and run_job()")
    parser.add_argument("--local-scratch", default=None, help="local backend: the folder for runs' scratch")
    args = parser.parse_args(argv)
    if args.ctl_path:
        ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ctl.connect(args.ctl_path)
    else:
        ctl = socket.socket(fileno=args.ctl_fd)
    import ctypes

    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    privileged = os.geteuid() == 0
    try:
        import importlib

        PROGRAM["module"] = importlib.import_module(args.program)
        PROGRAM["module"].prepare_worker()
        gc.freeze()  # children's collections skip the warm heap instead of copying it page by page
    except BaseException as exc:
        channel.send(ctl, {"op": "failed", "error": f"{type(exc).__name__}: {exc}"})
        raise
    channel.send(ctl, {"op": "ready", "pid": os.getpid(), "privileged": privileged,
                       "seccomp": confine.seccomp.supported()})
    try:
        serve(ctl, privileged and not args.local_scratch, args.local_scratch)
    except channel.ChannelClosed:
        pass


def bootstrap(code_dir: str) -> str:
    """The `-c` program that starts a worker from `code_dir` (python -I ignores PYTHONPATH)."""
    return f"import sys; sys.path.insert(0, {json.dumps(code_dir)}); from sandbox.worker import main; main()"


if __name__ == "__main__":
    main()
