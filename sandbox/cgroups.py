"""Control groups for submissions: memory, pids and CPU limits, OOM and CPU accounting, kill-all.

Works with cgroup v1 (one hierarchy per controller, as on the development machines) and v2 (one
unified hierarchy, as on current servers). The trusted side creates one cgroup per run under a
base that belongs to this server, reads its counters and kills whatever is left in it; the
sandboxed worker only moves the submission into it (`join_files`).
"""

from __future__ import annotations

import errno
import os
import signal
import time
from pathlib import Path

from sandbox.base import SandboxError

ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")


def version() -> int:
    """1 or 2, or 0 when no usable cgroup filesystem is mounted."""
    if (ROOT / "cgroup.controllers").exists():
        return 2
    if (ROOT / "memory" / "memory.limit_in_bytes").exists() and (ROOT / "pids").is_dir():
        return 1
    return 0


def _own_paths(pid: int | str = "self") -> dict[str, str]:
    """A process's cgroup per v1 controller (key "" for the v2 hierarchy)."""
    paths = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def _write(path: Path, value: str) -> None:
    path.write_text(value)


class Cgroup:
    """One cgroup: a directory per controller on v1, a single directory on v2."""

    def __init__(self, dirs: dict[str, Path], v: int):
        self.dirs = dirs
        self.version = v

    @classmethod
    def server_base(cls, name: str, override: str | None = None) -> Cgroup:
        """Create (or reuse) this server's base cgroup `name` under the server's own cgroup.

        `override` (PRACTICE_CGROUP_ROOT) names a delegated cgroup, relative to the mount, to use instead.
        """
        v = version()
        if v == 0:
            raise SandboxError("no cgroup filesystem at /sys/fs/cgroup: mount cgroup v1 or v2 to use this sandbox")
        own = _own_paths()
        if v == 1:
            dirs = {}
            for c in V1_CONTROLLERS:
                parent = override or own.get(c) or own.get("cpu,cpuacct") or "/"
                dirs[c] = ROOT / c / parent.lstrip("/") / name
        else:
            dirs = {"": ROOT / (override or own.get("", "/")).lstrip("/") / name}
        base = cls(dirs, v)
        if v == 2 and not override:
            base._leave_parent_if_needed()
        base._mkdirs()
        if v == 2:
            base._enable_v2_controllers()
        return base

    def _leave_parent_if_needed(self) -> None:
        """v2 allows controllers in a cgroup's children only when it has no processes of its own: move
        this server into a leaf `server-<pid>` beside the base (what a delegated systemd unit expects)."""
        parent = self.dirs[""].parent
        if {"memory", "pids", "cpu"} <= set((parent / "cgroup.subtree_control").read_text().split()):
            return
        leaf = parent / f"server-{os.getpid()}"
        try:
            leaf.mkdir(exist_ok=True)
            _write(leaf / "cgroup.procs", str(os.getpid()))
        except OSError:
            pass  # _enable_v2_controllers says what to do

    @classmethod
    def of_process(cls, pid: int) -> Cgroup:
        """The cgroup a process is in (e.g. a container's), without creating anything."""
        v = version()
        own = _own_paths(pid)
        if v == 1:
            return cls({c: ROOT / c / own.get(c, "/").lstrip("/") for c in V1_CONTROLLERS}, v)
        return cls({"": ROOT / own.get("", "/").lstrip("/")}, v)

    def child(self, name: str) -> Cgroup:
        """Create a child cgroup `name` (fresh counters); an old one of that name is removed first."""
        sub = Cgroup({c: d / name for c, d in self.dirs.items()}, self.version)
        if any(d.exists() for d in sub.dirs.values()):
            sub.kill_all()
            sub.remove()
        sub._mkdirs()
        if self.version == 2:
            sub._enable_v2_controllers()
        return sub

    def _mkdirs(self) -> None:
        for d in self.dirs.values():
            try:
                d.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise SandboxError(f"cannot create cgroup {d}: {exc}; run the server as root "
                                   "or set PRACTICE_CGROUP_ROOT to a delegated cgroup") from None

    def _enable_v2_controllers(self) -> None:
        d = self.dirs[""]
        control = d.parent / "cgroup.subtree_control"
        wanted = {"memory", "pids", "cpu"}
        if wanted <= set(control.read_text().split()):
            return
        try:
            _write(control, " ".join(f"+{c}" for c in sorted(wanted)))
        except OSError as exc:
            raise SandboxError(
                f"cannot enable memory, pids and cpu controllers in {control}: {exc}. On cgroup v2 the "
                "parent must have no processes of its own: start the server in a leaf cgroup and point "
                "PRACTICE_CGROUP_ROOT at a delegated one (systemd: Delegate=yes)") from None

    def set_limits(self, memory_bytes: int, pids: int, cpus: float) -> None:
        """Memory (swap included), process count and CPU bandwidth for everything in the cgroup."""
        self.set_memory(memory_bytes)
        self.set_pids(pids)
        quota = max(1000, int(cpus * 100_000))
        if self.version == 1:
            _write(self.dirs["cpu"] / "cpu.cfs_period_us", "100000")
            _write(self.dirs["cpu"] / "cpu.cfs_quota_us", str(quota))
        else:
            _write(self.dirs[""] / "cpu.max", f"{quota} 100000")

    def set_memory(self, memory_bytes: int) -> None:
        """The memory limit, swap included (so no swap)."""
        if self.version == 2:
            _write(self.dirs[""] / "memory.max", str(memory_bytes))
            if (self.dirs[""] / "memory.swap.max").exists():
                _write(self.dirs[""] / "memory.swap.max", "0")
            return
        mem = self.dirs["memory"]
        files = [mem / "memory.limit_in_bytes"]
        if (mem / "memory.memsw.limit_in_bytes").exists():
            files.append(mem / "memory.memsw.limit_in_bytes")
        try:
            for f in files:  # lowering: memory first, as memsw may never be below it
                _write(f, str(memory_bytes))
        except OSError:
            for f in reversed(files):  # raising: memsw first
                _write(f, str(memory_bytes))

    def pids_current(self) -> int:
        """Tasks (processes and threads) in the cgroup now."""
        try:
            return int((self.dirs["pids" if self.version == 1 else ""] / "pids.current").read_text())
        except (OSError, ValueError):
            return len(self.pids())

    def set_pids(self, pids: int) -> None:
        _write(self.dirs["pids" if self.version == 1 else ""] / "pids.max", str(pids))

    def procs_files(self) -> list[Path]:
        """The `cgroup.procs` files a process writes "0" to in order to join (one per hierarchy)."""
        seen, files = set(), []
        for d in self.dirs.values():
            real = d.resolve()
            if real not in seen:
                seen.add(real)
                files.append(d / "cgroup.procs")
        return files

    def pids(self) -> set[int]:
        found = set()
        for f in self.procs_files():
            try:
                found |= {int(x) for x in f.read_text().split()}
            except OSError:
                pass
        return found

    def thread_ids(self) -> set[int]:
        """The threads in the cgroup now (of every process)."""
        path = self.dirs["cpu"] / "tasks" if self.version == 1 else self.dirs[""] / "cgroup.threads"
        try:
            return {int(x) for x in path.read_text().split()}
        except (OSError, ValueError):
            return set()

    def cpu_seconds(self) -> float:
        """CPU time used by everything that ever ran in the cgroup."""
        try:
            if self.version == 1:
                return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
            for line in (self.dirs[""] / "cpu.stat").read_text().splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
        except (OSError, ValueError):
            pass
        return 0.0

    def oom_kills(self) -> int:
        """How many processes the kernel's OOM killer ended in the cgroup."""
        if self.version == 1:
            path, key = self.dirs["memory"] / "memory.oom_control", "oom_kill"
        else:
            path, key = self.dirs[""] / "memory.events", "oom_kill"
        try:
            for line in path.read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def memory_bytes(self) -> int:
        """Memory charged to the cgroup now."""
        name = "memory.usage_in_bytes" if self.version == 1 else "memory.current"
        try:
            return int((self.dirs["memory" if self.version == 1 else ""] / name).read_text())
        except (OSError, ValueError):
            return 0

    def kill_all(self, keep: frozenset[int] = frozenset(), timeout: float = 5.0) -> bool:
        """SIGKILL every process in the cgroup (but `keep`) until none is left; False if some survive."""
        if self.version == 2 and not keep and (self.dirs[""] / "cgroup.kill").exists():
            try:
                _write(self.dirs[""] / "cgroup.kill", "1")
            except OSError:
                pass
        deadline = time.monotonic() + timeout
        while True:
            left = self.pids() - keep
            if not left:
                return True
            if time.monotonic() > deadline:
                return False
            # Stopped first, all of them, then killed: a process that ran between two kills could react to the
            # death of another (a shell's `wait` returning) and end its own way.
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                for pid in left:
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
            time.sleep(0.005)

    def remove(self) -> None:
        """Remove the (empty) cgroup, children first; a busy one is retried briefly, then left."""
        for d in self.dirs.values():
            if not d.exists():
                continue
            try:
                subs = sorted((p for p in d.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts))
            except FileNotFoundError:  # removed meanwhile (a run's cgroup going as its worker closes)
                subs = []
            for sub in subs:
                _rmdir(sub)
            _rmdir(d)


def _rmdir(d: Path) -> None:
    for _ in range(100):
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return
            time.sleep(0.01)
