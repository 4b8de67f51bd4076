"""The program the sandbox runs (`sandbox.limits.Program("judge.child")`): one module, three roles.

`python -m judge.child --result-fd N --scratch DIR` reads its job as the first line of stdin; a warm
worker calls `prepare_worker()` once, then `run_job(job_json, result_fd, scratch)` in a forked child.
The job's `role` says which side this process is: the runner (imports the learner's code and answers
requests arriving on stdin), the verifier (runs the hidden tests, whose requests leave on the result
channel and whose answers arrive on stdin) or a loader (loads an artifact's bytes the verifier sent through the
trusted side, judge/loader_side/loader.py). stdout and stderr are the run's output.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path

from judge.shared import torch_patches
from judge.shared.protocol import VerifierSays, message
from sandbox.jsonlines import Lines
from sandbox.limits import Program
from sandbox.prepared_process import PREPARE_FLAG, READY_LINE, apply_limits

PROGRAM = Program(module="judge.child")
_PREPARED: list[bool] = []  # [interpreted] once prepare_worker() ran in this process (or in the zygote it forked from)


def prepare_worker(interpreted: bool = True, warm_compile: bool = True) -> None:
    """Import torch and what every grading imports, and compile once, so that forked children start fast.
    `interpreted`: Triton's language imported to run interpreted, and no CUDA device visible (the warm pools: their
    forked children grade on the CPU only, since a GPU exercise's full grading never forks
    (judge/parent/requirements.py), and Triton decides at import whether it interprets; a CPU tier's Triton kernels
    need it so). `warm_compile=False`: imports only
    (the zygote: a Dynamo compile saves the CUDA RNG state wherever CUDA is available, which starts CUDA)."""
    _PREPARED[:] = [interpreted]
    os.environ.update(PROGRAM.environment())
    if interpreted:
        from judge.shared import tiers

        # No CUDA device either, before anything asks for one: a compile here would start CUDA (Dynamo saves the
        # CUDA RNG state wherever a device is visible), and no child forked after that could compile at all.
        os.environ.update(tiers.CPU_ENVIRONMENT)
    import importlib

    import torch

    torch.set_num_threads(1)
    from _pytest.config import default_plugins

    for name in [f"_pytest.{p}" for p in default_plugins] + [
            "pdb", "sympy.combinatorics", "judge.checks", "judge.verifier_side.plugin", "judge.verifier_side.fixtures",
            "judge.shared.loaded", "judge.shared.tamper", "judge.runner_side.runner", "judge.verifier_side.verifier",
            "judge.remote", "judge.runner_side.compiling", "judge.shared.ir",
            "judge.parent.job", "hypothesis", "sympy.tensor.tensor",
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

    if warm_compile:
        # static, then automatic dynamic shapes (a size of 1 kept static): the caches of the symbolic-shape code
        # that every grading's recompiles use (sympy's, fake tensors') are filled before forking
        compiled = torch.compile(step, backend="aot_eager", fullgraph=True)
        for shapes in (((4, 4), (4, 4)), ((3, 5), (5, 2)), ((1, 5), (5, 6))):
            compiled(*(torch.randn(shape) for shape in shapes))
        torch._dynamo.reset()
    from judge.compiler.logs import enable_artifacts_before_fork
    from judge.shared import ir

    ir.allowed_functions()
    enable_artifacts_before_fork()
    torch_patches.skip_guard_latency_probe()


def prepare_zygote() -> None:
    """The zygote's preparation (`sandbox.zygote_process`): what a prestarted process prepares before its device,
    and the modules of Inductor's GPU code generation, imported only. CUDA is never touched here: the processes
    forked from the zygote start it (`sandbox.cuda_fork`). Meanwhile `torch.cuda.is_available()` is answered from
    the device files: modules ask it at import (torch 2.11's Inductor benchmarking, `torch.utils.cpp_extension`),
    and under the zygote's NVML check it calls `nvmlInit`, which starts a driver thread that every fork would copy
    half-done (measured on an H200: the zygote then refused to say ready)."""
    import importlib

    os.environ.update(PROGRAM.environment())
    import torch

    from sandbox.fresh_process import cuda_possible

    asked = torch.cuda.is_available
    torch.cuda.is_available = lambda: cuda_possible(os.environ)
    try:
        prepare_worker(interpreted=False, warm_compile=False)  # the children's own first compile is on their device
        for name in ("torch._inductor.codegen.triton", "torch._inductor.runtime.triton_heuristics",
                     "torch._inductor.codegen.cuda_combined_scheduling", "torch._inductor.runtime.triton_helpers"):
            try:
                importlib.import_module(name)
            except ImportError:
                pass
    finally:
        torch.cuda.is_available = asked


def prepare_fresh() -> None:
    """Before the job of a prestarted process (`sandbox.prestarted`): what a warm worker prepares (unless the zygote
    this process was forked from did), and where a CUDA device is, its context, Triton and Inductor's GPU code
    generation, loaded by one tiny compile. Nothing of it stays allocated or compiled: the job starts on an empty
    device and a reset Dynamo. Triton compiles here (a CPU tier never runs in these processes: web/graders.py)."""
    from sandbox.cuda_fork import in_bad_fork

    if _PREPARED != [False]:
        prepare_worker(interpreted=False)
    if in_bad_fork():  # the CUDA rule (sandbox.cuda_fork): said before the job, never a confusing verdict
        raise RuntimeError("forked from a process that had started CUDA: CUDA cannot start here")
    import torch

    if not torch.cuda.is_available():
        return
    follow_cache_settings()  # forked from the zygote: its warm-up finds a layer's kernels as a fresh process does
    import torch._inductor.codegen.triton
    import torch._inductor.runtime.triton_heuristics

    torch.compile(lambda x: x * 2 + 1, fullgraph=True)(torch.ones(8, device="cuda"))
    torch.cuda.synchronize()
    torch._dynamo.reset()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()



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
        from judge.shared import tiers

        tiers.enter(job.get("tier"))  # before anything imports Triton in a fresh process
        if _PREPARED == [True]:  # forked from a warm pool's worker, which saw no CUDA device: neither may this run
            os.environ.update(tiers.CPU_ENVIRONMENT)
        configure_compile_caches()
        if job.get("role") == "runner":
            from judge.runner_side import runner

            runner.run(job, result_fd, scratch, iter(lines))
        elif job.get("role") == "verifier":
            from judge.shared.jobs import VerifierJob
            from judge.verifier_side import verifier

            verifier.run(VerifierJob.model_validate(job), result_fd, scratch, lines)
        elif job.get("role") == "loader":
            from judge.loader_side import loader
            from judge.shared.jobs import LoaderJob

            loader.run(LoaderJob.model_validate(job), result_fd, scratch)
        else:
            raise ValueError(f"unknown role {job.get('role')!r}")
    except BaseException as exc:  # noqa: BLE001 - the channel must say something whatever happened
        try:
            # the verifier's kind (also read from the runner, which ignores the traceback): said by either role
            data = json.dumps({"nonce": _nonce(job), **message(VerifierSays.INTERNAL_ERROR,
                               message=f"{type(exc).__name__}: {exc}"[:2000],
                               traceback=traceback.format_exc()[-4000:])}) + "\n"
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
    import torch._inductor.config as inductor_config

    follow_cache_settings()
    torch_patches.link_kernels_with_gold()
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if cache:
        torch_patches.header_dir_in(cache)
    if os.environ.get("PRACTICE_VEC_ISA_LOADED") and cache:
        torch_patches.trust_known_isa_loads(cache, os.environ["PRACTICE_VEC_ISA_LOADED"].split(","))
    if inductor_config.fx_graph_cache and cache:  # a layer's run or build
        torch_patches.remember_precompiled_headers(torch_patches.header_dir())


def follow_cache_settings() -> None:
    """The cache flags of this process's environment, which torch read at import (in a warm worker or the zygote,
    with other values): the pickle caches on or off as the sandbox set them, remote caches never."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    def flag(name: str) -> bool | None:
        return {"1": True, "0": False}.get(os.environ.get(name, ""))

    torch_patches.follow_env(inductor_config, "fx_graph_cache", "TORCHINDUCTOR_FX_GRAPH_CACHE")
    torch_patches.follow_env(functorch_config, "enable_autograd_cache", "TORCHINDUCTOR_AUTOGRAD_CACHE")
    inductor_config.fx_graph_remote_cache = False
    inductor_config.autotune_remote_cache = False
    inductor_config.bundled_autotune_remote_cache = False
    functorch_config.enable_remote_autograd_cache = False
    inductor_config.cpp.vec_isa_ok = flag("TORCHINDUCTOR_VEC_ISA_OK")


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
