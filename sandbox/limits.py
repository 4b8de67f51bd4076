"""What one run may use, and what it runs: plain data the trusted side hands to a backend.

The sandbox knows nothing of exercises: a front-end (through the grading core) says which program a
worker imports and which limits a run gets; each limit and each environment variable is declared here once.
"""

from __future__ import annotations

import os
import tempfile

from pydantic import BaseModel, ConfigDict, Field

MiB = 1024 * 1024

# The unisolated backends ("none", "local") cap memory by address space. `import torch` alone maps ~700 MiB
# of it and Inductor spawns compilers: the cap is the memory budget plus this headroom (the hardened
# backends count memory with cgroups instead).
ADDRESS_SPACE_HEADROOM_MB = 3072


def inductor_cache_dir() -> str:
    """The C++ build cache the unisolated backends share (FX-graph and AOT caches stay off per run)."""
    return os.environ.get("PRACTICE_INDUCTOR_CACHE", os.path.join(tempfile.gettempdir(), "torch-practice-inductor"))


# The wall clock is a backstop, not the limit (a loaded machine slows a run's wall clock, never its CPU time; see
# sandbox.clock): a run may spend IDLE_FACTOR x its CPU time limit neither computing nor waiting for a CPU (a sleep,
# a blocking read), OWED_IDLE_FACTOR x it so while it owes an answer (a runner that sleeps instead of answering: the
# time it waits for the other side's next request is its own), and WALL_FACTOR x it in wall time whatever it does.
IDLE_FACTOR = 3.0
OWED_IDLE_FACTOR = 1.0
WALL_FACTOR = 10.0


class Limits(BaseModel):
    """Resource limits for one run; every backend enforces them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    time_seconds: float = Field(60.0, gt=0, le=900, description=(
        "Time limit in CPU seconds of the run's processes together (its compiles included); the wall clock "
        "is a backstop (IDLE_FACTOR, OWED_IDLE_FACTOR, WALL_FACTOR)."))
    memory_mb: int = Field(2048, ge=256, le=16384, description="Memory for the run's process and its children.")
    file_size_mb: int = Field(512, ge=1, description="Largest file the run may write (Inductor needs ~256 MiB).")
    pids: int = Field(256, ge=8, description="Processes and threads at once.")
    output_kb: int = Field(256, ge=1, description="stdout + stderr kept; more is an output-limit overrun.")

    @property
    def cpu_limit(self) -> float:
        """The CPU-time limit: reaching it ends the run as the learner's TIME_LIMIT."""
        return self.time_seconds

    @property
    def idle_limit(self) -> float:
        """Wall time the run may spend neither computing nor waiting for a CPU."""
        return IDLE_FACTOR * self.time_seconds

    @property
    def owed_idle_limit(self) -> float:
        """Wall time the run may spend neither computing nor waiting for a CPU while it owes an answer."""
        return OWED_IDLE_FACTOR * self.time_seconds

    @property
    def wall_limit(self) -> float:
        """The wall clock's last word, whatever the run did."""
        return WALL_FACTOR * self.time_seconds

    def scaled(self, factor: float, extra_seconds: float = 0.0) -> Limits:
        """The same limits with more time (for a run that waits on another one)."""
        return self.model_copy(update={"time_seconds": min(900.0, self.time_seconds * factor + extra_seconds)})


# The environment every run starts from, whatever the backend (a backend adds PATH/HOME/TMPDIR of its own).
BASE_ENV = {
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    # Compile caches whose entries are pickles stay off, unless the run's cache folder is its private overlay of
    # a trusted layer (sandbox.compile_cache turns them on there): nothing a run writes is loaded by another.
    "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
    "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
    "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_COMPILE_THREADS": "1",
    # Runs load only the plugins they name; autoloading every installed pytest plugin costs ~0.3 s.
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
}


class Program(BaseModel):
    """What a run executes: a module the worker imports by name (the sandbox never imports it itself).

    The module provides `prepare_worker()` (warm-up before forking), `run_job(job_json, result_fd, scratch)`
    (one run in a forked child) and a `main()` that `python -m <module> --result-fd N --scratch DIR` calls
    with the job as the first line of stdin.
    """

    model_config = ConfigDict(frozen=True)

    module: str = Field(description="Importable module name, e.g. 'judge.child'.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment for every run.")

    def environment(self) -> dict[str, str]:
        return {**BASE_ENV, **self.env}
