"""The loader: loads an artifact's bytes in a sandboxed run of their own and calls the function they hold.

Two exercises ship bytes that are pickles: loading them runs what they hold. The verifier may not load them (that
code would run in the verifier's process), and a report of loading them from the runner is the learner's to write.
So the verifier sends the bytes to the trusted side (`VerifierSays.LOAD_ARTIFACT`), which starts this run
(judge/parent/loading.py): the judge's program on the runner's backend and limits, a scratch folder of its own, and
no learner file anywhere: the job holds the bytes, the verifier's inputs and the grader's own modules (the `fn` the
artifact may name). Here the judge's tamper snapshot is taken and Dynamo and its counters are reset before the bytes
are loaded, as the job's `kind` says:
- "aot" (aot-compile-artifact): `torch.compiler.load_compiled_function`; the loaded function is called on each input,
  and Dynamo's counters (frames traced, graphs compiled) say whether anything was compiled again;
- "cache" (compile-cache-artifacts): `torch.compiler.load_cache_artifacts` into an Inductor cache folder made empty
  for this run (with the FX-graph and AOTAutograd caches on, as in a fresh process that serves), so that a cache hit
  can only come from the loaded bytes; the grader's `fn` (module `grader_fn`) is compiled with `torch.compile` and
  called on each input, and Inductor's and AOTAutograd's cache counters say whether the compile hit the cache.
One `LoaderSays.REPORT` says what happened: a load or call error, the outputs (wire tensors), the counters, and what
the artifact left changed in the process's global settings.

What the report says is still written by a process where the artifact's own code ran (a pickle can run anything):
the verifier compares the outputs with values it computes itself, and nothing else of the learner's reaches here.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import os
import shutil
import sys
from pathlib import Path

from judge.shared.jobs import LoaderJob
from judge.shared.protocol import LoaderSays, message

MAX_ERROR = 800
MAX_CHANGES = 10
COUNTED = {"aot": ("frames", "stats"),  # Dynamo's counters: frames traced ("frames"), graphs compiled ("stats")
           "cache": ("inductor", "aot_autograd")}  # the FX-graph and AOTAutograd caches' hits and misses
NO_ENTRIES = "it found no cache entries in them"  # load_cache_artifacts read nothing (it only warns)
CACHE_FOLDER = "inductor-cache"  # the "cache" kind's Inductor cache, in the run's scratch folder, empty at first


def run(job: LoaderJob, result_fd: int, scratch: Path) -> None:
    """Load `job.artifact`, call it on `job.inputs`, and write the one report on `result_fd`."""
    found = load_and_call(job, scratch)
    data = (json.dumps(message(LoaderSays.REPORT, **found)) + "\n").encode()
    view = memoryview(data)
    while view:
        view = view[os.write(result_fd, view):]


def load_and_call(job: LoaderJob, scratch: Path) -> dict:
    """The report's fields: {"load_error"} or {"outputs", "counters", "changed", and "call_error" if a call failed}."""
    import torch
    from torch._dynamo.utils import counters

    from judge.shared import wire
    from judge.shared.tamper import Snapshot

    modules = scratch / "grader_modules"
    modules.mkdir(parents=True, exist_ok=True)
    for name, source in job.modules.items():
        if name.isidentifier():
            (modules / f"{name}.py").write_text(source, encoding="utf-8")
            sys.modules.pop(name, None)  # this job's source, whatever a module of that name was before
    sys.path.insert(0, str(modules))
    inputs = [wire.decode_tensor(obj) for obj in job.inputs]
    try:
        data = base64.b64decode(job.artifact, validate=True)
    except binascii.Error:
        return {"load_error": "the bytes did not arrive as base64"}
    torch.compiler.set_stance("default")
    torch._dynamo.reset()
    if job.kind == "cache":
        fn = _fresh_cache(scratch / CACHE_FOLDER)
    counters.clear()  # what a warm worker's own preparation counted
    snapshot = Snapshot()  # the judge's own, taken before any of the artifact's code runs
    try:
        if job.kind == "cache":
            info = torch.compiler.load_cache_artifacts(data)  # None where it could not read them
            if info is None or not any(info.artifacts.values()):
                return {"load_error": NO_ENTRIES}
            loaded = torch.compile(fn)
        else:
            loaded = torch.compiler.load_compiled_function(io.BytesIO(data))
    except BaseException as exc:  # noqa: BLE001 - whatever the bytes do is the report's
        return {"load_error": f"{type(exc).__name__}: {exc}"[:MAX_ERROR]}
    found: dict = {"outputs": []}
    for x in inputs:
        try:
            out = loaded(x)
            if not isinstance(out, torch.Tensor):
                raise TypeError(f"the loaded function returned {type(out).__name__}, not a tensor")
            found["outputs"].append(wire.encode_tensor(out.detach().clone()))
        except BaseException as exc:  # noqa: BLE001
            found["call_error"] = f"{type(exc).__name__}: {exc}"[:MAX_ERROR]
            break
    found["counters"] = {kind: {name: int(value) for name, value in counters[kind].items()}
                         for kind in COUNTED[job.kind]}
    found["changed"] = [change.split(" (process-wide state")[0] for change in snapshot.changes()[:MAX_CHANGES]]
    return found


def _fresh_cache(folder: Path):
    """Make `folder` this process's Inductor cache, empty but for the CPU-feature probes (they hold no graph), with
    the FX-graph and AOTAutograd caches on, as a fresh process serving from loaded artifacts has them (the runs of
    the sandbox have them off, or on over a trusted layer whose entries could answer a lookup); the grader's `fn`."""
    import importlib

    from judge.shared import torch_patches
    from judge.shared.fresh_settings import settings_of_a_fresh_process
    from judge.shared.isa_probes import ISA_UNDECIDED, seed_isa_probes

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    seeded = seed_isa_probes(folder)  # from the run's own cache, where the sandbox says they loaded
    torch_patches.trust_known_isa_loads(str(folder), seeded)  # copies of those: no process spawned to load each
    os.environ.update({"TORCHINDUCTOR_CACHE_DIR": str(folder), "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
                       "TORCHINDUCTOR_AUTOGRAD_CACHE": "1", **ISA_UNDECIDED})
    settings_of_a_fresh_process()  # read from the environment at import, as a fresh process does
    return importlib.import_module("grader_fn").fn
