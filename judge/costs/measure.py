"""What compiling bought, measured in the verifier on functions and graphs it holds itself.

- `eager_cost(fn, args)`: the ATen operators running `fn` op by op dispatches and the bytes they read and write,
  counted by a TorchDispatchMode (`Traffic`). A view (an output aliasing an input, no kernel) counts as a view, no
  traffic; an in-place update reads and writes its input once each; an `out=` argument is written, not read;
  a tensor's bytes are its distinct elements (a broadcast stride-0 dim counts once) times its element size.
- `compiled_cost(fn, args)`: `fn` compiled with Inductor here (FX-graph cache off, so every figure comes from
  this compile): the kernels it generated (C++ or Triton), the calls it left outside them, and Inductor's own
  estimate of the bytes its scheduled nodes access (`torch._inductor.metrics.num_bytes_accessed`, an extern call
  counted at what it reads and writes: `judge.shared.torch_patches.count_extern_bytes_as_used`; computed only
  while the `inductor_metrics` log artifact is on; an FX-graph cache hit restores it from the entry, so every
  verifier compiles with that log on: judge/verifier_side/verifier.py). After a graph break, the operators that ran
  eagerly
  between the compiled graphs are counted too: `fn`'s eager count less what the compiled graphs hold eagerly.
- `measure_time(fn, make_args)`: on a GPU, time per call (see its docstring for the method).

Nothing here runs learner code: a learner's graph reaches it rebuilt from the runner's IR (judge.remote).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from judge.checks.inductor import cpp_kernel_names, triton_kernel_names
from judge.checks.wrapper import opaque_calls
from judge.compiler.logs import enable_artifact
from judge.reports.report import CompileCost, CompiledCost, EagerCost, TimedCost
from judge.shared import torch_patches

# Operators that only allocate: no element is read or written.
_ALLOCATING = {"aten::empty", "aten::empty_strided", "aten::empty_like", "aten::new_empty",
               "aten::new_empty_strided"}


def tensor_bytes(t: torch.Tensor) -> int:
    """The bytes of `t`'s distinct elements: a dim of stride 0 (a broadcast) is one element wide."""
    if t.layout != torch.strided or t.device.type == "meta":
        return 0
    count = 1
    for size, stride in zip(t.shape, t.stride()):
        count *= 1 if stride == 0 else size
    return count * t.element_size() if t.numel() else 0


class Traffic(TorchDispatchMode):
    """Counts the ATen operators dispatched inside the block and the bytes they move."""

    def __init__(self):
        super().__init__()
        self.ops = self.views = self.bytes_read = self.bytes_written = 0
        self.names: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        schema = func._schema
        if func.is_view or schema.name in ("aten::detach", "aten::alias", "aten::lift_fresh"):
            self.views += 1
            return out
        self.ops += 1
        self.names.append(str(func))
        if schema.name in _ALLOCATING:
            return out
        written_args = set()
        for arg, value in zip(schema.arguments, list(args) + [kwargs.get(a.name) for a in
                                                              schema.arguments[len(args):]]):
            if not isinstance(value, torch.Tensor):
                for t in pytree.tree_leaves(value):
                    if isinstance(t, torch.Tensor):
                        self.bytes_read += tensor_bytes(t)
                continue
            info = arg.alias_info
            if info is not None and info.is_write:
                written_args.add(id(value))
                self.bytes_written += tensor_bytes(value)
                if not arg.kwarg_only:  # in place (`self` of `mul_`): read, then written; `out=`: written only
                    self.bytes_read += tensor_bytes(value)
            else:
                self.bytes_read += tensor_bytes(value)
        for t in pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor) and id(t) not in written_args:
                self.bytes_written += tensor_bytes(t)
        return out

    def cost(self) -> EagerCost:
        return EagerCost(ops=self.ops, views=self.views, bytes_read=self.bytes_read, bytes_written=self.bytes_written)


def _fresh(args):
    """Copies of the tensors in `args`, so an in-place function measures the same on every run."""
    return pytree.tree_map(lambda v: v.clone() if isinstance(v, torch.Tensor) else v, args)


def eager_cost(fn: Callable, args) -> EagerCost:
    """What calling `fn(*args)` op by op dispatches (on copies of `args`)."""
    args = _fresh(list(args))
    with torch.no_grad(), Traffic() as traffic:
        fn(*args)
    return traffic.cost()


class _GraphRecorder:
    """Inductor as Dynamo's backend, counting what each compiled graph would have done eagerly, and keeping the
    code Inductor generated and its byte estimate for the graphs compiled through it."""

    def __init__(self, mode: str):
        from torch._inductor.compile_fx import compile_fx

        self.compile_fx, self.mode = compile_fx, mode
        self.graphs = 0
        self.inside = EagerCost(ops=0, views=0, bytes_read=0, bytes_written=0)
        self.codes: list[str] = []
        self.estimate = 0
        self.inductor_s = 0.0  # shown, never deciding

    def _compile(self, gm: torch.fx.GraphModule, example_inputs):
        from torch._inductor import metrics
        from torch._inductor.graph import GraphLowering

        # Inductor hands each generated module to GraphLowering.save_output_code: kept here, and passed on to
        # whoever listens already (run_and_get_code in a check compiling through this backend).
        previous = GraphLowering.save_output_code

        def save(code: str) -> None:
            if code not in self.codes:
                self.codes.append(code)
            if previous is not None:
                previous(code)

        options = {"triton.cudagraphs": True} if self.mode == "reduce-overhead" else None
        before, started = metrics.num_bytes_accessed, time.perf_counter()
        GraphLowering.save_output_code = save
        try:
            return self.compile_fx(gm, example_inputs, config_patches=options) if options else \
                self.compile_fx(gm, example_inputs)
        finally:
            GraphLowering.save_output_code = previous
            self.estimate += metrics.num_bytes_accessed - before
            self.inductor_s += time.perf_counter() - started

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        self.graphs += 1
        compiled = self._compile(gm, example_inputs)
        counted = []

        def count(values):
            if not counted:  # the first call: what this graph would have dispatched eagerly
                counted.append(True)
                e = eager_cost(gm, values)
                self.inside = EagerCost(ops=self.inside.ops + e.ops, views=self.inside.views + e.views,
                                        bytes_read=self.inside.bytes_read + e.bytes_read,
                                        bytes_written=self.inside.bytes_written + e.bytes_written)

        def run(*values):
            count(list(values))
            return compiled(*values)
        return run

    def figures(self, eager: EagerCost, breaks: int, traced: CompileCost | None = None) -> CompiledCost:
        """The compiled figures of what went through this backend; `eager`: the whole function's eager cost (the
        operators outside compiled graphs are that minus what the graphs hold, after a graph break); `traced`:
        Dynamo's figures of the frames it traced here (`dynamo_figures`), where they are the function's own."""
        outside = breaks or not self.graphs
        compiling = (traced or CompileCost()).model_copy(update={"inductor_s": round(self.inductor_s, 3)})
        return CompiledCost(graphs=self.graphs, kernels=cpp_kernel_names(self.codes) + triton_kernel_names(self.codes),
                            extern_calls=sorted(opaque_calls(self.codes)), bytes_estimate=self.estimate,
                            eager_ops_outside=max(eager.ops - self.inside.ops, 0) if outside else 0,
                            eager_bytes_outside=max(eager.bytes - self.inside.bytes, 0) if outside else 0,
                            compile=compiling)


def dynamo_figures() -> CompileCost:
    """Dynamo's frames, guards and seconds since compilation metrics were last cleared in this process (torch 2.13:
    `torch._dynamo.utils.get_compilation_metrics`, one record per frame traced)."""
    from torch._dynamo.utils import get_compilation_metrics

    frames = get_compilation_metrics()
    return CompileCost(frames=len(frames), guards=sum(m.guard_count or 0 for m in frames),
                       dynamo_s=round(sum(max((m.entire_frame_compile_time_s or 0.0)
                                              - (m.backend_compile_time_s or 0.0), 0.0) for m in frames), 3))


def count_bytes_here() -> None:
    """Every later Inductor compile in this process computes its byte estimate (only while the
    `inductor_metrics` log is on), with extern calls counted at what they touch; twice is the same as once."""
    enable_artifact("inductor_metrics")
    torch_patches.count_extern_bytes_as_used()


def compiled_cost(fn: Callable, args, *, mode: str = "default", eager: EagerCost | None = None) -> CompiledCost:
    """`fn(*args)` compiled with Inductor here and called once (on copies of `args`); `eager`: its eager cost when
    already measured (the operators outside compiled graphs are that minus what the graphs hold)."""
    eager = eager or eager_cost(fn, args)
    from torch._dynamo.utils import clear_compilation_metrics

    recorder = _GraphRecorder(mode)
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    clear_compilation_metrics()
    count_bytes_here()
    with torch.no_grad():
        torch.compile(fn, backend=recorder)(*_fresh(list(args)))
    breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
    # a rebuilt graph (the learner's) was traced by Dynamo in the learner's process: its retrace here is not that
    traced = None if isinstance(fn, torch.fx.GraphModule) else dynamo_figures()
    torch._dynamo.reset()
    return recorder.figures(eager, breaks, traced)


_MEASURED: dict[tuple, tuple[EagerCost, CompiledCost]] = {}


def _key(fn, args, mode: str) -> tuple:
    """What the figures depend on: the graph's code (or the function itself) and the arguments' layout."""
    what = ("graph", fn.code) if isinstance(fn, torch.fx.GraphModule) else ("fn", id(fn))
    layout = tuple((tuple(a.shape), a.stride(), str(a.dtype), str(a.device)) if isinstance(a, torch.Tensor)
                   else repr(a) for a in args)
    return what, layout, mode


def cost_of(fn: Callable, args, *, mode: str = "default") -> tuple[EagerCost, CompiledCost]:
    """`eager_cost` and `compiled_cost` of `fn(*args)`, measured once per process for the same graph (or function)
    and argument layout: a check and the report's cost section share one compile."""
    key = _key(fn, args, mode)
    if key not in _MEASURED:
        eager = eager_cost(fn, args)
        _MEASURED[key] = eager, compiled_cost(fn, args, mode=mode, eager=eager)
    return _MEASURED[key]


def recording_inductor(outer: torch.fx.GraphModule, values: list) -> Callable:
    """Inductor as the backend of a check's own compile of `outer` (a graph rebuilt from the runner's IR) on
    `values`: the compile the check makes anyway also gives `cost_of(outer, values)` its figures, so the cost
    section measuring the same graph on inputs of the same layout compiles nothing again. Recorded only for one
    graph without a graph break, on inputs that need no gradient (what `compiled_cost` would have measured)."""
    if any(isinstance(node.target, torch._ops.HigherOrderOperator) for node in outer.graph.nodes):
        return "inductor"  # torch.cond and the like: the counter has no rule for them, so nothing is recorded
    key = _key(outer, values, "default")
    recorder = _GraphRecorder("default")
    first = [v.clone() if isinstance(v, torch.Tensor) else v for v in values]
    wants_grad = any(isinstance(v, torch.Tensor) and v.requires_grad for v in values)

    def backend(gm: torch.fx.GraphModule, example_inputs):
        compiled = recorder(gm, example_inputs)

        def run(*inputs):
            output = compiled(*inputs)
            if key not in _MEASURED and recorder.graphs == 1 and not wants_grad:
                eager = eager_cost(outer, first)
                _MEASURED[key] = eager, recorder.figures(eager, 0)
            return output
        return run
    return backend


# ---------------------------------------------------------------- time on a GPU

L2_FLUSH_BYTES = 256 * 1024 * 1024  # larger than any GPU's L2 (an H200 has 60 MiB)


def measure_time(fn: Callable, make_args: Callable[[], list], *, calls_per_batch: int = 10, warmup: int = 3,
                 max_batches: int = 60, min_batches: int = 8, rse_bound: float = 0.02,
                 time_cap_s: float = 6.0, cpu_per_step: bool = False) -> TimedCost:
    """GPU time per call of `fn`, measured honestly.

    The first call (compiling, for a compiled `fn`) is timed apart (`compile_s`), then `warmup` calls. Each timed
    batch gets fresh inputs (`make_args()`, made before the batch), the L2 cache is flushed (a 256 MiB buffer
    written) and `calls_per_batch` calls are timed with CUDA events; batches repeat until the relative standard
    error of the batch means is under `rse_bound` (at least `min_batches`) or `time_cap_s` has passed. The result is
    the median of the per-call batch times and half their interquartile range. `cpu_per_step`: also the median CPU
    time one call takes to return (what launching costs; CUDA graphs shrink it), each call after a synchronize."""
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    started = time.perf_counter()
    fn(*make_args())
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - started
    for _ in range(warmup):
        fn(*make_args())
    torch.cuda.synchronize()
    per_call, cpu = [], []
    deadline = time.perf_counter() + time_cap_s
    while len(per_call) < max_batches:
        batches = [make_args() for _ in range(calls_per_batch)]
        flush.zero_()
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for args in batches:
            fn(*args)
        end.record()
        torch.cuda.synchronize()
        per_call.append(begin.elapsed_time(end) * 1000.0 / calls_per_batch)
        if cpu_per_step:
            args = make_args()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn(*args)
            cpu.append((time.perf_counter() - t0) * 1e6)
            torch.cuda.synchronize()
        if len(per_call) >= min_batches and (relative_standard_error(per_call) < rse_bound
                                             or time.perf_counter() > deadline):
            break
    del flush
    q = statistics.quantiles(per_call, n=4) if len(per_call) >= 2 else [per_call[0]] * 3
    return TimedCost(median_us=round(statistics.median(per_call), 3), spread_us=round((q[2] - q[0]) / 2, 3),
                     batches=len(per_call), calls_per_batch=calls_per_batch,
                     relative_standard_error=round(relative_standard_error(per_call), 4),
                     cpu_us_per_step=round(statistics.median(cpu), 3) if cpu else None,
                     compile_s=round(compile_s, 3))


def relative_standard_error(samples: list[float]) -> float:
    """The standard error of the mean over the mean (0 for fewer than two samples)."""
    if len(samples) < 2:
        return 0.0
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / math.sqrt(len(samples)) / mean if mean else 0.0
