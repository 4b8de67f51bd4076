"""The trusted Inductor cache layers of a course (`sandbox.compile_cache`), built from trusted code only.

Two layers per torch/compiler/CPU configuration (the key in their names):

- **base** (`base/<config>`): the precompiled header, the vector-ISA probes and one compile of a function that
  belongs to no exercise, made by a plain trusted process. The runner's runs see it: nothing in it was made from a
  reference solution, so the learner's process learns nothing hidden from it.
- **full** (`full/<config>-<course>`): base plus everything Inductor wrote while the reference solution of every
  exercise was graded (the `local` backend writing into the layer's build folder; no learner code runs). The
  verifier's runs see it: a submission whose graph is the reference's hits the FX-graph cache, any other still
  finds the precompiled header and needs no ISA probe.

`start_build` builds whichever is missing in a background thread (a server keeps serving meanwhile: a run uses a
layer only once it is complete); `build` does it in the caller's thread (`practice prove`). Where another process
is building the same layer (a second server, a parallel proof, another test), either waits for it and uses its
layer instead of building one more. What a server needs
first is built first: the base layer (every runner's) before the full one, and the full layer's references in
course order. A build runs at a low CPU priority (`BUILD_NICE`), so that a grading meanwhile takes about as long
as one on a server without layers; `LayerProgress` says what is still being built (for /healthz and the pages).
"""

from __future__ import annotations

import glob
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from judge.child import PROGRAM
from judge.parent.exercise import Exercise
from judge.parent.vec_isa import RECORD_LOADED_PROBES, run_probe_script
from sandbox.base import SandboxError
from sandbox.compile_cache import CompileCache, Layer, LayerBuild, config_key
from sandbox.settings import SandboxSettings

log = logging.getLogger(__name__)
BASE, FULL, GPU = "base", "full", "gpu"
LAYERED_BACKENDS = ("bwrap", "docker")  # the backends whose runs get a private view of a layer
Log = Callable[[str], None]
BASE_TIMEOUT_S = 600
BUILD_NICE = 10  # a layer's build yields most of the CPU to gradings (19 starved it on a loaded machine)


@dataclass
class LayerProgress:
    """What a server's layer build has done: `state` is "building", "ready", "failed" or "off" (no layers for
    this backend); `layer` the kind being built; `pending` the exercises whose references the full layer still
    lacks, in the order they will be graded into it."""

    state: str = "building"
    layer: str | None = BASE
    pending: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    listeners: list[Callable[[], None]] = field(default_factory=list, repr=False, compare=False)

    def update(self, **changes) -> None:
        """Change fields, then tell each listener (called in the builder's thread)."""
        with self._lock:
            for key, value in changes.items():
                setattr(self, key, value)
        for listener in list(self.listeners):
            listener()

    def snapshot(self) -> dict:
        """A copy for readers of another thread: state, layer, pending."""
        with self._lock:
            return {"state": self.state, "layer": self.layer, "pending": list(self.pending)}

    def building(self) -> bool:
        """Whether layers are still being built (a run uses one only once it is complete: Inductor gradings
        compile as if there were no layers meanwhile)."""
        with self._lock:
            return self.state == "building"

# Run by a trusted subprocess in the base layer's build folder: the ISA Inductor picks, and with "compile" one
# compile of a function of no exercise (it makes the precompiled header the kernels of every run include).
BASE_SCRIPT = """
import json, sys
import torch
from judge.child import configure_compile_caches
configure_compile_caches()
""" + RECORD_LOADED_PROBES + """
result = {"isa": str(cpu_vec_isa.pick_vec_isa())}
if sys.argv[1] == "compile":
    def f(x, w):
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        return torch.nn.functional.silu(h).sum(0)
    torch.compile(f, fullgraph=True)(torch.randn(8, 64), torch.randn(64))
result["loaded"] = sorted(set(loaded))
print("RESULT " + json.dumps(result))
"""


def course_key(exercises: Iterable[Exercise]) -> str:
    """What the full layer's kernels come from: each exercise's reference, public file and hidden tests."""
    digest = hashlib.sha256()
    for exercise in sorted(exercises, key=lambda e: e.id):
        for rel in [exercise.reference, *([exercise.public] if exercise.public else []), *exercise.test_files()]:
            digest.update(f"{exercise.id}/{rel}\0".encode())
            digest.update((exercise.root / rel).read_bytes())
    return digest.hexdigest()[:12]


def compile_cache(exercises: Iterable[Exercise], settings: SandboxSettings | None = None) -> CompileCache | None:
    """The layers a hardened sandbox's pools see (runner: base; verifier: this course's full layer, else the
    closest complete one of this configuration meanwhile); None when turned off."""
    settings = settings or SandboxSettings()
    if not settings.compile_cache:
        return None
    exercises = list(exercises)
    key = config_key()
    probe = CompileCache(root=settings.compile_cache_dir)
    full = Layer(FULL, f"{key}-{course_key(exercises)}")
    others = [layer for layer, _ in _closest(probe, key, exercises) if layer != full]
    return CompileCache(root=settings.compile_cache_dir,
                        pools={"runner": (Layer(BASE, key),), "verifier": (full, *others[:2])})


def _closest(cache: CompileCache, key: str, exercises: list[Exercise]) -> list[tuple[Layer, dict]]:
    """Complete full layers of this configuration, those built from more of these exercises first, then newer."""
    ids = {e.id for e in exercises}
    found = cache.complete(FULL, prefix=f"{key}-")
    return sorted(found, key=lambda li: (len(ids & set(li[1].get("references", {}))), li[1].get("built_at", 0)),
                  reverse=True)


def for_backend(sandbox_name: str, exercises: Iterable[Exercise],
                settings: SandboxSettings | None = None) -> CompileCache | None:
    """The layers for a sandbox backend's runs, or None: the unisolated backends (none, local) share one C++
    build cache instead and never get the pickle caches; a root folder that is not this user's alone is refused
    (logged) and runs go without."""
    if sandbox_name not in LAYERED_BACKENDS:
        return None
    cache = compile_cache(exercises, settings)
    if cache is None:
        return None
    try:
        cache.prepare()
    except (SandboxError, OSError) as exc:
        log.warning("compile cache layers off: %s", exc)
        return None
    return cache


def build(cache: CompileCache, exercises: list[Exercise], say: Log = log.info,
          progress: LayerProgress | None = None) -> bool:
    """Build the base layer, then this course's full layer, where missing. True when both are complete."""
    progress = progress or LayerProgress()
    exercises = sorted(exercises, key=lambda e: (e.order, e.id))  # what learners open first, first
    base, full = cache.pools["runner"][0], cache.pools["verifier"][0]
    progress.update(state="building", layer=BASE, pending=[e.id for e in exercises])
    if cache.ready(base) is None:
        _build_base(cache, base, say)
    info = cache.ready(base)
    if info is None:
        progress.update(state="failed", layer=None)
        return False
    progress.update(layer=FULL)
    if cache.ready(full) is None:
        # On top of the closest full layer, if any: what its references compiled is found in the cache again.
        closest = [layer for layer, _ in _closest(cache, base.name, exercises) if layer != full]
        _build_full(cache, closest[0] if closest else base, full, info, exercises, say, progress)
    ready = cache.ready(full) is not None
    progress.update(state="ready" if ready else "failed", layer=None, pending=[] if ready else progress.pending)
    return ready


def start_build(cache: CompileCache, exercises: list[Exercise], say: Log = log.info,
                progress: LayerProgress | None = None) -> threading.Thread:
    """`build` in a daemon thread; failures are logged (runs simply go on without a layer)."""
    progress = progress or LayerProgress()

    def run() -> None:
        try:
            build(cache, exercises, say, progress)
        except Exception:  # a missing layer only costs time
            progress.update(state="failed", layer=None)
            log.exception("building the compile cache layers failed")

    thread = threading.Thread(target=run, name="compile-cache-build", daemon=True)
    thread.start()
    return thread


def _build_base(cache: CompileCache, layer: Layer, say: Log) -> None:
    building = LayerBuild(cache, layer).start(wait=True)
    if building is None:
        return
    started = time.monotonic()
    try:
        probed = _base_step(building.dir, "probe", vec_isa_ok=False)
        detected = probed["isa"]
        compiled = _base_step(building.dir, "compile", vec_isa_ok=True)
        vec_isa_ok = bool(detected) and compiled["isa"] == detected
        if not vec_isa_ok:  # the probe found less than the CPU claims: compile as every run then will
            compiled = _base_step(building.dir, "compile", vec_isa_ok=False)
        # The ISA probes' libraries that loaded here: a run finds the same files in the layer and need not spawn a
        # process to dlopen each again (judge.child.configure_compile_caches).
        loaded = sorted(set(probed["loaded"]) | set(compiled["loaded"]))
        path = building.commit({"vec_isa": detected, "vec_isa_ok": vec_isa_ok, "vec_isa_loaded": loaded})
    except BaseException:
        building.discard()
        raise
    say(f"compile cache: base layer {path} built in {time.monotonic() - started:.0f} s (ISA {detected or 'none'})")


def _base_step(folder, mode: str, vec_isa_ok: bool) -> dict:
    env = {**PROGRAM.environment(), "TORCHINDUCTOR_CACHE_DIR": str(folder), "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
           "TORCHINDUCTOR_AUTOGRAD_CACHE": "1", **({"TORCHINDUCTOR_VEC_ISA_OK": "1"} if vec_isa_ok else {})}
    return run_probe_script(BASE_SCRIPT, [mode], env, BASE_TIMEOUT_S, f"the base layer's {mode} step",
                            nice=BUILD_NICE)


def _build_full(cache: CompileCache, below: Layer, layer: Layer, base_info: dict, exercises: list[Exercise],
                say: Log, progress: LayerProgress) -> None:
    from judge.parent.grading import make_sandbox

    building = LayerBuild(cache, layer).start(base=below, wait=True)
    if building is None:
        return
    started = time.monotonic()
    env = (("TORCHINDUCTOR_VEC_ISA_OK", "1"),) if base_info.get("vec_isa_ok") else ()
    sandbox = make_sandbox("local", compile_cache=CompileCache(root=cache.root, build=building.dir, build_env=env),
                           nice=BUILD_NICE)
    try:
        verdicts = _grade_references(exercises, sandbox, progress)
        path = building.commit({key: base_info.get(key) for key in ("vec_isa", "vec_isa_ok", "vec_isa_loaded")}
                               | {"references": verdicts})
    except BaseException:
        building.discard()
        raise
    finally:
        sandbox.close()
    say(f"compile cache: full layer {path} built in {time.monotonic() - started:.0f} s "
        f"from {len(verdicts)} reference solutions (on {below.kind}/{below.name})")


# ---- the GPU layer: the references' Triton kernels, for the prestarted GPU graders' verifiers ---------------------

def _grade_references(exercises: list[Exercise], sandbox, progress: LayerProgress) -> dict[str, str]:
    """Grade each exercise's reference on `sandbox` (compiling its kernels into the layer being built): exercise id
    -> verdict, the exercises still to do told to `progress` after each."""
    from judge.parent.grading import grade

    verdicts: dict[str, str] = {}
    for exercise in exercises:
        report = grade(exercise, exercise.read(exercise.reference), sandbox=sandbox,
                       filename=exercise.reference.rsplit("/", 1)[-1])
        verdicts[exercise.id] = report.verdict.value
        progress.update(pending=[e.id for e in exercises if e.id not in verdicts])
    return verdicts


def gpu_key() -> str:
    """What a Triton kernel depends on besides config_key(): the driver and the GPUs."""
    parts = []
    for path in ["/proc/driver/nvidia/version", *sorted(glob.glob("/proc/driver/nvidia/gpus/*/information"))]:
        try:
            parts.append(Path(path).read_text())
        except OSError:
            parts.append(path)
    try:
        import torch

        parts += [torch.version.cuda or "", *(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))]
    except Exception:  # noqa: BLE001 - no CUDA: the key still names the driver files
        pass
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


def gpu_layer(exercises: Iterable[Exercise], settings: SandboxSettings | None = None) -> tuple[CompileCache, Layer]:
    """The layers root and the GPU layer of these (CUDA) exercises on this machine."""
    settings = settings or SandboxSettings()
    exercises = list(exercises)
    layer = Layer(GPU, f"{config_key()}-{gpu_key()}-{course_key(exercises)}")
    return CompileCache(root=settings.compile_cache_dir, pools={"verifier": (layer,)}), layer


def build_gpu(cache: CompileCache, layer: Layer, exercises: list[Exercise], say: Log = log.info,
              progress: LayerProgress | None = None) -> bool:
    """Grade each CUDA exercise's reference in prestarted processes that share the layer's build folder (trusted
    code only), then seal it. True when the layer is complete."""
    from judge.parent.grading import make_sandbox

    progress = progress or LayerProgress(layer=GPU)
    exercises = sorted(exercises, key=lambda e: (e.order, e.id))
    progress.update(state="building", layer=GPU, pending=[e.id for e in exercises])
    if cache.ready(layer) is None:
        building = LayerBuild(cache, layer).start(wait=True)
        if building is not None:
            started = time.monotonic()
            from sandbox.settings import SandboxSettings

            sandbox = make_sandbox("prestarted", build=building.dir, zygote=SandboxSettings().prestarted_zygote)
            try:
                verdicts = _grade_references(exercises, sandbox, progress)
                path = building.commit({"references": verdicts})
            except BaseException:
                building.discard()
                progress.update(state="failed", layer=None)
                raise
            finally:
                sandbox.close()
            say(f"compile cache: GPU layer {path} built in {time.monotonic() - started:.0f} s "
                f"from {len(verdicts)} reference solutions")
    ready = cache.ready(layer) is not None
    progress.update(state="ready" if ready else "failed", layer=None, pending=[] if ready else progress.pending)
    return ready
