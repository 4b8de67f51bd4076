"""The program the sandbox runs (`sandbox.limits.Program("judge.child")`): one module, two roles.

`python -m judge.child --result-fd N --scratch DIR` reads its job as the first line of stdin; a warm
worker calls `prepare_worker()` once, then `run_job(job_json, result_fd, scratch)` in a forked child.
The job's `role` says which side this process is: the runner (imports the learner's code and answers
requests arriving on stdin) or the verifier (runs the hidden tests, whose requests leave on the result
channel and whose answers arrive on stdin). stdout and stderr are the run's output.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path

from sandbox.limits import Program
from sandbox.prestarted import PREPARE_FLAG, READY_LINE, apply_limits

PROGRAM = Program(module="judge.child")


class Lines:
    """JSON lines read from a raw descriptor (no buffering beyond the current line)."""

    def __init__(self, fd: int):
        self.fd, self.buffer = fd, b""

    def readline(self) -> bytes | None:
        while b"\n" not in self.buffer:
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                line, self.buffer = self.buffer, b""
                return line or None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def __iter__(self):
        while (line := self.readline()) is not None:
            if line.strip():
                yield line


def prepare_worker() -> None:
    """Import torch and what every grading imports, and compile once, so that forked children start fast."""
    os.environ.update(PROGRAM.environment())
    import importlib

    import torch

    torch.set_num_threads(1)
    from _pytest.config import default_plugins

    for name in [f"_pytest.{p}" for p in default_plugins] + [
            "pdb", "sympy.combinatorics", "judge.checks", "judge.plugin", "judge.fixtures", "judge.loaded",
            "judge.tamper", "judge.runner", "judge.verifier", "judge.remote", "judge.compiling", "judge.ir",
            "judge.job", "hypothesis", "sympy.tensor.tensor",
            # Inductor's modules (~2.3 s to import in a child that compiles), imported only: nothing is compiled here.
            "torch._inductor.compile_fx", "torch._inductor.fx_passes.pad_mm",
            "torch._inductor.fx_passes.fuse_attention",
            "torch.utils.cpp_extension", "sympy.physics.units"]:
        try:
            importlib.import_module(name)
        except ImportError:
            pass

    def step(x, w):
        h = x @ w
        return torch.relu(torch.where(h.sum() > 0, h * 2, h))

    torch.compile(step, backend="aot_eager", fullgraph=True)(torch.randn(4, 4), torch.randn(4, 4))
    torch._dynamo.reset()
    from judge import ir

    ir.allowed_functions()
    _skip_guard_latency_probe()


def prepare_fresh() -> None:
    """Before the job of a prestarted process (`sandbox.prestarted`): what a warm worker prepares, and where a
    CUDA device is, its context, Triton and Inductor's GPU code generation, loaded by one tiny compile. Nothing of
    it stays allocated or compiled: the job starts on an empty device and a reset Dynamo."""
    prepare_worker()
    import torch

    if not torch.cuda.is_available():
        return
    import torch._inductor.codegen.triton  # noqa: F401 - Inductor's Triton code generation
    import triton  # noqa: F401

    torch.compile(lambda x: x * 2 + 1, fullgraph=True)(torch.ones(8, device="cuda"))
    torch.cuda.synchronize()
    torch._dynamo.reset()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def _skip_guard_latency_probe() -> None:
    """Dynamo times every new guard set once, after flushing the CPU caches, only to log the latency; in a
    freshly forked child that flush costs ~30 ms per compile. Verdicts never depend on that figure."""
    import torch._dynamo.guards as guards

    if callable(getattr(guards, "profile_guard_manager", None)):
        guards.profile_guard_manager = lambda *args: 0.0


def run_job(job_json: str, result_fd: int, scratch, stdin: Lines | None = None) -> None:
    """Run one job in this process; every outcome is reported on the result channel, nothing is raised."""
    for key, value in PROGRAM.environment().items():  # what the sandbox set for this run wins
        os.environ.setdefault(key, value)
    scratch = Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    # stdin carries the other side's messages: keep it on a private descriptor, give fd 0 /dev/null.
    lines = stdin or Lines(os.dup(0))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    job = None
    try:
        job = json.loads(job_json)
        del job_json
        configure_compile_caches()
        if job.get("role") == "runner":
            from judge import runner

            runner.run(job, result_fd, scratch, iter(lines))
        elif job.get("role") == "verifier":
            from judge import verifier
            from judge.job import VerifierJob

            verifier.run(VerifierJob.model_validate(job), result_fd, scratch, lines)
        else:
            raise ValueError(f"unknown role {job.get('role')!r}")
    except BaseException as exc:  # noqa: BLE001 - the channel must say something whatever happened
        try:
            data = json.dumps({"type": "internal_error", "nonce": _nonce(job),
                               "message": f"{type(exc).__name__}: {exc}"[:2000],
                               "traceback": traceback.format_exc()[-4000:]}) + "\n"
            os.write(result_fd, data.encode())
        except (OSError, TypeError, ValueError):
            pass


def configure_compile_caches() -> None:
    """Inductor's caches as the sandbox set them for this run (the warm worker imported torch with other values).

    The FX-graph and AOTAutograd caches, whose entries are pickles, only where the sandbox turned them on: a run
    whose cache folder is its private overlay of a trusted layer, or a trusted build of such a layer
    (`sandbox.compile_cache`); remote caches never. The precompiled header lives in the run's cache folder (torch
    puts it beside the user's default one), and the vector-ISA probe is skipped where the layer knows the ISA.
    """
    import torch._functorch.config as functorch_config
    import torch._inductor.codecache as codecache
    import torch._inductor.config as inductor_config

    def flag(name: str) -> bool | None:
        return {"1": True, "0": False}.get(os.environ.get(name, ""))

    _follow_env(inductor_config, "fx_graph_cache", "TORCHINDUCTOR_FX_GRAPH_CACHE")
    _follow_env(functorch_config, "enable_autograd_cache", "TORCHINDUCTOR_AUTOGRAD_CACHE")
    inductor_config.fx_graph_remote_cache = False
    inductor_config.autotune_remote_cache = False
    inductor_config.bundled_autotune_remote_cache = False
    functorch_config.enable_remote_autograd_cache = False
    inductor_config.cpp.vec_isa_ok = flag("TORCHINDUCTOR_VEC_ISA_OK")
    if os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        codecache._HEADER_DIR = os.path.join(os.path.abspath(os.environ["TORCHINDUCTOR_CACHE_DIR"]),
                                             "precompiled_headers")
        codecache._HEADER_LOCK_DIR = os.path.join(codecache._HEADER_DIR, "locks")
    if os.environ.get("PRACTICE_VEC_ISA_LOADED") and os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        _known_isa_loads(os.environ["TORCHINDUCTOR_CACHE_DIR"], os.environ["PRACTICE_VEC_ISA_LOADED"].split(","))
    if inductor_config.fx_graph_cache and os.environ.get("TORCHINDUCTOR_CACHE_DIR"):  # a layer's run or build
        _remembered_headers(codecache._HEADER_DIR)


def _remembered_headers(header_dir: str) -> None:
    """Before it uses a precompiled header, Inductor preprocesses all of ATen's headers (g++ -E, ~0.2 s) in every
    process to name it. A layer's build notes the name it got for each command line (`known/<key>`): a run on the
    layer uses it when the header and its .gch are there, and notes (in its own upper folder) what it computes."""
    import functools
    import hashlib
    import re

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


def _known_isa_loads(cache: str, loaded: list[str]) -> None:
    """Inductor spawns a process to dlopen each ISA probe's library (~0.06 s each, six here) before trusting it;
    the trusted layer's build did exactly that with these files, which this run finds in its cache folder."""
    from torch._inductor import cpu_vec_isa

    known = {os.path.normpath(os.path.join(os.path.abspath(cache), rel)) for rel in loaded}
    probe = cpu_vec_isa.VecISA._probe_load

    def probe_unless_known(self, output_path: str) -> bool:
        return os.path.normpath(output_path) in known or probe(self, output_path)

    cpu_vec_isa.VecISA._probe_load = probe_unless_known


def _follow_env(config, name: str, env_name: str) -> None:
    """On when `env_name` is "1", else off. torch read the variable when the worker imported it, and a value
    forced by the environment beats any assignment: this run's environment replaces it."""
    on = os.environ.get(env_name) == "1"
    entry = getattr(config, "_config", {}).get(name)
    if entry is not None and hasattr(entry, "env_value_force"):
        entry.env_value_force = on
    setattr(config, name, on)
    if getattr(config, name) is not on:
        raise RuntimeError(f"could not set {config.__name__}.{name} to {on}")


def _nonce(job) -> str:
    return job.get("nonce", "") if isinstance(job, dict) else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run one job read from stdin (inside the sandbox).")
    parser.add_argument("--result-fd", type=int, required=True)
    parser.add_argument("--scratch", type=Path, required=True)
    parser.add_argument(PREPARE_FLAG, action="store_true", help="prepare (torch, CUDA, Triton), say so, then wait")
    args = parser.parse_args(argv)
    lines = Lines(os.dup(0))
    if args.prepare:
        prepare_fresh()
        os.write(args.result_fd, READY_LINE)
        apply_limits(lines.readline() or b"")  # the run's limits, before its job
    first = lines.readline() or b"{}"
    run_job(first.decode("utf-8", "replace"), args.result_fd, args.scratch, stdin=lines)
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Not sys.exit: the interpreter's teardown with torch and Dynamo loaded takes ~0.75 s, and the run is over
    # once the result is written (the sandbox removes the scratch folder and kills what is left).
    os._exit(status)
