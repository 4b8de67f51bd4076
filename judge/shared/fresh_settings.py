"""Inductor's and AOTAutograd's settings as a fresh Python process with this environment has them, in a process that
imported torch earlier with another environment (a warm worker's fork): the loader (judge/loader_side/loader.py) and
the runner's prepared build process (judge/checks/artifact_processes.py), whose FX-graph cache keys must be the ones a
fresh process looks up."""

from __future__ import annotations

import os


def settings_of_a_fresh_process() -> None:
    """Set what torch read from the environment at import as the environment now says, and forget what Inductor
    remembered of the cache folder it had."""
    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    from torch._inductor.utils import clear_caches
    from torch.utils._config_module import get_tristate_env

    from judge.shared import torch_patches

    clear_caches()
    # the flags as the environment now says, also where the environment torch was imported with forced them off
    torch_patches.follow_env(inductor_config, "fx_graph_cache", "TORCHINDUCTOR_FX_GRAPH_CACHE")
    torch_patches.follow_env(functorch_config, "enable_autograd_cache", "TORCHINDUCTOR_AUTOGRAD_CACHE")
    # Two remote-cache flags are part of the cache keys: the sandbox sets them False, a fresh process leaves them at
    # None (outside fbcode, off all the same)
    inductor_config.bundled_autotune_remote_cache = None
    functorch_config.enable_remote_autograd_cache = None
    inductor_config.cpp.vec_isa_ok = get_tristate_env("TORCHINDUCTOR_VEC_ISA_OK")
    threads = os.environ.get("OMP_NUM_THREADS", "")
    if threads.isdigit() and int(threads) > 0:
        torch.set_num_threads(int(threads))
