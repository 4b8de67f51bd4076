"""Trusted Inductor cache layers: built once from trusted code, seen read-only by runs, never written by one.

A *layer* is a folder of Inductor's cache (C++ kernels, the precompiled header, FX-graph and AOTAutograd
entries) that only a trusted process wrote. It lives under a root folder that only this server's user can
enter, at `<root>/<kind>/<name>/`, and counts only once complete: a build happens in a private folder under
the root and is renamed into place with its marker file (`layer.json`) inside, so a half-built layer is never
seen. The name carries the torch/compiler/CPU key (`config_key()`), so a layer is only used where it was built.

A hardened backend binds `<root>/<kind>` read-only into the workers of the pools that use that kind; a run
whose layer is complete gets an overlay at `TORCHINDUCTOR_CACHE_DIR` (bwrap: the layer below, its own tmpfs
above; docker, whose worker cannot mount: a fresh folder of links to the layer's files), so whatever Inductor
writes lands on the run's private /tmp and disappears with it. Only such runs get the
FX-graph and AOTAutograd caches (their entries are pickles): what they load is the trusted layer's or their
own. Which pool sees which layer is the caller's choice (`CompileCache.pools`); the sandbox knows no exercise.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import secrets
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.base import SandboxError

FORMAT = 6  # 2: the marker lists the ISA probe libraries that loaded; 3: remembered header names; 4: FX-graph
# entries carry Inductor's byte estimate (the verifier compiles with the inductor_metrics log on:
# judge/costs/measure.py);
# 5: that estimate counts an extern call at what it touches (judge.shared.torch_patches.count_extern_bytes_as_used);
# 6: kernels linked with gold where installed (judge.shared.torch_patches.link_kernels_with_gold): other cache keys
MARKER = "layer.json"
LAYERS_DIR = "/opt/compile-cache"  # where a hardened worker sees its pool's layer kind (read-only)
RUN_CACHE_DIR = "/tmp/inductor"  # a run's Inductor cache (TORCHINDUCTOR_CACHE_DIR) in the hardened backends
OVERLAY_DIR = "/tmp/.inductor-overlay"  # the overlay's upper and work folders, on the run's own tmpfs
# Cache entries a run may load only from a trusted layer (pickles), never from a shared writable folder.
CACHES_ON = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "1", "TORCHINDUCTOR_AUTOGRAD_CACHE": "1"}
ISA_LOADED_ENV = "PRACTICE_VEC_ISA_LOADED"  # the layer's ISA probe libraries (relative paths) that loaded


def config_key() -> str:
    """What a compiled kernel depends on besides its source: torch, Python, the C++ compiler and the CPU."""
    try:
        from importlib.metadata import distribution

        dist = distribution("torch")
        torch_id = f"{dist.version} {dist.locate_file('torch')}"
    except Exception:  # noqa: BLE001 - no torch: the key still separates machines
        torch_id = "no-torch"
    parts = [f"format {FORMAT}", torch_id, sys.version, platform.machine(), _compiler(), _cpu()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _compiler() -> str:
    cxx = os.environ.get("CXX", "g++")
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return f"{cxx}: not found"
    return f"{shutil.which(cxx) or cxx}: {out.splitlines()[0] if out else '?'}"


def _cpu() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor()
    fields = {}
    for line in text.splitlines():
        if ":" in line:
            key, value = (s.strip() for s in line.split(":", 1))
            if key in ("model name", "flags", "Features", "CPU part") and key not in fields:
                fields[key] = value
    return json.dumps(fields, sort_keys=True)


@dataclass(frozen=True)
class Layer:
    """One layer: `<root>/<kind>/<name>`."""

    kind: str
    name: str

    def __post_init__(self):
        for part in (self.kind, self.name):
            if not part or "/" in part or part.startswith("."):
                raise ValueError(f"bad layer path part {part!r}")


@dataclass(frozen=True)
class CompileCache:
    """The layers root and which layers each pool's runs see; `build`: every run writes into this folder instead.

    `pools` maps a pool to its layers in order of preference, all of one kind: a run gets the first complete one
    (a layer of an earlier course, say, while the current one is being built). `build` is for a trusted process
    that builds a layer (no learner code runs in it): its runs share the folder, pickle caches on.
    """

    root: Path
    pools: dict[str, tuple[Layer, ...]] = field(default_factory=dict)
    build: Path | None = None
    build_env: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        for pool, layers in self.pools.items():
            if len({layer.kind for layer in layers}) > 1:
                raise ValueError(f"pool {pool!r}: layers of one kind only (a worker binds one kind's folder)")

    def kind_for(self, pool: str) -> str | None:
        layers = self.pools.get(pool, ())
        return layers[0].kind if layers else None

    def layer_for(self, pool: str) -> tuple[Layer, dict] | None:
        """The first complete layer of `pool`, with its marker; None when none is."""
        for layer in self.pools.get(pool, ()):
            info = self.ready(layer)
            if info is not None:
                return layer, info
        return None

    def kind_dir(self, kind: str) -> Path:
        return self.root / kind

    def path(self, layer: Layer) -> Path:
        return self.root / layer.kind / layer.name

    def ready(self, layer: Layer | None) -> dict | None:
        """The marker of `layer` when it is complete, else None."""
        if layer is None:
            return None
        try:
            info = json.loads((self.path(layer) / MARKER).read_text())
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) and info.get("format") == FORMAT else None

    def complete(self, kind: str, prefix: str = "") -> list[tuple[Layer, dict]]:
        """Every complete layer of `kind` whose name starts with `prefix`."""
        try:
            names = sorted(p.name for p in self.kind_dir(kind).iterdir())
        except OSError:
            return []
        found = [(Layer(kind, n), self.ready(Layer(kind, n))) for n in names if n.startswith(prefix)]
        return [(layer, info) for layer, info in found if info is not None]

    def run_env(self, info: dict) -> dict[str, str]:
        """The environment a run on a complete layer gets: the pickle caches on, the ISA check skipped if known,
        and the layer's ISA probe libraries that loaded when it was built (paths in the layer)."""
        return {**CACHES_ON, **isa_env(bool(info.get("vec_isa_ok")), info.get("vec_isa_loaded"))}

    def key(self) -> tuple:
        """What tells two configurations' worker pools apart."""
        pools = tuple(sorted((p, tuple((x.kind, x.name) for x in layers)) for p, layers in self.pools.items()))
        return (str(self.root), pools, str(self.build))

    def prepare(self) -> None:
        """Create the root (this user's only) and each kind's folder that workers bind."""
        secure_root(self.root)
        for pool in self.pools:
            self.kind_dir(self.kind_for(pool)).mkdir(mode=0o755, exist_ok=True)


def isa_env(vec_isa_ok: bool, loaded) -> dict[str, str]:
    """A run's environment where a trusted probe found Inductor's vector-ISA check skippable: the check off, and
    the probe libraries known to load from the run's cache (paths in it; none that leaves it or splits the list)."""
    if not vec_isa_ok:
        return {}
    paths = [p for p in loaded or [] if isinstance(p, str) and "," not in p and ".." not in p]
    return {"TORCHINDUCTOR_VEC_ISA_OK": "1", **({ISA_LOADED_ENV: ",".join(paths)} if paths else {})}


def secure_root(root: Path) -> None:
    """Make `root` a folder only this user can enter; refuse one that anyone else could have written."""
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(root)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise SandboxError(f"compile cache folder {root} must be a folder owned by uid {os.geteuid()} with mode 0700 "
                           f"(it is {stat.filemode(st.st_mode)}, uid {st.st_uid}); remove it or fix it")
    parent = root.parent
    while True:
        pst = os.stat(parent)
        if pst.st_mode & 0o002 and not pst.st_mode & stat.S_ISVTX:
            raise SandboxError(f"compile cache folder {root} lies under {parent}, which anyone may write to")
        if parent == parent.parent:
            return
        parent = parent.parent


class LayerBuild:
    """A layer being built: a private folder under the root, renamed into place when complete.

    One build of a layer at a time per root (a lock file); `start()` returns None when another process is
    building it (or, with `wait`, once that process is done) or it is already complete.
    """

    def __init__(self, cache: CompileCache, layer: Layer):
        self.cache, self.layer = cache, layer
        self.dir = cache.root / f".build-{layer.kind}-{layer.name}-{os.getpid()}-{secrets.token_hex(3)}"
        self._lock: int | None = None

    def start(self, base: Layer | None = None, wait: bool = False) -> LayerBuild | None:
        """Take the lock (with `wait`, after the process that holds it) and make the build folder (holding hard
        links to `base`'s files, if given)."""
        secure_root(self.cache.root)
        self.cache.kind_dir(self.layer.kind).mkdir(mode=0o755, exist_ok=True)
        remove_stale_builds(self.cache.root)
        fd = os.open(self.cache.root / f".lock-{self.layer.kind}-{self.layer.name}", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        self._lock = fd
        if self.cache.ready(self.layer) is not None:
            self.discard()
            return None
        self.dir.mkdir(mode=0o700)
        if base is not None:
            _link_tree(self.cache.path(base), self.dir)
            (self.dir / MARKER).unlink(missing_ok=True)
        return self

    def commit(self, info: dict) -> Path:
        """Seal the folder (read-only files, no lock files), write the marker, move it into place."""
        for lock_dir in [p for p in self.dir.rglob("locks") if p.is_dir()]:
            shutil.rmtree(lock_dir)
        for path in self.dir.rglob("*"):
            if path.is_symlink():
                path.unlink()
            elif path.is_dir():
                # Writable for the overlay's sake only: nothing ever writes here (the folder is bound read-only
                # and the root is this user's alone); a run's writes land in its own upper folder.
                path.chmod(0o777)
            elif path.is_file():
                path.chmod(0o755 if path.stat().st_mode & 0o111 else 0o644)
        self.dir.chmod(0o755)
        marker = {"format": FORMAT, "layer": f"{self.layer.kind}/{self.layer.name}", "built_at": time.time(), **info}
        (self.dir / MARKER).write_text(json.dumps(marker, indent=1))
        (self.dir / MARKER).chmod(0o644)
        target = self.cache.path(self.layer)
        try:
            os.rename(self.dir, target)
        except OSError:  # built meanwhile by a process that did not take the lock
            shutil.rmtree(self.dir, ignore_errors=True)
        self._unlock()
        return target

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def _link_tree(source: Path, target: Path) -> None:
    """Hard links of every file of `source` under `target` (same file system: the layers' root)."""
    for dirpath, _, filenames in os.walk(source):
        rel = Path(dirpath).relative_to(source)
        (target / rel).mkdir(mode=0o700, exist_ok=True)
        for name in filenames:
            os.link(Path(dirpath) / name, target / rel / name)


def remove_stale_builds(root: Path) -> None:
    """Build folders of processes that are gone."""
    for path in root.glob(".build-*"):
        pid = path.name.rsplit("-", 2)[-2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(path, ignore_errors=True)


def overlay_options(lower: str, upper: str, work: str) -> str:
    return f"lowerdir={lower},upperdir={upper},workdir={work}"
