"""A process the runner forks before the learner's file is imported, to run one grader-owned Python script as a new
interpreter would (judge/checks/artifact_processes.py's build process, where an exercise sets `build_process`).

It has imported torch and compiled nothing, as a new interpreter would have, without the ~3 CPU-s of those imports.
It waits for its one command with none of the runner's descriptors open (what it runs may run the learner's code),
takes the command's environment and Inductor's settings as a new interpreter would read them, and ends when the
runner closes its pipe without a command. The learner's code may reach it as it may reach a new interpreter the
runner starts: whatever it runs is checked on the trusted side, never taken at its word.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
from pathlib import Path

ERR_NAME = "prepared.err"  # its stderr, in the command's folder
_prepared: list[tuple[int, int]] = []  # (pid, write end of its command pipe)


def prepare() -> None:
    """Fork the process (in the runner, before anything of the exercise's or the learner's is imported); not where
    this process has started CUDA, which a fork could not use (sandbox/cuda_fork.py): a new interpreter then."""
    import torch

    if torch.cuda.is_initialized():
        return
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(write_end)
            _serve(read_end)
        finally:
            os._exit(1)
    os.close(read_end)
    _prepared.append((pid, write_end))


def take() -> tuple[int, int] | None:
    """The prepared process, once: None where there is none (a second build, a job without one)."""
    return _prepared.pop() if _prepared else None


def run(prepared: tuple[int, int], script: str, args: list[str], env: dict[str, str], cwd: Path,
        timeout: float) -> tuple[int, str] | None:
    """Run `script` with `args` there; (its exit code, its stderr), or None where the process was gone before it
    took the command (the learner's code may end it). TimeoutError (the process killed) past `timeout`."""
    pid, write_end = prepared
    command = json.dumps({"script": script, "args": args, "env": env, "cwd": str(cwd)}).encode()
    try:
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(len(command).to_bytes(8, "big") + command)
    except BrokenPipeError:
        os.waitpid(pid, 0)
        return None
    try:
        ended = bool(select.select([os.pidfd_open(pid)], [], [], timeout)[0])
    except (AttributeError, OSError):  # no pidfd here: the run's own time limit still ends one that hangs
        ended = True
    if not ended:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise TimeoutError(f"the prepared process did not finish in {timeout} s")
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    try:
        stderr = (cwd / ERR_NAME).read_text(errors="replace")
    except OSError:
        stderr = ""
    return status, stderr


def _read(fd: int, size: int) -> bytes:
    """`size` bytes, or fewer at the end of file."""
    chunks, left = [], size
    while left and (chunk := os.read(fd, min(left, 1 << 16))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _serve(read_end: int) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.closerange(3, read_end)
    os.closerange(read_end + 1, 1 << 20)  # the runner's channels among them
    # its length first: a child the learner's code forked holds a copy of the write end, so no end of file comes
    size = int.from_bytes(_read(read_end, 8), "big")
    data = _read(read_end, size)
    if not size or len(data) < size:  # the runner ended without a command
        os._exit(0)
    os.close(read_end)
    command = json.loads(data)
    os.chdir(command["cwd"])
    err = os.open(os.path.join(command["cwd"], ERR_NAME), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(err, 2)
    os.close(err)
    from judge.shared.fresh_settings import settings_of_a_fresh_process

    os.environ.update(command["env"])
    os.environ.pop("TORCH_LOGS", None)  # as run_python leaves it out
    settings_of_a_fresh_process()
    sys.argv = ["-c", *command["args"]]
    try:
        exec(compile(command["script"], "<string>", "exec"), {"__name__": "__main__"})
    except SystemExit as exc:  # as a new interpreter ends on it
        os._exit(exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - as a new interpreter dies of it: the traceback on stderr, exit code 1
        import traceback

        traceback.print_exc()
        os._exit(1)
    os._exit(0)
