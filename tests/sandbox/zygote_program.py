"""A program for the zygote's tests: the judge's own (`judge.child`), with a zygote that starts CUDA as a broken one
would, so that the CUDA rule's guards can be seen to hold on a machine without CUDA.

`ZYGOTE_TEST_CUDA` (the program's environment) says when `torch.cuda.is_initialized()` turns true in the zygote:
"at-start" (while it prepares) or "after-ready" (once it said ready, before its first fork); unset, never.
"available": a machine where CUDA is available and asking for its state starts it (as Dynamo's compile does by
saving the CUDA RNG state): the zygote's preparation must never ask. `ZYGOTE_TEST_THREAD`: the preparation leaves
a thread running. `ZYGOTE_TEST_LIGHT`: the zygote imports torch and prepares nothing more (the judge's preparation
costs ~8 CPU-s), for the tests of a refusal, whose subject is the guard, not what the zygote prepared.
"""

from __future__ import annotations

import os

from judge.child import (  # noqa: F401 - the program's interface
    main as judge_main,
    prepare_fresh,
    prepare_worker,
    prepare_zygote as prepare_judge_zygote,
    run_job,
)


def main(argv: list[str] | None = None) -> int:
    """The judge's main; with `ZYGOTE_TEST_MARK` set, preparing leaves a file named after this process in its
    Inductor cache folder first (as a GPU process's preparation leaves its compiled warm-up kernel there)."""
    if os.environ.get("ZYGOTE_TEST_MARK"):
        cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
        os.makedirs(cache, exist_ok=True)
        with open(os.path.join(cache, f"prepared-by-{os.getpid()}"), "w") as fh:
            fh.write("trusted preparation")
    return judge_main(argv)


def prepare_zygote() -> None:
    import torch

    when = os.environ.get("ZYGOTE_TEST_CUDA")
    if when == "available":
        started: list[str] = []

        def get_rng_state(device="cuda"):
            started.append("get_rng_state")
            raise RuntimeError("CUDA started by asking for its RNG state")

        torch.cuda.is_available = lambda: True
        torch.cuda.get_rng_state = get_rng_state
        torch.cuda.is_initialized = lambda: bool(started)
    if not os.environ.get("ZYGOTE_TEST_LIGHT"):
        prepare_judge_zygote()
    if os.environ.get("ZYGOTE_TEST_THREAD"):  # a thread the preparation leaves running, as a driver's would
        import threading

        threading.Thread(target=threading.Event().wait, name="cuda-like", daemon=True).start()
    if when == "at-start":
        torch.cuda.is_initialized = lambda: True
    elif when == "after-ready":
        asked = []

        def initialized_after_the_ready_check() -> bool:
            asked.append(1)
            return len(asked) > 1

        torch.cuda.is_initialized = initialized_after_the_ready_check


if __name__ == "__main__":  # a fresh process of this program (where the zygote is refused)
    import sys

    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
