"""Backend "docker": the same warm worker in a container, started through the Docker SDK.

Each container: no network, read-only root, tmpfs /tmp and /dev/shm, all capabilities dropped,
no-new-privileges, a non-root uid per slot, memory = memory + swap, pids and CPU limits. The
worker is the container's pid 1: it forks one child per submission and afterwards kills every
other process in the container. The trusted side sets the container cgroup's memory and pids
limits for each run, reads its OOM and CPU counters, and replaces the container after
`PRACTICE_DOCKER_RUNS` submissions.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
from pathlib import Path
from typing import Any

from sandbox import cgroups
from sandbox.base import SandboxError
from sandbox.clock import QueueWaits
from sandbox.compile_cache import LAYERS_DIR, CompileCache
from sandbox.limits import Limits, Program
from sandbox.mounts import CODE_DIR, CODE_ROOT, interpreter, packages, python_roots, worker_env
from sandbox.settings import SandboxSettings
from sandbox.warm import READY_TIMEOUT_S, RunWatch, WarmSandbox, Worker

MiB = 1024 * 1024
LABEL = "org.torch-practice.worker"
HOST_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf")


def _client():
    import docker

    try:
        client = docker.from_env(timeout=60)
        client.ping()
        return client
    except docker.errors.DockerException as exc:
        raise SandboxError(f"sandbox 'docker' is unavailable: cannot reach the Docker engine ({exc}); "
                           "start dockerd (see sandbox/setup_ci.sh)") from None


def available(image: str | None = None) -> str | None:
    """None if the engine answers and the worker image exists, else the reason."""
    try:
        client = _client()
    except SandboxError as exc:
        return str(exc)
    import docker

    try:
        client.images.get(image or SandboxSettings().docker_image)
    except docker.errors.ImageNotFound:
        return (f"image {image or SandboxSettings().docker_image} not found: "
                "build it with python -m sandbox.docker_image")
    return None


class ContainerWatch(RunWatch):
    """One run in a long-lived container: counters are deltas, the worker (pid 1) is never killed."""

    def __init__(self, cg: cgroups.Cgroup, worker_pid: int):
        self.cg, self.keep = cg, frozenset({worker_pid})
        self.cpu0, self.oom0 = cg.cpu_seconds(), cg.oom_kills()
        self.waits = QueueWaits()
        try:  # the worker's own threads wait for no run
            self.worker_threads = {int(t) for t in os.listdir(f"/proc/{worker_pid}/task")}
        except OSError:
            self.worker_threads = set()

    def kill(self) -> None:
        self.cg.kill_all(keep=self.keep)

    def cpu_seconds(self) -> float:
        return self.cg.cpu_seconds() - self.cpu0

    def waiting_seconds(self) -> float:
        return self.waits.sample(self.cg.thread_ids() - self.worker_threads)

    def oom_kills(self) -> int:
        return self.cg.oom_kills() - self.oom0


class DockerWorker(Worker):
    def __init__(self, slot: int, sandbox: DockerSandbox):
        super().__init__(slot)
        self.sb = sandbox
        self.uid = sandbox.settings.uid_base + slot
        self.container: Any = None  # the worker's docker Container once started
        self.cg: cgroups.Cgroup | None = None
        self.pid = 0
        self.sock_dir = sandbox.settings.docker_runtime_dir / f"slot-{slot}-{secrets.token_hex(4)}"

    def _volumes(self) -> dict:
        ro = {"mode": "ro"}
        volumes = {str(self.sock_dir): {"bind": "/run/ctl", **ro}}
        if not self.sb.settings.docker_self_contained:
            volumes["/usr"] = {"bind": "/usr", **ro}
            for root in python_roots():
                volumes[root] = {"bind": root, **ro}
            for pkg in packages(self.sb.program):
                volumes[str(self.sb.project_root / pkg)] = {"bind": f"{CODE_DIR}/{pkg}", **ro}
            for path in HOST_FILES + ("/etc/alternatives",):
                if os.path.exists(path):
                    volumes[path] = {"bind": path, **ro}
        kind = self.sb.compile_cache.kind_for(self.pool_name) if self.sb.compile_cache else None
        if kind is not None:  # the trusted layers this pool's runs may see (readable: the runner's hold no secret)
            volumes[str(self.sb.compile_cache.kind_dir(kind))] = {"bind": LAYERS_DIR, **ro}
        return volumes

    def launch(self) -> socket.socket:
        from sandbox.worker import bootstrap

        self.sock_dir.mkdir(parents=True, mode=0o755)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path = str(self.sock_dir / "ctl.sock")
        listener.bind(path)
        os.chmod(path, 0o666)
        listener.listen(1)
        limits = Limits()
        python = "python3" if self.sb.settings.docker_self_contained else interpreter()
        try:
            self.container = self.sb.client.containers.run(
                self.sb.settings.docker_image,
                [python, "-I", "-c", bootstrap(CODE_DIR), "--ctl-path", "/run/ctl/ctl.sock",
                 "--program", self.sb.program.module],
                detach=True, user=f"{self.uid}:{self.uid}", network_mode="none", read_only=True,
                tmpfs={"/tmp": f"rw,exec,nosuid,nodev,size={limits.memory_mb // 2}m,mode=1777",
                       "/dev/shm": "rw,nosuid,nodev,noexec,size=64m,mode=1777"},
                mem_limit=(self.sb.settings.docker_worker_mb + limits.memory_mb) * MiB,
                memswap_limit=(self.sb.settings.docker_worker_mb + limits.memory_mb) * MiB,
                pids_limit=limits.pids + 32, nano_cpus=int(self.sb.settings.cpus * 1e9),
                cap_drop=["ALL"], security_opt=["no-new-privileges"], ipc_mode="private", hostname="sandbox",
                volumes=self._volumes(), working_dir="/tmp", environment=worker_env(self.sb.program),
                labels={LABEL: str(os.getpid())}, init=False, stdin_open=False)
            listener.settimeout(READY_TIMEOUT_S)
            conn, _ = listener.accept()
        except Exception as exc:  # noqa: BLE001 - docker errors, accept timeout
            self.terminate()
            raise SandboxError(f"docker worker did not start: {exc}; {self.startup_log()}") from None
        finally:
            listener.close()
            try:
                os.unlink(path)
            except OSError:
                pass
        self.container.reload()
        self.pid = int(self.container.attrs["State"]["Pid"])
        self.cg = cgroups.Cgroup.of_process(self.pid)
        return conn

    def startup_log(self) -> str:
        try:
            return self.container.logs(tail=40).decode("utf-8", "replace") if self.container else ""
        except Exception:  # noqa: BLE001
            return ""

    def watch(self, limits: Limits) -> RunWatch:
        self.cg.set_memory(self.cg.memory_bytes() + limits.memory_mb * MiB)
        self.cg.set_pids(self.cg.pids_current() + limits.pids)
        return ContainerWatch(self.cg, self.pid)

    def request_fields(self, watch: RunWatch, limits: Limits) -> dict:
        fields = {"uid": self.uid, "env": {**self.sb.program.environment(), "PYTHONPATH": CODE_DIR}}
        cache = self.sb.compile_cache
        found = cache.layer_for(self.pool_name) if cache else None
        if found is not None:  # a complete layer: a fresh folder of links to it, pickle caches on
            fields["cache_layer"] = f"{LAYERS_DIR}/{found[0].name}"
            fields["env"].update(cache.run_env(found[1]))
        return fields

    def terminate(self) -> None:
        if self.container is not None:
            try:
                self.container.remove(force=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        shutil.rmtree(self.sock_dir, ignore_errors=True)


class DockerSandbox(WarmSandbox):
    """Warm worker containers; each is replaced after `PRACTICE_DOCKER_RUNS` submissions."""

    name = "docker"

    def __init__(self, program: Program, pool_size: int | None = None, max_runs: int | None = None,
                 settings: SandboxSettings | None = None, compile_cache: CompileCache | None = None):
        self.settings = settings or SandboxSettings()
        if compile_cache is not None and not self.settings.docker_self_contained:  # the image's torch: not the key's
            compile_cache.prepare()
            self.compile_cache = compile_cache
        self.client = _client()
        reason = available(self.settings.docker_image)
        if reason:
            raise SandboxError(f"sandbox 'docker' is unavailable: {reason}")
        if cgroups.version() == 0:
            raise SandboxError("sandbox 'docker' needs the host's cgroup filesystem at /sys/fs/cgroup")
        super().__init__(program, pool_size or self.settings.pool_size, max_runs or self.settings.docker_runs)
        self.project_root = Path(CODE_ROOT)
        self.settings.docker_runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o755)
        _remove_stale(self.client)

    def facts(self) -> dict[str, str | int | float]:
        return {"image": self.settings.docker_image, "pool": self.pool_size, "runs": self.max_runs,
                "uids": self.settings.uid_base, "cpus": f"{self.settings.cpus:g}"}

    def new_worker(self, slot: int) -> Worker:
        return DockerWorker(slot, self)


def _remove_stale(client) -> None:
    """Remove worker containers left by servers that are gone. Listed as summaries, not inspected one by one: a
    container another sandbox removes meanwhile (its worker replaced or closed) is then no error here."""
    for summary in client.api.containers(all=True, filters={"label": LABEL}):
        owner = (summary.get("Labels") or {}).get(LABEL, "")
        if not (owner.isdigit() and os.path.exists(f"/proc/{owner}")):
            try:
                client.api.remove_container(summary["Id"], force=True)
            except Exception:  # noqa: BLE001 - gone already, or going
                pass
