"""The sandbox's parts on their own: the control channel, the pool, the seccomp filter, cgroups."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from sandbox import cgroups, channel, seccomp
from sandbox.base import SandboxError
from sandbox.pool import Pool

pytestmark = pytest.mark.xdist_group("sandbox")


def test_channel_carries_messages_and_descriptors():
    a, b = socket.socketpair()
    r, w = os.pipe()
    channel.send(a, {"op": "run", "job": "x" * 100_000}, fds=[w])
    os.close(w)
    msg, fds = channel.recv(b)
    assert msg == {"op": "run", "job": "x" * 100_000}
    os.write(fds[0], b"through the passed pipe")
    os.close(fds[0])
    assert os.read(r, 100) == b"through the passed pipe"
    a.close()
    with pytest.raises(channel.ChannelClosed):
        channel.recv(b)


def test_channel_rejects_oversized_and_non_object_messages():
    a, b = socket.socketpair()
    channel.send(a, {"big": "y" * 2000})
    with pytest.raises(channel.ChannelClosed, match="over the limit"):
        channel.recv(b, limit=1000)
    a2, b2 = socket.socketpair()
    a2.sendall(len(b"[1]").to_bytes(4, "big") + b"[1]")
    with pytest.raises(channel.ChannelClosed, match="not an object"):
        channel.recv(b2)


class FakeWorker:
    def __init__(self, slot: int, fail: bool = False):
        self.slot, self.runs, self.broken, self.fail, self.closed = slot, 0, False, fail, False

    def start(self) -> None:
        if self.fail:
            raise SandboxError("cannot start")

    def close(self) -> None:
        self.closed = True


def test_pool_reuses_workers_and_replaces_worn_out_and_broken_ones():
    made = []

    def make(slot):
        made.append(FakeWorker(slot))
        return made[-1]

    pool = Pool(make, size=2, max_runs=2)
    first = pool.acquire(5)
    first.runs = 1
    pool.release(first)
    pool.settle(5)
    assert len(made) == 2
    again = pool.acquire(5)
    other = pool.acquire(5)
    assert {again, other} == set(made)
    again.runs, other.broken = 2, True
    pool.release(again)
    pool.release(other)
    pool.settle(5)
    assert len(made) == 4 and len(pool.workers()) == 2
    deadline = time.monotonic() + 5
    while not (made[0].closed and made[1].closed) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert made[0].closed and made[1].closed
    pool.shutdown()
    assert all(w.closed for w in made)


def test_pool_reports_why_workers_cannot_start():
    pool = Pool(lambda slot: FakeWorker(slot, fail=True), size=2, max_runs=5)
    with pytest.raises(SandboxError, match="cannot start"):
        pool.acquire(10)
    pool.shutdown()


def test_pool_waits_for_a_busy_worker():
    pool = Pool(FakeWorker, size=1, max_runs=10)
    worker = pool.acquire(5)
    threading.Timer(0.2, pool.release, args=(worker,)).start()
    assert pool.acquire(5) is worker
    with pytest.raises(SandboxError, match="became free"):
        pool.acquire(0.2)
    pool.shutdown()


SECCOMP_PROBE = textwrap.dedent("""
    import ctypes, errno, os, threading
    from sandbox import seccomp
    assert seccomp.install()
    libc = ctypes.CDLL(None, use_errno=True)
    results = {}
    for name, call in {"unshare": lambda: libc.unshare(0x10000000),
                       "ptrace": lambda: libc.ptrace(0, 0, 0, 0),
                       "mount": lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None),
                       "clone_newuser": lambda: libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0),
                       "x32": lambda: libc.syscall(0x40000000 + 39)}.items():
        results[name] = (call(), ctypes.get_errno())
    t = threading.Thread(target=lambda: results.__setitem__("thread", "ran"))
    t.start(); t.join()
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    results["fork"] = os.WEXITSTATUS(os.waitpid(pid, 0)[1])
    print(results)
""")


@pytest.mark.skipif(not seccomp.supported(), reason="the seccomp table covers x86_64 only")
def test_seccomp_denies_escapes_and_allows_threads_and_fork():
    out = subprocess.run([sys.executable, "-c", SECCOMP_PROBE], capture_output=True, text=True, timeout=60,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.returncode == 0, out.stderr
    results = eval(out.stdout)
    for name in ("unshare", "ptrace", "mount", "clone_newuser", "x32"):
        assert results[name] == (-1, 1), (name, results[name])  # EPERM
    assert results["thread"] == "ran" and results["fork"] == 7


@pytest.mark.sandbox
@pytest.mark.skipif(os.geteuid() != 0 or cgroups.version() == 0, reason="needs root and a cgroup filesystem")
def test_cgroup_limits_counts_and_kills_everything_in_it():
    from sandbox.settings import SandboxSettings

    run = SandboxSettings().base_cgroup().child(f"test-{os.getpid()}")
    try:
        run.set_limits(64 * 1024 * 1024, 16, 0.5)
        procs = [str(f) for f in run.procs_files()]

        def join():
            for path in procs:
                with open(path, "w") as fh:
                    fh.write("0")

        hog = subprocess.Popen([sys.executable, "-c", "x = bytearray(256 * 2**20)"], preexec_fn=join)
        assert hog.wait(60) == -9
        assert run.oom_kills() >= 1
        sleepers = subprocess.Popen(["sh", "-c", "sleep 600 & sleep 600 & wait"], preexec_fn=join)
        deadline = time.monotonic() + 10
        while len(run.pids()) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(run.pids()) == 3
        assert run.kill_all()
        assert sleepers.wait(10) == -9
        assert run.pids() == set()
        assert run.cpu_seconds() > 0
    finally:
        run.kill_all()
        run.remove()
    assert not any(d.exists() for d in run.dirs.values())


@pytest.mark.sandbox
def test_a_sandbox_that_cannot_be_set_up_is_an_infrastructure_error(add_one):
    """A failure before learner code runs raises SandboxError, never a learner verdict (grade() makes that an
    INTERNAL_ERROR after one retry: tests/core/test_grading.py)."""
    from sandbox import bwrap_backend

    reason = bwrap_backend.available()
    if reason:
        pytest.skip(f"bwrap backend unavailable: {reason}")

    class MissingCgroup(bwrap_backend.BwrapWorker):
        def request_fields(self, watch, limits):
            return {**super().request_fields(watch, limits), "cgroup_procs": ["/nonexistent/cgroup.procs"]}

    class BrokenSetup(bwrap_backend.BwrapSandbox):
        def new_worker(self, slot):
            return MissingCgroup(slot, self)

    from judge.child import PROGRAM
    from judge.parent.job import make_jobs

    sb = BrokenSetup(PROGRAM, pool_size=1)
    try:
        runner_job, _ = make_jobs(add_one, "def f(x):\n    return x + 1\n")
        for _ in range(2):  # and again on the worker that replaced the first
            with pytest.raises(SandboxError, match="could not be set up"):
                sb.run(runner_job.model_dump_json(), add_one.limits, pool="runner")
    finally:
        sb.close()


@pytest.mark.sandbox
@pytest.mark.xdist_group("sandbox")
def test_a_replaced_worker_never_takes_its_successors_cgroup_with_it(add_one, monkeypatch):
    """Root cause of pools that stopped starting workers after a long run: a worker retired from a slot
    was closed in the background while its successor started in the same slot; both used the cgroup
    `slot-<uid>`, so the old worker's close killed and removed the new worker's cgroup. Every run here
    retires its worker (max_runs=1), so each grading starts a successor while the old one closes."""
    from sandbox import bwrap_backend

    reason = bwrap_backend.available()
    if reason:
        pytest.skip(f"bwrap backend unavailable: {reason}")
    import threading

    from judge.child import PROGRAM
    from judge.parent.grading import grade
    from judge.reports.report import Verdict
    from sandbox.settings import SandboxSettings

    monkeypatch.setenv("PRACTICE_UID_BASE", str(SandboxSettings().uid_base + 768))
    successor_made = {slot: threading.Event() for slot in range(4 * 64)}  # every slot of every pool

    class SlowToClose(bwrap_backend.BwrapWorker):
        """Closes only once its successor in the slot exists (what a busy machine does by chance)."""

        def __init__(self, slot, sandbox):
            super().__init__(slot, sandbox)
            successor_made[slot].set()

        def terminate(self):
            successor_made[self.slot].clear()
            successor_made[self.slot].wait(60)  # the successor's __init__ sets it (a fresh set after the clear)
            super().terminate()

    class Sandbox(bwrap_backend.BwrapSandbox):
        def new_worker(self, slot):
            return SlowToClose(slot, self)

    sb = Sandbox(PROGRAM, pool_size=1, max_runs=1)
    try:
        # the second grading is the first to run on successors: it failed before the fix
        reports = [grade(add_one, "def f(x):\n    return x + 1\n", sandbox=sb) for _ in range(2)]
        assert [r.verdict for r in reports] == [Verdict.ACCEPTED] * 2, [(r.summary, r.diagnostics) for r in reports]
        names = {w.cg.dirs[next(iter(w.cg.dirs))].name for p in ("runner", "verifier") for w in sb.pool(p).workers()}
        assert all(name.startswith("slot-") for name in names)
    finally:
        sb.close()


@pytest.mark.parametrize("cuda", [False, True])
def test_the_plain_backend_caps_address_space_only_where_cuda_cannot_start(cuda, monkeypatch):
    """CUDA's start-up reserves far more address space than any memory budget (17.6 GiB on an H200), so a child
    that may start CUDA gets no RLIMIT_AS; every other child keeps the cap."""
    from sandbox import subprocess_backend
    from sandbox.limits import ADDRESS_SPACE_HEADROOM_MB, Limits

    monkeypatch.setattr(subprocess_backend.os.path, "exists", lambda path: cuda)  # the NVIDIA driver, or none
    env = subprocess_backend.child_env("/tmp", subprocess_backend.Program(module="x"))
    assert subprocess_backend.cuda_possible(env) is cuda
    assert not subprocess_backend.cuda_possible({**env, "CUDA_VISIBLE_DEVICES": ""})  # every GPU hidden
    limits = Limits(memory_mb=512)
    probe = "import resource; print(resource.getrlimit(resource.RLIMIT_AS)[0])"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         preexec_fn=subprocess_backend.rlimits(limits, cap_address_space=not cuda)).stdout
    cap = int(out)
    assert cap == (inherited_address_space_limit() if cuda else (512 + ADDRESS_SPACE_HEADROOM_MB) * 1024 * 1024)


def inherited_address_space_limit() -> int:
    import resource

    return resource.getrlimit(resource.RLIMIT_AS)[0]  # this process's own limit: what a child inherits


def test_stale_docker_workers_are_removed_even_while_other_sandboxes_remove_theirs():
    # Another sandbox's worker container can vanish between a listing and a look at it (the suite's Docker tests
    # run next to each other): the clean-up at start reads summaries only, and a container gone meanwhile is no error.
    from sandbox.docker_backend import LABEL, _remove_stale

    class Api:
        def __init__(self):
            self.removed = []

        def containers(self, all, filters):
            assert all and filters == {"label": LABEL}
            return [{"Id": "gone-owner", "Labels": {LABEL: "999999999"}},
                    {"Id": "live-owner", "Labels": {LABEL: str(os.getpid())}},
                    {"Id": "vanished", "Labels": {LABEL: "not-a-pid"}}]

        def remove_container(self, ident, force):
            if ident == "vanished":
                raise RuntimeError("404 No such container")
            self.removed.append(ident)

    class Client:
        api = Api()

        class containers:  # the high-level listing inspects each container: a vanished one raised NotFound here
            @staticmethod
            def list(**kwargs):
                raise AssertionError("listed through the high-level API")

    _remove_stale(Client)
    assert Client.api.removed == ["gone-owner"]
