"""Settings of the hardened sandboxes, declared once; override each with `PRACTICE_<NAME>`.

The backend itself is chosen by the front-ends (`--sandbox`, `PRACTICE_SANDBOX`).
"""

from __future__ import annotations

import atexit
import functools
import os
import subprocess
import tempfile
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from sandbox import cgroups

PRESTARTED_UIDS = 128  # uids from prestarted_uid_base on: more than the prepared processes a server keeps at once


class SandboxSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PRACTICE_", extra="ignore")

    pool_size: int = Field(2, ge=1, le=64, description="Warm workers kept ready (bwrap and docker).")
    worker_runs: int = Field(500, ge=1, description="Submissions one bwrap worker serves before it is replaced.")
    docker_runs: int = Field(20, ge=1, description="Submissions one Docker container serves before it is replaced.")
    uid_base: int = Field(61000, ge=1000, description="Slot n runs submissions as uid/gid uid_base + n.")
    cpus: float = Field(1.0, gt=0, description="CPU cores one submission may use at once (cgroup quota).")
    cgroup_root: str | None = Field(
        None, description="A delegated cgroup (path under /sys/fs/cgroup[/<controller>]) to create run cgroups "
                          "in; default: the server's own cgroup.")
    docker_image: str = Field("torch-practice-sandbox:latest", description="Image of the Docker backend's workers.")
    docker_self_contained: bool = Field(
        False, description="The image carries its own Python and judge (sandbox/docker/Dockerfile); "
                           "default: bind-mount the host's /usr, Python environment and code read-only.")
    docker_worker_mb: int = Field(
        768, ge=256, description="Memory a Docker worker needs besides a submission's limit (torch imported).")
    docker_runtime_dir: Path = Field(
        Path(tempfile.gettempdir()) / "torch-practice-docker",
        description="Host folder for the Docker workers' control sockets.")
    prestarted_uids: bool = Field(
        True, description="As root, each prestarted process (the GPU graders) runs as an unprivileged uid of its own, "
                          "from prestarted_uid_base on (the project and the Python environment must be readable).")
    prestarted_uid_base: int = Field(63000, ge=1000, description="The first uid of the prestarted processes.")
    prestarted_prepare_nice: int = Field(
        0, ge=0, le=19, description="As root, a prestarted process prepares this much nicer than the grader and "
                                    "gets the grader's priority back when its run starts; 0: off (on the lent H200 "
                                    "a burst waited no less with 10: its gradings wait for those successors).")
    prestarted_zygote: bool = Field(
        False, description="Fork the prestarted processes from a zygote that has imported torch and the grading core "
                           "but never started CUDA (sandbox/zygote.py), instead of starting each afresh: each then "
                           "pays a fork and its own CUDA context instead of an interpreter start and torch's import. "
                           "Off by default: on the lent H200 a successor prepared in 1.5 s instead of 12.7 s, but a "
                           "burst of 12 waited a median of 8.1-8.4 s against 4.4-5.1 s afresh, its successors' CUDA "
                           "contexts opening during the burst's CUDA-graph checks (docs/deploy.md).")
    prestarted_share_preparation: bool = Field(
        True, description="Start each prestarted process of a pool without a compile cache layer with a copy of "
                          "the caches one trusted process filled preparing (Triton's driver and launcher modules, "
                          "the warm-up kernel), instead of compiling them in each.")
    compile_cache: bool = Field(
        True, description="Build trusted Inductor cache layers (grading each exercise's reference) and give the "
                          "hardened backends' runs a private view of them (bwrap: an overlay; docker: links).")
    compile_cache_dir: Path = Field(
        default_factory=lambda: (Path("/var/cache/torch-practice") if os.geteuid() == 0
                                 else Path.home() / ".cache" / "torch-practice") / "compile-cache",
        description="Where the trusted layers live (a folder only this user can enter).")

    def base_cgroup(self) -> cgroups.Cgroup:
        return _base_cgroup(self.cgroup_root)

    def prestarted_uid_range(self) -> range:
        """The uids the prestarted processes may run as (one each, PRESTARTED_UIDS of them)."""
        return range(self.prestarted_uid_base, self.prestarted_uid_base + PRESTARTED_UIDS)

    def etc_dir(self) -> Path:
        return _etc_dir(self.uid_base)

    def bwrap_version(self) -> str:
        return _bwrap_version()


@functools.cache
def _base_cgroup(root: str | None) -> cgroups.Cgroup:
    """This server's cgroup for runs, `practice-<pid>`; those of dead servers are removed first."""
    probe = cgroups.Cgroup.server_base(f"practice-{os.getpid()}", root)
    for d in probe.dirs.values():
        for stale in [*d.parent.glob("practice-*"), *d.parent.glob("server-*")]:
            pid = stale.name.split("-", 1)[1]
            if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
                old = cgroups.Cgroup({"": stale}, probe.version)
                if stale.name.startswith("practice-"):  # submissions a crashed server left behind
                    old.kill_all(timeout=1)
                old.remove()
    atexit.register(probe.remove)  # empty by then: runs never outlive their run() call
    return probe


@functools.cache
def _etc_dir(uid_base: int) -> Path:
    """passwd and group files naming root, nobody and the slot users, for tools that look uids up."""
    d = Path(tempfile.mkdtemp(prefix="practice-etc-"))
    users = ["root:x:0:0:root:/root:/usr/sbin/nologin", "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin"]
    groups = ["root:x:0:", "nogroup:x:65534:"]
    for n in range(4 * 64):  # every slot of every pool (sandbox.warm: POOL_NAMES, SLOTS_PER_POOL)
        users.append(f"learner{n}:x:{uid_base + n}:{uid_base + n}:learner:/tmp/scratch:/usr/sbin/nologin")
        groups.append(f"learner{n}:x:{uid_base + n}:")
    (d / "passwd").write_text("\n".join(users) + "\n")
    (d / "group").write_text("\n".join(groups) + "\n")
    d.chmod(0o755)
    return d


@functools.cache
def _bwrap_version() -> str:
    try:
        out = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, timeout=10).stdout
        return out.split()[-1] if out.split() else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"
