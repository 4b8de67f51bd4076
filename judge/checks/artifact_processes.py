"""The build process of the exercises on compile artifacts (compile-cache-artifacts, aot-compile-artifact): a
learner's function builds bytes in a fresh process, and the bytes are loaded on the trusted side.

`build_and_serve` (the name the exercises' public modules keep) runs in the runner, beside the learner's code. It
runs SCRIPT in a process that has imported torch and compiled nothing: the one the runner forked before the
learner's file was imported where the exercise sets `build_process` (judge/shared/prepared_process.py, without the
~3 CPU-s of a new interpreter's imports), else a new interpreter. That "fresh process" forks a "build" process that
imports the learner's file and calls `<entry>(fn, example())`, keeping the bytes and noting any global setting
(compiler config, grad mode, threads, ...) left changed (judge/shared/tamper.py); the fresh process watches it (its
time, its death, what it left running). A fork made before any compile is as fresh; the build has its own empty
TORCHINDUCTOR_CACHE_DIR (but for the CPU-feature probes Inductor compiles before any kernel) and the FX-graph and
AOTAutograd caches on; it finds the runner's precompiled headers, which torch keeps outside any cache folder.
`build_form` is the verifier's check of what comes back.

The bytes come back to the verifier, which has them loaded outside the runner: `load_artifact` sends them to the
trusted side, which loads them in a sandboxed run of its own where no learner file is imported
(judge/parent/loading.py, judge/loader_side/loader.py) and calls the loaded function on the verifier's inputs
(aot-compile-artifact: `kind="aot"`), or loads them as compile-cache artifacts into an empty Inductor cache and
compiles and calls the grader's `fn` (compile-cache-artifacts: `kind="cache"`).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch

from judge.reports.i18n import T
from judge.shared import prepared_process
from judge.shared.isa_probes import ISA_UNDECIDED, SEEDED_ENV, seed_isa_probes

TIMEOUT_S = 180  # per process: a cold Inductor compile plus importing torch, on a busy machine
FRESH_TIMEOUT_S = 2 * TIMEOUT_S + 30  # the fresh process: its own start and the build it watches
MAX_ARTIFACT_BYTES = 2 * 1024 * 1024  # what `load_artifact` sends to be loaded (an aot_eager artifact is ~20 KB,
# compile-cache-artifacts' reference bytes ~160 KB)

ENV = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "1", "TORCHINDUCTOR_AUTOGRAD_CACHE": "1", "TORCHINDUCTOR_COMPILE_THREADS": "1",
       "OMP_NUM_THREADS": "1", **ISA_UNDECIDED}

# The fresh process, and the build forked from it.
SCRIPT = '''
import importlib.util, json, os, select, signal, sys, traceback
learner, entry, fn_dir, art_path, result_path, judge_dir, build_cache, timeout, headers = sys.argv[1:10]
sys.path.insert(0, fn_dir)
import torch
import torch._dynamo, torch._inductor.compile_fx  # imported before the fork, once; nothing is compiled here
from torch._inductor import codecache  # its headers where they are linked, as judge.shared.torch_patches.header_dir_in
codecache._HEADER_DIR, codecache._HEADER_LOCK_DIR = headers, os.path.join(headers, "locks")  # (no judge needed here)
from grader_fn import example, fn
try:
    sys.path.append(judge_dir)
    from judge.shared.tamper import Snapshot
except ImportError:  # a sandbox whose fresh processes cannot import the judge: nothing to compare with
    Snapshot = None


def report(found):
    with open(result_path + ".new", "w") as f:
        json.dump(found, f)
    os.replace(result_path + ".new", result_path)


def build():
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = build_cache
    try:  # the ISA probe libraries copied into the build's cache load as the originals did: no process to try each
        from judge.shared.isa_probes import SEEDED_ENV
        from judge.shared.torch_patches import trust_known_isa_loads
        trust_known_isa_loads(build_cache, list(filter(None, os.environ.get(SEEDED_ENV, "").split(","))))
    except ImportError:
        pass
    result = {}
    try:
        before = Snapshot() if Snapshot else None  # the process's global settings before the learner's file runs
        spec = importlib.util.spec_from_file_location("submission", learner)
        module = importlib.util.module_from_spec(spec)
        sys.modules["submission"] = module
        spec.loader.exec_module(module)
        data = getattr(module, entry)(fn, example())
        if before is not None:
            result["changed"] = [change.split(" (process-wide state")[0] for change in before.changes()]
        result["type"] = type(data).__name__
        if isinstance(data, (bytes, bytearray)):
            result["size"] = len(data)
            with open(art_path, "wb") as f:
                f.write(bytes(data))
    except BaseException:
        result["error"] = traceback.format_exc()[-4000:]
    return result


def stderr_tail(path):
    try:
        with open(path, errors="replace") as f:
            return "\\n".join(f.read().strip().splitlines()[-15:])[-2000:]
    except OSError:
        return ""


build_result = result_path + ".build"
pid = os.fork()
if pid == 0:  # the build process: its own process group, its stderr kept for a death's report
    os.setpgid(0, 0)
    err = os.open(build_result + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(err, 2)
    with open(build_result, "w") as f:
        json.dump(build(), f)
    os._exit(0)  # the interpreter's teardown with torch loaded takes ~0.75 s; the result is written
try:
    ended = bool(select.select([os.pidfd_open(pid)], [], [], float(timeout))[0])
except (AttributeError, OSError):  # no pidfd here: the run's own time limit still ends a build that hangs
    ended = True
if not ended:
    os.killpg(pid, signal.SIGKILL)
    built = {"error": f"the build process did not finish in {timeout} s"}
    os.waitpid(pid, 0)
else:
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    try:
        with open(build_result) as f:
            built = json.load(f)
    except (OSError, ValueError):
        built = {"error": f"{stderr_tail(build_result + '.err')}\\nthe build process died (exit code {status}) "
                          "before reporting a result".strip()}
try:
    os.killpg(pid, signal.SIGKILL)  # whatever the learner's code left running in the build's group
except ProcessLookupError:
    pass
report({"build": built})
os._exit(0)
'''


def build_and_serve(learner_fn, *, entry: str, grader_fn: str) -> dict:
    """{"build": {type, size, artifacts, changed | error}}. `learner_fn`: the learner's entry point, named `entry` in
    its file (the build process imports that file and calls it); `grader_fn`: the source of the module defining `fn`
    and `example`. The bytes come back as `build["artifacts"]` (a uint8 tensor), for the verifier to read as data."""
    from judge.checks.failures import CheckFailure
    from judge.checks.fresh_process import run_python
    from judge.compiler.locations import to_display_names
    from judge.shared.paths import PROJECT_ROOT

    learner = sys.modules[learner_fn.__module__].__file__
    judge_dir = str(PROJECT_ROOT)  # so that the build process can import judge.shared.tamper
    root = Path(tempfile.mkdtemp(prefix="artifact-exercise-"))
    try:
        (root / "grader_fn.py").write_text(grader_fn, encoding="utf-8")
        seeded = seed_isa_probes(root / "cache-build")
        link_precompiled_headers(root / "headers")
        args = [learner, entry, str(root), str(root / "artifact.bin"), str(root / "fresh.json"), judge_dir,
                str(root / "cache-build"), str(TIMEOUT_S), str(root / "headers")]
        env = {**ENV, "TORCHINDUCTOR_CACHE_DIR": str(root / "cache-fresh"), SEEDED_ENV: ",".join(seeded)}
        try:  # the fresh process has an empty cache of its own too (it compiles nothing)
            prepared = prepared_process.take()  # forked by the runner before the learner's file was imported
            found = _run_prepared(prepared, args, env, root) if prepared is not None else None
            if found is None:
                found = run_python(SCRIPT, args, env=env, result_file=root / "fresh.json", timeout=FRESH_TIMEOUT_S,
                                   cwd=root)
        except CheckFailure as exc:  # it hung (what it reported before, if anything), or died before reporting
            detail = "\n".join(d.message for d in exc.diagnostics if getattr(d, "message", ""))
            found = _reported(root / "fresh.json") or {"build": {"error": f"{detail}\n{exc}".strip()}}
        build = found["build"]
        if "error" in build:  # the learner's traceback, naming their file as they know it
            build["error"] = to_display_names(str(build["error"]))
        if build.get("size") and (root / "artifact.bin").is_file():
            build["artifacts"] = torch.frombuffer(bytearray((root / "artifact.bin").read_bytes()), dtype=torch.uint8)
        return {"build": build}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run_prepared(prepared, args: list[str], env: dict[str, str], root: Path) -> dict | None:
    """SCRIPT in the runner's prepared process, as `run_python` runs it in a new interpreter; None where that process
    is gone."""
    from judge.checks.fresh_process import did_not_finish, reported

    try:
        ran = prepared_process.run(prepared, SCRIPT, args, env, root, FRESH_TIMEOUT_S)
    except TimeoutError:
        raise did_not_finish(FRESH_TIMEOUT_S) from None
    return None if ran is None else reported(root / "fresh.json", *ran)


def link_precompiled_headers(folder: Path) -> None:
    """A folder of links to the precompiled headers this process's Inductor has (a trusted layer's, in a sandbox's
    run), for the fresh process: torch keeps them outside any cache folder, as global and never part of a compiled
    graph or its cache entries, and building one costs ~5 CPU-s of g++. A header the fresh process builds itself
    lands in the folder, not among the ones linked."""
    from judge.shared import torch_patches

    folder.mkdir(parents=True, exist_ok=True)
    headers = torch_patches.header_dir()
    try:
        names = os.listdir(headers)
    except OSError:
        return
    for name in names:
        if name.endswith((".h", ".h.gch")):
            os.symlink(os.path.join(headers, name), folder / name)


def _reported(path: Path) -> dict | None:
    """What the fresh process reported before it was killed (the build's result, once it had one)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def build_form(report) -> dict:
    """The build of what `build_and_serve` returned through the runner (anything else there is not read), or
    Protocol where it is not of its form (the verifier's side: the runner is not trusted)."""
    from judge import remote

    build = report.get("build") if isinstance(report, dict) else None
    if not isinstance(build, dict):
        raise remote.Protocol(T("the runner's report on the build process is malformed"))
    changed = build.get("changed", [])
    if not isinstance(changed, list) or not all(isinstance(c, str) for c in changed):
        raise remote.Protocol(T("the build process's list of changed settings is malformed"))
    return build


def assert_built_bytes(build: dict, *, entry: str, scoped: str, returns: T) -> None:
    """The build's failures that every such exercise has, in this order: the learner's exception (RUNTIME_ERROR at
    their line), a global setting left changed (FORBIDDEN; `scoped`: the block-scoped switch to suggest, as code),
    something other than bytes returned (WRONG_ANSWER; `returns`: what the bytes must be)."""
    from judge.checks.failures import Forbidden, WrongAnswer
    from judge.checks.fresh_process import learner_error

    if "error" in build:
        raise learner_error(T.same(f"`{entry}(fn, example)`"), str(build["error"]))
    if build.get("changed"):
        raise Forbidden(T("`{entry}` left global settings changed in the build process: {changes}. The contract "
                          "forbids it: such a setting changes every later compile of that process; if you need one, "
                          "switch it for a block only (a `with` block, e.g. {scoped}).", entry=entry, scoped=scoped,
                          changes=T.same(", ".join(f"`{c}`" for c in build["changed"][:5]))))
    if build.get("type") not in ("bytes", "bytearray"):
        raise WrongAnswer(T("`{entry}` must return `bytes` ({what}); it returned `{type}`", entry=entry, what=returns,
                            type=str(build.get("type"))))


def artifact_bytes(build: dict) -> bytes:
    """The bytes that came back from the build (`build["artifacts"]`, a uint8 tensor), checked for their form and
    size (the verifier's side: the runner is not trusted)."""
    from judge import remote
    from judge.checks.failures import WrongAnswer

    shipped = build.get("artifacts")
    if not isinstance(shipped, torch.Tensor) or shipped.dtype != torch.uint8 or shipped.dim() != 1:
        raise remote.Protocol(T("the bytes of the build did not come back from your code's process"))
    if shipped.numel() > MAX_ARTIFACT_BYTES:
        raise WrongAnswer(T("the bytes you returned are larger than the judge loads ({size} > {limit} bytes)",
                            size=shipped.numel(), limit=MAX_ARTIFACT_BYTES))
    return shipped.contiguous().numpy().tobytes()


def load_artifact(data: bytes, inputs: list[torch.Tensor], *, grader_fn: str, kind: str = "aot") -> dict:
    """Have the trusted side load `data` in a sandboxed run of its own (no learner file there; `grader_fn` importable
    as `grader_fn`, the module the artifact's `fn` lives in) and call the function on each of `inputs`. `kind`
    (judge.shared.jobs.LoaderJob): "aot", `torch.compiler.load_compiled_function` and the loaded function; "cache",
    `torch.compiler.load_cache_artifacts` into an empty Inductor cache, then `torch.compile(fn)`. {"load_error"} or
    {"outputs": [tensor, ...], "counters": {"frames", "stats"} ("aot") or {"inductor", "aot_autograd"} ("cache"),
    "changed": [...], and "call_error" where a call failed}. A loader that ended without a report fails the check
    (TIME_LIMIT, MEMORY_LIMIT, or WRONG_ANSWER: your artifact's code ended that process)."""
    from judge import remote
    from judge.checks.failures import CheckFailure
    from judge.reports.report import Verdict
    from judge.shared import wire
    from judge.shared.protocol import RunnerEnd

    answer = remote.current().runner.load_artifact(base64.b64encode(data).decode("ascii"),
                                                   [wire.encode_tensor(x) for x in inputs], {"grader_fn": grader_fn},
                                                   kind=kind)
    report = answer.get("report")
    if report is None:
        end = answer.get("end") if isinstance(answer.get("end"), dict) else {}
        cause = RunnerEnd.of(end.get("cause"))
        reason = T.same(str(end.get("reason", ""))[:300])
        if cause is RunnerEnd.TIME or cause is RunnerEnd.SILENT:
            raise CheckFailure(T("loading your artifact in a fresh process ran out of time ({reason})",
                                 reason=reason), verdict=Verdict.TIME_LIMIT)
        if cause is RunnerEnd.MEMORY:
            raise CheckFailure(T("loading your artifact in a fresh process ran out of memory ({reason})",
                                 reason=reason), verdict=Verdict.MEMORY_LIMIT)
        if cause is RunnerEnd.START or cause is RunnerEnd.PROTOCOL:
            raise RuntimeError(f"the judge could not load the artifact: {end.get('reason')}")  # the judge's failure
        raise CheckFailure(T("the fresh process loading your artifact ended before it reported anything ({reason})",
                             reason=reason))
    return loaded_form(report, len(inputs))


def loaded_form(report, count: int) -> dict:
    """The loader's report (judge/loader_side/loader.py) with its outputs decoded, or Protocol where it is not of its
    form: the artifact's own code ran in that process, so nothing in it is trusted but its form."""
    from judge import remote
    from judge.shared import wire

    if not isinstance(report, dict):
        raise remote.Protocol(T("the report of the process loading your artifact is malformed"))
    for key in ("load_error", "call_error"):
        if key in report and not isinstance(report[key], str):
            raise remote.Protocol(T("the report of the process loading your artifact is malformed"))
    if "load_error" in report:
        return {"load_error": report["load_error"]}
    counters, changed, outputs = report.get("counters"), report.get("changed"), report.get("outputs")
    if not (isinstance(counters, dict) and all(isinstance(v, dict) and all(
            isinstance(n, int) for n in v.values()) for v in counters.values())):
        raise remote.Protocol(T("the serve process's counters are malformed"))
    if not (isinstance(changed, list) and all(isinstance(c, str) for c in changed)):
        raise remote.Protocol(T("the report of the process loading your artifact is malformed"))
    if not isinstance(outputs, list) or len(outputs) > count or ("call_error" not in report and len(outputs) != count):
        raise remote.Protocol(T("the serve process sent no output tensor"))
    try:
        decoded = [wire.decode_tensor(o) for o in outputs]
    except wire.WireError:
        raise remote.Protocol(T("the serve process sent no output tensor")) from None
    found = {"counters": counters, "changed": changed[:10], "outputs": decoded}
    if "call_error" in report:
        found["call_error"] = report["call_error"]
    return found
