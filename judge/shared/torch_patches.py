"""Every change the judge makes to torch's private internals, in one place, each saying what and why.

All of them exist for speed or for a run's own cache folder, in the judge's own processes (`judge.child`,
after the sandbox set the run's environment), and no verdict depends on them; except
`count_extern_bytes_as_used`, in the verifier only: Inductor's byte estimate counts what an extern call touches
(judge/costs/measure.py). Each replaces or sets a module-level name that torch reads by that name when it runs, so a new
torch can break one silently by renaming the name, changing its signature, or no longer reading it there.
`TARGETS` lists what each patch relies on, and tests/core/test_torch_patches.py checks every one against the
installed torch, by name.

(The trusted vector-ISA probe script in `judge.parent.vec_isa` wraps `VecISA._probe_load` the same way, in a fresh
interpreter of its own; its target is the one `trust_known_isa_loads` relies on.)
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """A private torch name a patch relies on: `module.name` must exist as `kind` (with `params`, for a
    function), and `read_in`'s source must use it by name (`read_as`), or the patch would change nothing."""

    patch: str  # the function of this module that patches it
    module: str
    name: str
    kind: str  # "function", "method", "str" or "config entry" (a field of torch's _ConfigEntry)
    params: tuple[str, ...] = ()
    read_in: str = ""  # the module whose code reads the patched name
    read_as: str = ""


TARGETS = (
    Target("skip_guard_latency_probe", "torch._dynamo.guards", "profile_guard_manager", "function",
           read_in="torch._dynamo.guards", read_as="profile_guard_manager("),
    Target("header_dir_in", "torch._inductor.codecache", "_HEADER_DIR", "str",
           read_in="torch._inductor.codecache", read_as="_HEADER_DIR"),
    Target("header_dir_in", "torch._inductor.codecache", "_HEADER_LOCK_DIR", "str",
           read_in="torch._inductor.codecache", read_as="_HEADER_LOCK_DIR"),
    Target("remember_precompiled_headers", "torch._inductor.codecache", "_precompile_header", "function",
           params=("header", "hashable_cmd_line", "compile_command"),
           read_in="torch._inductor.codecache", read_as="_precompile_header("),
    Target("trust_known_isa_loads", "torch._inductor.cpu_vec_isa", "VecISA._probe_load", "method",
           params=("self", "output_path"), read_in="torch._inductor.cpu_vec_isa", read_as="self._probe_load("),
    Target("count_extern_bytes_as_used", "torch._inductor.graph", "GraphLowering.count_bytes", "method",
           params=("self",), read_in="torch._inductor.compile_fx", read_as="graph.count_bytes()"),
    Target("link_kernels_with_gold", "torch._inductor.cpp_builder", "_is_gcc", "function", params=("cpp_compiler",)),
    Target("link_kernels_with_gold", "torch._inductor.cpp_builder", "_get_optimization_cflags", "function",
           params=("cpp_compiler", "min_optimize"), read_in="torch._inductor.cpp_builder",
           read_as="_get_optimization_cflags(cpp_compiler"),
    Target("follow_env", "torch._inductor.config", "_config.fx_graph_cache.env_value_force", "config entry",
           read_in="torch.utils._config_module", read_as="return config.env_value_force"),
    Target("follow_env", "torch._functorch.config", "_config.enable_autograd_cache.env_value_force",
           "config entry", read_in="torch.utils._config_module", read_as="return config.env_value_force"),
)


def skip_guard_latency_probe() -> None:
    """Make `torch._dynamo.guards.profile_guard_manager` return 0.0 without measuring.

    Dynamo times every new guard set once, after flushing the CPU caches, only to log the latency; in a freshly
    forked child that flush costs ~30 ms per compile. Verdicts never depend on that figure."""
    import torch._dynamo.guards as guards

    if callable(getattr(guards, "profile_guard_manager", None)):
        guards.profile_guard_manager = lambda *args: 0.0


def header_dir() -> str:
    """Where Inductor keeps its precompiled headers in this process."""
    from torch._inductor import codecache

    return codecache._HEADER_DIR


def header_dir_in(cache_dir: str) -> None:
    """Set `codecache._HEADER_DIR` (and its lock folder) to `<cache_dir>/precompiled_headers`.

    torch computes the folder once, at import, beside the user's default cache; a warm worker imported torch
    before the sandbox chose this run's cache folder, so the headers would land outside it."""
    from torch._inductor import codecache

    codecache._HEADER_DIR = os.path.join(os.path.abspath(cache_dir), "precompiled_headers")
    codecache._HEADER_LOCK_DIR = os.path.join(codecache._HEADER_DIR, "locks")


def remember_precompiled_headers(header_dir: str) -> None:
    """Wrap `codecache._precompile_header` so that a header's name, once computed on a trusted layer, is reused.

    Before it uses a precompiled header, Inductor preprocesses all of ATen's headers (g++ -E, ~0.2 s) in every
    process to name it. A layer's build notes the name it got for each command line (`known/<key>`): a run on the
    layer uses it when the header and its .gch are there, and notes (in its own upper folder) what it computes."""
    from torch._inductor import codecache

    compute = codecache._precompile_header
    known = os.path.join(header_dir, "known")

    @functools.cache
    def precompile_header(header: str, hashable_cmd_line: str, **compile_command) -> str:
        options = sorted((k, re.sub(r" at 0x[0-9a-f]+", "", repr(v))) for k, v in compile_command.items())
        key = hashlib.sha256(repr((header, hashable_cmd_line, options)).encode()).hexdigest()
        try:
            with open(os.path.join(known, key), encoding="utf-8") as f:
                path = os.path.join(header_dir, os.path.basename(f.read().strip()))
            if os.path.isfile(path) and os.path.isfile(path + ".gch"):
                return path
        except OSError:
            pass
        path = compute(header, hashable_cmd_line, **compile_command)
        try:
            os.makedirs(known, exist_ok=True)
            with open(os.path.join(known, f"{key}.{os.getpid()}"), "w", encoding="utf-8") as f:
                f.write(os.path.basename(path))
            os.replace(os.path.join(known, f"{key}.{os.getpid()}"), os.path.join(known, key))
        except OSError:
            pass
        return path

    codecache._precompile_header = precompile_header


def trust_known_isa_loads(cache: str, loaded: list[str]) -> None:
    """Wrap `VecISA._probe_load` to answer True, without a process, for probe libraries known to load.

    Inductor spawns a process to dlopen each ISA probe's library (~0.06 s each, six here) before trusting it;
    the trusted layer's build did exactly that with these files (`loaded`, relative to `cache`), which this run
    finds in its cache folder."""
    from torch._inductor import cpu_vec_isa

    known = {os.path.normpath(os.path.join(os.path.abspath(cache), rel)) for rel in loaded}
    probe = getattr(cpu_vec_isa.VecISA, "_probe_load", None)
    if probe is None or not known:  # torch before 2.13 (nothing recorded), or nothing to trust: the probe as it is
        return

    def probe_unless_known(self, output_path: str) -> bool:
        return os.path.normpath(output_path) in known or probe(self, output_path)

    cpu_vec_isa.VecISA._probe_load = probe_unless_known


def count_extern_bytes_as_used() -> None:
    """Wrap `GraphLowering.count_bytes` (the sum behind `torch._inductor.metrics.num_bytes_accessed`) so that an
    extern call (a matmul library call, a fallback operator) counts the elements it reads and writes, not the whole
    buffers they live in: Inductor counts a call's inputs whole, so eight matmuls each on one slice `w[i]` of a
    weight counted all of `w` eight times (decode-cpu-per-step: 16.9 MB for 2.3 MB moved). Generated kernels keep
    Inductor's own count. Applied once per process; an FX-graph cache entry keeps the sum it was written with
    (the compile cache layers' format says which)."""
    from torch._inductor.graph import GraphLowering

    count_bytes = getattr(GraphLowering, "count_bytes", None)
    if count_bytes is None or getattr(count_bytes, "counts_extern_bytes_as_used", False):
        return

    def counted(self):
        from torch._inductor.scheduler import ExternKernelSchedulerNode

        total, per_node, runtimes = count_bytes(self)
        fixed = []
        for node, elements in per_node:
            if isinstance(node, ExternKernelSchedulerNode):
                inductors = node.get_read_write_buffers_sizes()
                used = _bytes_used_by(node.node)
                if used is not None and used < inductors:
                    total -= inductors - used
                    elements = used // 4
            fixed.append((node, elements))
        return total, fixed, runtimes

    counted.counts_extern_bytes_as_used = True  # type: ignore[attr-defined]
    GraphLowering.count_bytes = counted


def _bytes_used_by(kernel) -> int | None:
    """The bytes of an extern kernel's tensor inputs and its output, each at its own size (a view at the view's):
    None where a size is symbolic or the output is not one tensor (Inductor's count is kept there)."""
    from torch._inductor import ir

    layout = getattr(kernel, "layout", None)
    if not isinstance(layout, (ir.FixedLayout, ir.FlexibleLayout)):  # no output, several, or an in-place update
        return None
    try:
        tensors = [*(i for i in kernel.inputs if hasattr(i, "get_size")), kernel]
        total = 0
        for t in tensors:
            numel = 1
            for size in t.get_size():
                numel *= int(size)  # a symbolic size: TypeError
            total += numel * t.get_dtype().itemsize
        return total
    except (AttributeError, NotImplementedError, TypeError):
        return None


def link_kernels_with_gold() -> None:
    """Wrap `cpp_builder._get_optimization_cflags` so that GCC links Inductor's C++ kernels with gold, where
    gold is installed.

    A kernel is linked against libtorch_cpu, whose symbol table GNU ld reads for about 0.3 s of a 0.9 s kernel
    build; gold links it in about 0.05 s (one fused kernel on the 2-core machine: 0.93 -> 0.66 s). The kernel's
    code is the same. The flag is on Inductor's command line, so in its kernels' cache keys: every judge child
    applies it (`judge.child.configure_compile_caches`), and the compile cache layers' format says so."""
    import shutil

    from torch._inductor import cpp_builder

    flags = getattr(cpp_builder, "_get_optimization_cflags", None)
    if flags is None or getattr(flags, "links_with_gold", False) or shutil.which("ld.gold") is None:
        return

    def with_gold(cpp_compiler: str, min_optimize: bool = False) -> tuple[list[str], list[str]]:
        cflags, ldflags = flags(cpp_compiler, min_optimize)
        if cpp_builder._is_gcc(cpp_compiler) and not any(f.startswith("fuse-ld=") for f in ldflags):
            ldflags = [*ldflags, "fuse-ld=gold"]
        return cflags, ldflags

    with_gold.links_with_gold = True  # type: ignore[attr-defined]
    cpp_builder._get_optimization_cflags = with_gold


def follow_env(config, name: str, env_name: str) -> None:
    """Set the config flag `name` on when `env_name` is "1", else off, also where the environment forced it.

    torch read the variable when the worker imported it, and a value forced by the environment (its private
    `_config[name].env_value_force`) beats any assignment: this run's environment replaces it."""
    on = os.environ.get(env_name) == "1"
    entry = getattr(config, "_config", {}).get(name)
    if entry is not None and hasattr(entry, "env_value_force"):
        entry.env_value_force = on
    setattr(config, name, on)
    if getattr(config, name) is not on:
        raise RuntimeError(f"could not set {config.__name__}.{name} to {on}")
