"""How the web app grades: the sandbox it picks, and the grade function its queue workers call."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from judge.parent.outcome import grader_failed
from judge.reports.report import ProgressEvent, Report, Verdict
from sandbox import Sandbox
from sandbox.backends import UNISOLATED, unavailable_reason
from web.course import Course
from web.errors import StartupError
from web.grading_loop import GradeFn
from web.settings import Settings
from web.store import Submission

if TYPE_CHECKING:
    from judge.parent.cache_layers import LayerProgress

log = logging.getLogger(__name__)
GPU_POOL_SIZE = 2  # prepared processes per pool (runner, verifier) on a machine that grades CUDA exercises, and GPU
# gradings at once (web/gpu_sizing.py sizes it by the machine for the server and `practice worker`)


def choose_sandbox(settings: Settings) -> str:
    """The backend to use: bwrap when available for 'auto'; 'none' only when explicitly allowed."""
    name = settings.sandbox
    if name == "auto":
        reason = unavailable_reason("bwrap")
        if reason is None:
            return "bwrap"
        if not settings.allow_unsandboxed:
            raise StartupError(f"no sandbox available ({reason}); use --sandbox docker, or set "
                               "PRACTICE_ALLOW_UNSANDBOXED=1 to run submissions unsandboxed (never on a shared server)")
        log.warning("bwrap unavailable (%s): grading unsandboxed, as PRACTICE_ALLOW_UNSANDBOXED allows", reason)
        return "none"
    if name in UNISOLATED and not settings.allow_unsandboxed:
        raise StartupError(f"sandbox '{name}' runs submissions as this user, unisolated; set "
                           "PRACTICE_ALLOW_UNSANDBOXED=1 to allow it (never on a shared server)")
    reason = unavailable_reason(name)
    if reason is not None:
        raise StartupError(f"sandbox '{name}' is unavailable: {reason}")
    return name


class WarmPools:
    """Whether `warm()` has started the graders' warm pools: "starting", "ready", "failed" (the first submission
    says why) or "off" (nothing warms up here). Written by the warm-up thread, read by /healthz; each change is
    told to `listeners` (web/warmup.py prints it in the terminal)."""

    def __init__(self, state: str = "starting"):
        self._state = state
        self.listeners: list[Callable[[], None]] = []

    @property
    def state(self) -> str:
        return self._state

    @state.setter
    def state(self, value: str) -> None:
        self._state = value
        for listener in list(self.listeners):
            listener()

    def graded(self, verdict: Verdict) -> None:
        """A grading ended with `verdict`: one that is not the grader's own failure shows that workers start after
        all (a pool starts them again on demand), so pools that had failed are ready now."""
        if self._state == "failed" and verdict is not Verdict.INTERNAL_ERROR:
            self.state = "ready"


class Grading(NamedTuple):
    """What `make_grade_fn` gives the queue: the grade function, a warm-up, a close function, the progress of the
    compile cache layers' builds (by name: "cpu", "gpu"; for /healthz and the pages), whether this process
    grades exercises that need CUDA, and the warm pools' state."""

    grade: GradeFn
    warm: Callable[[], None]
    close: Callable[[], None]
    layers: dict[str, LayerProgress]
    serves_gpu: bool
    pools: WarmPools


def make_grade_fn(course: Course, sandbox_name: str, gpu_pool_size: int = GPU_POOL_SIZE,
                  use_gpu: bool = True) -> Grading:
    """A grade function for the queue (one sandbox per worker thread; the exercises that need CUDA share one pool of
    prestarted GPU processes where this machine has a CUDA device, `gpu_pool_size` gradings of them at once), a
    warm-up, and a close function."""
    from judge import grade
    from judge.parent import cache_layers
    from judge.parent.requirements import cuda_missing, needs_cuda
    from judge.shared.tiers import CPU, grade_tiers, has_cpu_tier

    local = threading.local()
    pools = WarmPools()
    made: list[Sandbox] = []
    lock = threading.Lock()
    closed = threading.Event()
    # Trusted Inductor cache layers (built by warm(), in the background): each run gets a private overlay of one.
    cpu_exercises = [e for e in course.all() if not needs_cuda(e)]
    gpu_exercises = [e for e in course.all() if needs_cuda(e)]
    cache = cache_layers.for_backend(sandbox_name, cpu_exercises)
    layers = {"cpu": cache_layers.LayerProgress(state="building" if cache else "off", layer=None)}
    # use_gpu=False: a `practice worker` of the cpu queue alone, whose GPU (if it has one) is the gpu queue's to use
    serves_gpu = use_gpu and bool(gpu_exercises) and cuda_missing() is None
    gpu: dict = {}
    gpu_slots = threading.BoundedSemaphore(max(1, gpu_pool_size))  # more would wait for a successor to prepare
    if serves_gpu:
        from judge.parent.grading import make_sandbox

        gpu_cache, gpu_layer = cache_layers.gpu_layer(gpu_exercises)
        layers["gpu"] = cache_layers.LayerProgress(state="building", layer=None)
        gpu["layer"] = (gpu_cache, gpu_layer)
        from sandbox.settings import SandboxSettings

        settings = SandboxSettings()
        uids = settings.prestarted_uid_range() if settings.prestarted_uids else None
        gpu["sandbox"] = make_sandbox("prestarted", pool_size=gpu_pool_size, uids=uids,
                                      prepare_nice=settings.prestarted_prepare_nice,
                                      zygote=settings.prestarted_zygote,
                                      share_preparation=settings.prestarted_share_preparation, layers={
            "verifier": lambda: gpu_cache.path(gpu_layer) if gpu_cache.ready(gpu_layer) else None})
        made.append(gpu["sandbox"])

    def sandbox(exercise, tier: str | None = None) -> Sandbox:
        if needs_cuda(exercise) and gpu and tier is None:  # a CPU tier runs on the CPU graders' sandbox
            return gpu["sandbox"]
        if getattr(local, "sandbox", None) is None:
            from judge.parent.grading import make_sandbox

            local.sandbox = make_sandbox(sandbox_name, **({"compile_cache": cache} if cache else {}))
            with lock:
                made.append(local.sandbox)
        return local.sandbox

    def grade_submission(submission: Submission, publish: Callable[[ProgressEvent], None]) -> Report:
        exercise = course.get(submission.exercise_id)
        if exercise is None:
            return grader_failed(submission.exercise_id, "the exercise no longer exists")

        def on_event(event: ProgressEvent) -> None:
            if event.type != "done":  # the queue publishes done after the report is stored
                publish(event)

        def graded(source: str, tier: str | None = None) -> Report:
            on_gpu = tier is None and needs_cuda(exercise) and gpu
            with gpu_slots if on_gpu else contextlib.nullcontext():  # on the GPU: one of the machine's GPU slots
                return grade(exercise, source, sandbox=sandbox(exercise, tier), on_event=on_event, tier=tier)

        # Without a GPU here, the CPU tier first (a passed one waits for a GPU: web.grading_loop). With one, the full
        # grading at once: the CPU graders' warm forks come from a process that may have initialised CUDA, where a
        # forked child cannot use it, and the GPU grading runs every check of the tier anyway.
        if has_cpu_tier(exercise) and not gpu:
            report = grade_tiers(exercise, submission.source, grade_cpu_tier=lambda text: graded(text, CPU),
                                 grade_full=None)[0]
        else:
            report = graded(submission.source)
        pools.graded(report.verdict)
        return report

    def warm() -> None:
        """Start warm workers before the first submission (backends without them do nothing), and build the
        compile cache layers that are missing in the background (the CPU layers first, then the GPU layer)."""
        if cache is not None:
            cache_layers.start_build(cache, cpu_exercises, progress=layers["cpu"])
        if gpu:
            threading.Thread(target=_build_gpu, name="gpu-layer-build", daemon=True).start()
        try:
            if gpu:
                gpu["sandbox"].warm_up(pools=("runner", "verifier"))
            if cpu_exercises:
                getattr(sandbox(cpu_exercises[0]), "warm_up", lambda **kwargs: None)(pools=("runner", "verifier"))
            pools.state = "ready"
        except Exception:  # the first submission reports the problem as its verdict
            pools.state = "failed"
            if not closed.is_set():  # a server stopped while its workers were starting: nothing failed
                log.exception("sandbox warm-up failed")

    def _build_gpu() -> None:
        try:
            cache, layer = gpu["layer"]
            cache_layers.build_gpu(cache, layer, gpu_exercises, progress=layers["gpu"])
        except Exception:
            layers["gpu"].update(state="failed", layer=None)
            log.exception("building the GPU compile cache layer failed")

    def close() -> None:
        closed.set()
        with lock:
            for box in made:
                box.close()
            made.clear()

    return Grading(grade_submission, warm, close, layers, serves_gpu, pools)
