"""Build the Docker backend's worker image without any registry: `python -m sandbox.docker_image`.

The image (sandbox/docker/Dockerfile.local, FROM scratch) is a skeleton: passwd and group files
naming the slot users, and world-readable mount points for /usr, the Python environment and the
code, which `sandbox.docker_backend` bind-mounts read-only. It is tiny and builds in seconds.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from sandbox.base import SandboxError
from sandbox.mounts import python_roots
from sandbox.settings import SandboxSettings

HERE = Path(__file__).resolve().parent / "docker"
MOUNT_POINTS = ("usr", "tmp", "proc", "dev", "sys", "run/ctl", "opt/practice/judge", "opt/practice/sandbox",
                "etc/alternatives", "dev/shm")


def _rootfs(root: Path, uid_base: int) -> None:
    """The image's whole content: mount points (world-readable), merged-/usr links, passwd and group."""
    for point in list(MOUNT_POINTS) + [r.lstrip("/") for r in python_roots()]:
        parts = Path(point).parts
        for n in range(1, len(parts) + 1):
            d = root.joinpath(*parts[:n])
            d.mkdir(exist_ok=True)
            d.chmod(0o1777 if d.name == "tmp" else 0o755)
    (root / "etc").mkdir(exist_ok=True)
    for top in ("bin", "sbin", "lib", "lib64"):
        (root / top).symlink_to(f"usr/{top}")
    users = ["root:x:0:0:root:/root:/usr/sbin/nologin", "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin"]
    groups = ["root:x:0:", "nogroup:x:65534:"]
    for n in range(4 * 64):  # every slot of every pool (sandbox.warm: POOL_NAMES, SLOTS_PER_POOL)
        users.append(f"learner{n}:x:{uid_base + n}:{uid_base + n}:learner:/tmp:/usr/sbin/nologin")
        groups.append(f"learner{n}:x:{uid_base + n}:")
    (root / "etc/passwd").write_text("\n".join(users) + "\n")
    (root / "etc/group").write_text("\n".join(groups) + "\n")
    for name in ("ld.so.cache", "hosts", "nsswitch.conf", "localtime"):
        (root / "etc" / name).write_text("")  # mount points for host files
    for path in root.rglob("*"):
        if path.is_file():
            path.chmod(0o644)


def build_image(client=None, tag: str | None = None) -> str:
    """Build the image and return its tag; SandboxError when the Docker engine cannot be reached."""
    import docker

    settings = SandboxSettings()
    tag = tag or settings.docker_image
    try:
        client = client or docker.from_env(timeout=120)
        client.ping()
    except docker.errors.DockerException as exc:
        raise SandboxError(f"cannot reach the Docker engine: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="practice-image-") as ctx:
        shutil.copy(HERE / "Dockerfile.local", Path(ctx) / "Dockerfile")
        (Path(ctx) / "rootfs").mkdir()
        _rootfs(Path(ctx) / "rootfs", settings.uid_base)
        try:
            client.images.build(path=ctx, tag=tag, rm=True, forcerm=True, pull=False)
        except docker.errors.BuildError as exc:
            log = "".join(str(x.get("stream", x.get("error", ""))) for x in exc.build_log)
            raise SandboxError(f"building {tag} failed: {exc}\n{log[-2000:]}") from None
    return tag


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.docker_image", description=__doc__.splitlines()[0])
    parser.add_argument("--tag", default=None, help="image tag (default: PRACTICE_DOCKER_IMAGE)")
    args = parser.parse_args(argv)
    try:
        print(f"built {build_image(tag=args.tag)}")
    except SandboxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
