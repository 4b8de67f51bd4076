"""Background judges (cli/daemon*.py) for tests: start one in a folder of the test's own, wait for it, stop it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from cli import daemon
from cli.daemon_protocol import DaemonSettings, lock_held
from tests.polling import wait_until


def stop_all(settings: DaemonSettings) -> None:
    """Stop the daemon of this folder, also one still starting (it holds the lock before it binds its socket)."""
    folder = settings.folder()
    if folder.is_dir():
        folder.chmod(0o700)  # private again where a test opened it
    deadline = time.monotonic() + 30
    while folder.is_dir() and time.monotonic() < deadline:
        if daemon.stop(settings) is None and not lock_held(folder):
            return
        time.sleep(0.1)
    assert not lock_held(folder), f"a daemon of {folder} did not stop"


@contextlib.contextmanager
def running_daemon(folder: Path) -> Iterator[DaemonSettings]:
    """A daemon of this code in `folder`, answering; stopped on exit. It is this process's child, so the lanes
    charge its CPU (and its forks') to the tests that use it."""
    settings = DaemonSettings(dir=folder)
    daemon.start(settings)
    try:
        wait_until(lambda: daemon.status(settings), 120, "the daemon answers")
        yield settings
    finally:
        stop_all(settings)
