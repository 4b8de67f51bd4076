"""CUDA graphs (`mode="reduce-overhead"`) as the verifier sees them, on graphs it rebuilt and compiles itself.

`reduce_overhead_backend()` is the backend `torch.compile(mode="reduce-overhead")` builds (Inductor with CUDA
graph trees): pass it as `entry.compile(..., local_backend=...)`. `CudagraphWatch` says what Inductor's
CUDA-graph layer decided while it was active: the skips with their reasons ("skipping cudagraphs due to cpu
device (arange)", "... mutated inputs (1 instances)") and the partitions (Inductor splits a graph around work
a CUDA graph cannot hold and captures only the GPU pieces). `recorded_cuda_graphs()` counts the graphs the
tree recorded; `cpu_results()` finds the nodes of a rebuilt graph that make CPU tensors, with the learner's
lines. All of it reads this process's own compile, never the runner's.
"""

from __future__ import annotations

import logging

import torch
import torch.utils._pytree as pytree
from torch._dynamo.utils import counters

from judge.checks.graphs import node_stack
from judge.checks.sealed import run_sealed
from judge.compiler.locations import stack_locations
from judge.reports.i18n import T
from judge.reports.report import SourceLocation

# Where Inductor logs a skip ("skipping cudagraphs due to ..."): the cudagraphs artifact of cudagraph_utils, and
# the module loggers of the CUDA-graph code in releases that logged it there.
_SKIP_LOGGERS = ("torch._inductor.cudagraph_utils.__cudagraphs", "torch._inductor.cudagraph_utils.__perf_hints",
                 "torch._inductor.cudagraph_utils", "torch._inductor.cudagraph_trees",
                 "torch._inductor.utils.__perf_hints")


def reduce_overhead_backend():
    """The backend object torch.compile(mode="reduce-overhead") passes to Dynamo: Inductor with CUDA graphs."""
    return torch._TorchCompileInductorWrapper("reduce-overhead", None, None)


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is not a reason
            return
        if "cudagraph" in message.lower() and message not in self.messages:
            self.messages.append(message)


class CudagraphWatch:
    """Counts skips and partitions and collects skip reasons while the `with` block runs."""

    def __init__(self):
        self.skips = 0
        self.partitions = 0
        self.reasons: list[str] = []
        self._handler = _Collect()
        self._loggers: list[tuple[logging.Logger, int]] = []

    def __enter__(self) -> CudagraphWatch:
        self._start = (counters["inductor"]["cudagraph_skips"], counters["inductor"]["cudagraph_partitions"])
        for name in _SKIP_LOGGERS:
            logger = logging.getLogger(name)
            self._loggers.append((logger, logger.level))
            if logger.level == logging.NOTSET or logger.level > logging.WARNING:
                logger.setLevel(logging.WARNING)
            logger.addHandler(self._handler)
        return self

    def __exit__(self, *exc) -> None:
        self.skips = counters["inductor"]["cudagraph_skips"] - self._start[0]
        self.partitions = counters["inductor"]["cudagraph_partitions"] - self._start[1]
        for logger, level in self._loggers:
            logger.removeHandler(self._handler)
            logger.setLevel(level)
        self.reasons = [short_reason(m) for m in self._handler.messages if "skipping cudagraph" in m.lower()]


def short_reason(message: str) -> str:
    """A skip message without the stack that follows it ("Found from : ..."), which points into the judge's copy."""
    return message.split("Found from", 1)[0].strip().rstrip(".")


def recorded_cuda_graphs(device_index: int = 0) -> int | None:
    """How many CUDA graphs the CUDA-graph tree of this device recorded so far (None if this torch hides it)."""
    try:
        from torch._inductor import cudagraph_trees

        manager = cudagraph_trees.get_container(device_index).tree_manager
        if manager is None:
            return 0
        stack = [node for nodes in manager.roots.values() for node in nodes]
    except Exception:  # noqa: BLE001 - an internal API that moves between releases
        return None
    count = 0
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(child for children in node.children.values() for child in children)
    return count


def cpu_results(gm: torch.fx.GraphModule, values: list) -> list[tuple[torch.fx.Node, SourceLocation | None]]:
    """The nodes of `gm` that make a CPU tensor when run on `values`, each with the learner's line (if known)."""
    found = []

    class Watch(torch.fx.Interpreter):
        def run_node(self, node):
            out = super().run_node(node)
            if node.op in ("call_function", "call_method") and any(
                    isinstance(t, torch.Tensor) and t.device.type == "cpu" for t in pytree.tree_leaves(out)):
                stack = stack_locations(node_stack(node))
                found.append((node, stack[-1] if stack else None))
            return out

    def run(*copies):
        with torch.no_grad():
            Watch(gm).run(*copies)

    run_sealed(run, list(values), what=T("the captured graph"))
    return found
