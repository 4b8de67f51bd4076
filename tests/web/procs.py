"""Processes of a deployment, started from the Procfiles in deploy/ exactly as docs/deploy.md runs them."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def procfile(name: str) -> dict[str, str]:
    """process name -> command line of deploy/NAME."""
    entries = {}
    for line in (DEPLOY / name).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, command = line.partition(":")
            entries[key.strip()] = command.strip()
    return entries


def argv(command: str, env: dict[str, str]) -> list[str]:
    """The command's words with $VARS from `env`; `practice` is this checkout's CLI under this Python."""
    words = [_expand(w, env) for w in shlex.split(command)]
    return [sys.executable, "-m", "cli.main", *words[1:]] if words[0] == "practice" else words


def _expand(word: str, env: dict[str, str]) -> str:
    for key in sorted(env, key=len, reverse=True):
        word = word.replace(f"${key}", env[key])
    assert "$" not in word, f"{word}: a variable the test did not set"
    return word


class Proc:
    """One process of the deployment, its output in a log file."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], logs: Path):
        self.name, self.args = name, args
        self.log_path = logs / f"{name}.log"
        self._log = open(self.log_path, "wb")
        self.popen = subprocess.Popen(args, cwd=ROOT, env={**os.environ, **env}, stdout=self._log,
                                      stderr=subprocess.STDOUT, start_new_session=True)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill9(self) -> None:
        os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(10)

    def stop(self, grace: float = 15.0) -> None:
        """SIGTERM, and SIGKILL after `grace` seconds, to the process's whole session."""
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(10)
        self._log.close()


def wait_for(predicate, timeout: float, what: str, procs: list[Proc] = ()):
    """Poll until `predicate()` is truthy; on time-out the processes' output explains why."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        for proc in procs:
            if proc.popen.poll() is not None:
                raise AssertionError(f"{proc.name} exited ({proc.popen.returncode}) while waiting for {what}:\n"
                                     f"{proc.output()[-3000:]}")
        time.sleep(0.1)
    logs = "\n".join(f"--- {p.name}\n{p.output()[-2000:]}" for p in procs)
    raise AssertionError(f"{what}: not within {timeout} s\n{logs}")


def healthz(base: str) -> dict | None:
    try:
        response = httpx.get(f"{base}/healthz", timeout=2)
    except httpx.TransportError:
        return None
    return response.json() if response.status_code == 200 else None
