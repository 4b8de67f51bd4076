"""Confining one submission's process, step by step, just before learner code runs.

Called in the forked child of a warm worker (`sandbox.worker`). Privileged steps (namespaces,
mounts, cgroup, uid) only run where the worker is root, as in the bubblewrap backend; the
Docker backend's worker is already unprivileged inside its container and skips them.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import shutil
import socket

from sandbox import seccomp
from sandbox.compile_cache import OVERLAY_DIR, RUN_CACHE_DIR, overlay_options

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
RESULT_FD = 3
SETUP_FD = 4
PATH = "/usr/local/bin:/usr/bin:/bin"

_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare_all() -> None:
    """New mount, pid, net, ipc and uts namespaces (the pid one applies to the next fork)."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")


def mount(source: str, target: str, fstype: str | None, flags: int = 0, data: str | None = None) -> None:
    _check(_libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                       data.encode() if data else None), f"mount {target}")


def private_mounts(uid: int, tmp_mb: int, hidden: list[str], cache_layer: str | None = None) -> str:
    """Fresh /tmp (holding the scratch dir), /dev/shm and /proc; the compile cache's overlay on `cache_layer`;
    `hidden` mounts detached. Returns scratch."""
    mount("none", "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_mb}m,mode=1777")
    if os.path.isdir("/dev/shm"):
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64m,mode=1777")
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    if cache_layer:
        overlay_cache(cache_layer, uid)
    for path in hidden:
        _libc.umount2(path.encode(), MNT_DETACH)
    scratch = "/tmp/scratch"
    os.mkdir(scratch, 0o700)
    os.chown(scratch, uid, uid)
    return scratch


def overlay_cache(layer: str, uid: int) -> None:
    """The run's Inductor cache: the trusted layer read-only below, this run's tmpfs above (`uid` owns its top).

    Upper and work folders sit in a root-only folder of the run's /tmp: the run writes only through the overlay,
    and everything it wrote goes with its tmpfs."""
    os.mkdir(OVERLAY_DIR, 0o700)
    upper, work = f"{OVERLAY_DIR}/upper", f"{OVERLAY_DIR}/work"
    os.mkdir(upper, 0o700)
    os.mkdir(work, 0o700)
    os.chown(upper, uid, uid)
    os.mkdir(RUN_CACHE_DIR, 0o700)
    mount("overlay", RUN_CACHE_DIR, "overlay", MS_NOSUID | MS_NODEV, overlay_options(layer, upper, work))


def link_cache(layer: str, target: str = RUN_CACHE_DIR) -> None:
    """Where no overlay can be mounted (Docker's unprivileged worker): the run's cache is a fresh folder of links
    to the trusted layer's files (a read-only mount); what the run writes replaces a link in its own folder, which
    the worker empties with /tmp afterwards. A folder left by an earlier run that cannot be removed fails the set-up
    (the worker is then replaced) rather than be used."""
    shutil.rmtree(target, ignore_errors=True)
    if os.path.lexists(target):
        raise OSError(f"{target} was left by an earlier run and cannot be removed")
    for dirpath, _dirnames, filenames in os.walk(layer):
        rel = os.path.relpath(dirpath, layer)
        here = target if rel == "." else os.path.join(target, rel)
        os.mkdir(here, 0o700)
        for name in filenames:
            os.symlink(os.path.join(dirpath, name), os.path.join(here, name))


def join_cgroup(procs_files: list[str]) -> None:
    for path in procs_files:
        with open(path, "w") as f:
            f.write("0")


def drop_privileges(uid: int) -> None:
    """Become `uid` (and group `uid`) with no supplementary groups and so no capabilities."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.geteuid() == 0 or os.getegid() == 0:
        raise OSError("privileges were not dropped")


def set_address_space(megabytes: int) -> None:
    """Cap the address space (where no cgroup counts memory)."""
    size = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size, size))


def set_rlimits(limits: dict, per_user_processes: bool = True) -> None:
    """CPU seconds, file size, open files, no core dumps; NPROC as a second line behind the pids cgroup
    (not for a run under the user's own uid, whose other processes it would count).

    The CPU rlimit is a second line too, a second past the limit: the trusted side ends the run at its limit by
    the CPU counter it reads (sandbox.clock), and where its reading comes late, the rlimit's SIGKILL (a pid
    namespace's init ignores SIGXCPU) leaves a count past the limit that the trusted side still reads as one."""
    cpu = max(1, int(limits["cpu_seconds"] + 0.999)) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    size = limits["file_size_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Counted per uid (root ignores it); the slot's uid is the submission's alone but for the
    # Docker worker itself, hence the margin.
    if per_user_processes:
        nproc = limits["pids"] + 16
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def own_fds(result_fd: int, out_fd: int, err_fd: int, in_fd: int, setup_fd: int) -> None:
    """stdin from the trusted side's inbox pipe, stdout/stderr to the capped pipes, the result pipe on fd 3,
    the worker's setup pipe on fd 4 (closed before the program runs), nothing else."""
    sources = [in_fd, out_fd, err_fd, result_fd, setup_fd]
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in sources]  # clear of targets 0..4
    for target, fd in enumerate(high):
        os.dup2(fd, target, inheritable=target <= 2)
    os.closerange(SETUP_FD + 1, 65536)


def clean_env(scratch: str, extra: dict[str, str]) -> None:
    """The run's whole environment: the paths of this run, then `extra` (the program's environment)."""
    os.environ.clear()
    os.environ.update({
        "PATH": PATH, "HOME": scratch, "TMPDIR": "/tmp", "USER": "learner", "LOGNAME": "learner",
        "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor", "TRITON_CACHE_DIR": "/tmp/triton",
    })
    os.environ.update(extra)


def lower_oom_priority() -> None:
    """Make the submission the OOM killer's first choice, before the worker."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass


def set_hostname() -> None:
    try:
        socket.sethostname("sandbox")
    except OSError:
        pass


def lock_down() -> bool:
    """no_new_privs and the seccomp filter: the last step before learner code.

    The process is made dumpable again first (the worker is not; a uid change clears it too), so
    that its own /proc files belong to it; only its own descendants share its uid.
    """
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    return seccomp.install()


def subreaper() -> None:
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def die_with_parent() -> None:
    _libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
