"""Warm sandboxes shared by the whole session, and probes of the host's state around each attack."""

from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path

import pytest

from judge.parent.grading import grade
from judge.reports.report import Verdict
from judge.shared.paths import PROJECT_ROOT
from sandbox.backends import unavailable_reason
from sandbox.limits import Limits
from sandbox.settings import SandboxSettings
from tests.sandbox.leftovers import sandbox_processes, sandbox_uids

BACKENDS = ("bwrap", "docker")
# Short limits keep the attacks quick; the honest solution passes well within them.
ATTACK_LIMITS = Limits(time_seconds=8, memory_mb=512, file_size_mb=16, pids=64, output_kb=64)
HONEST = "import torch\n\n\ndef f(x):\n    return x + 1\n"
SECRET = secrets.token_hex(16)
WATCHED = ("judge", "sandbox", "exercises", "tests/fake_course")

# Parallel test processes (pytest-xdist) each get their own sandbox uids, so that the "no process of
# a sandbox uid is left" checks of one process never see another's submissions: worker n takes the n-th block of
# 1024 uids from 62000 on (4 pools x 64 slots, and the +256/+512/+768 of other tests, 256 each) that holds no prestarted
# process's uid (their own "no process left" check) and not nobody's.
_xdist = os.environ.get("PYTEST_XDIST_WORKER", "")
if _xdist.startswith("gw") and _xdist[2:].isdigit():
    _reserved = set(SandboxSettings().prestarted_uid_range()) | {65534}
    _blocks = (b for b in range(62000, 2**31, 1024) if _reserved.isdisjoint(range(b, b + 1024)))
    os.environ["PRACTICE_UID_BASE"] = str(next(b for n, b in enumerate(_blocks) if n == int(_xdist[2:])))


@pytest.fixture(scope="session")
def _sandboxes():
    """One warm sandbox per backend, made on first use; the server's environment holds a secret."""
    os.environ["PRACTICE_TEST_SERVER_SECRET"] = SECRET
    made: dict = {}
    yield made
    for sb in made.values():
        sb.close()


@pytest.fixture(scope="session")
def server_secret() -> str:
    """A value in the server's environment that no submission may see."""
    return SECRET


@pytest.fixture(params=BACKENDS)
def sandbox(request, _sandboxes):
    name = request.param
    if name not in _sandboxes:
        reason = unavailable_reason(name)
        if reason and os.environ.get("PRACTICE_REQUIRE_SANDBOXES") == "1":
            pytest.fail(f"{name} backend unavailable although PRACTICE_REQUIRE_SANDBOXES=1: {reason}")
        if reason:
            pytest.skip(f"{name} backend unavailable: {reason} (CI sets it up with sandbox/setup_ci.sh)")
        from judge.parent.grading import make_sandbox

        sb = make_sandbox(name, pool_size=1)  # attacks run one at a time: a second warm worker would only cost
        sb.warm_up(pools=("runner", "verifier"))
        _sandboxes[name] = sb
    return _sandboxes[name]


@pytest.fixture
def attack_exercise(add_one):
    return add_one.model_copy(update={"limits": ATTACK_LIMITS})


@pytest.fixture
def run_attack(sandbox, attack_exercise):
    def run(source: str, time_seconds: float | None = None):
        exercise = attack_exercise
        if time_seconds is not None:  # an attack that only ends at its time limit: no need to wait for 8 s
            limits = exercise.limits.model_copy(update={"time_seconds": time_seconds})
            exercise = exercise.model_copy(update={"limits": limits})
        return grade(exercise, source, sandbox=sandbox)

    return run


def sandbox_listeners() -> list[str]:
    """Listening sockets on the host owned by a sandbox uid."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 7 and int(cols[7]) in sandbox_uids():
                found.append(f"{table}: {line.strip()}")
    return found


def planted_files() -> list[str]:
    """Files the attacks try to create in the project's code and exercises."""
    found = []
    for top in WATCHED:
        found += [str(p) for p in (PROJECT_ROOT / top).rglob("*") if p.name.startswith(("planted", "daemon"))]
    return found


class HostState:
    """What must not change on the host: files, processes and listeners of the sandbox uids."""

    def __init__(self, sentinel_dir: Path, sandbox, others=()):
        self.dir = sentinel_dir
        self.sentinel = sentinel_dir / "sentinel.txt"
        self.sentinel.write_text("untouched")
        self.sandbox = sandbox
        self.others = [sb for sb in others if sb is not sandbox]
        self.listing = sorted(p.name for p in sentinel_dir.iterdir())

    def worker_pids(self) -> set[int]:
        """The warm workers' own processes: this backend's, and those of the other backends this test process
        keeps warm (a Docker container's worker runs on the host as a sandbox uid too)."""
        pids = set()
        for sandbox in (self.sandbox, *self.others):
            for name in ("runner", "verifier"):
                sandbox.pool(name).settle(120)  # a worker being replaced has its pid once it is ready
                pids |= {getattr(w, "pid", 0) for w in sandbox.pool(name).workers()}
        return pids

    def assert_unchanged(self) -> None:
        assert self.sentinel.read_text() == "untouched"
        assert sorted(p.name for p in self.dir.iterdir()) == self.listing
        assert sandbox_processes(self.worker_pids()) == []
        assert sandbox_listeners() == []
        assert planted_files() == []


@pytest.fixture
def host(tmp_path, sandbox, _sandboxes):
    d = tmp_path / "host"
    d.mkdir()
    return HostState(d, sandbox, list(_sandboxes.values()))


@pytest.fixture
def loopback_listener():
    """A TCP listener on the host's loopback; `accepted()` says whether anything connected."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)

    class Listener:
        port = srv.getsockname()[1]

        @staticmethod
        def accepted() -> bool:
            try:
                conn, _ = srv.accept()
            except BlockingIOError:
                return False
            conn.close()
            return True

    yield Listener
    srv.close()


@pytest.fixture
def assert_honest_accepted(sandbox, add_one):
    """Grade the honest solution on the same (possibly attacked) pool: it must be ACCEPTED."""

    def check(extra: str = "") -> object:
        report = grade(add_one.model_copy(update={"limits": ATTACK_LIMITS}), extra + HONEST, sandbox=sandbox)
        assert report.verdict is Verdict.ACCEPTED, (report.summary, report.stderr[-2000:])
        return report

    return check
