"""Artifacts loaded for the trusted side (judge/parent/loading.py, judge/loader_side/loader.py): the verifier's
request becomes a sandboxed run of its own, in its own pool, whose job holds the bytes and no learner file; its one
report (or how it ended without one) goes back to the verifier; the verifier's stdin stays open while a load runs."""

import base64
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

from judge.loader_side import loader
from judge.parent.loading import MAX_LOADS, POOL, Loads
from judge.shared import protocol, wire
from judge.shared.jobs import LoaderJob
from judge.shared.paths import EXERCISES_DIR, PROJECT_ROOT
from judge.shared.protocol import LoaderSays, RunnerEnd, TrustedSays, VerifierSays
from sandbox.base import Inbox, RunOutcome, Sandbox
from sandbox.limits import Limits

REPORT = {"outputs": [], "counters": {"frames": {}, "stats": {}}, "changed": []}


class LoaderSandbox(Sandbox):
    """Records each run; says `said` on its result channel, then ends with `outcome`."""

    name = "loader-fake"

    def __init__(self, said=(), outcome=None, gate: threading.Event | None = None):
        self.said, self.outcome, self.gate, self.runs = list(said), outcome or RunOutcome(exit_code=0), gate, []

    def run(self, job_json, limits, on_message=None, *, inbox=None, pool="default") -> RunOutcome:
        self.runs.append((json.loads(job_json), pool))
        if self.gate is not None:
            self.gate.wait(10)
        for message in self.said:
            on_message(message)
        return self.outcome


class Recorder(Inbox):
    def __init__(self):
        super().__init__()
        self.sent: list[dict] = []

    def send(self, message: dict) -> None:
        if not self.closed.is_set():
            self.sent.append(message)


def load_request(ident=1, **fields) -> dict:
    return {"nonce": "n", **protocol.message(VerifierSays.LOAD_ARTIFACT, id=ident, artifact="AAEC",
                                             inputs=[wire.encode_tensor(torch.ones(2))],
                                             modules={"grader_fn": "def fn(x):\n    return x\n"}), **fields}


def test_a_load_is_a_run_of_its_own_pool_with_the_bytes_and_no_learner_file():
    sandbox, inbox = LoaderSandbox(said=[protocol.message(LoaderSays.REPORT, **REPORT), {"type": "loader_report"}]), \
        Recorder()
    loads = Loads(sandbox, Limits(time_seconds=5, memory_mb=512), inbox)
    loads.ask(load_request())
    loads.join()
    [(job, pool)] = sandbox.runs
    assert pool == POOL and job["role"] == "loader" and job["artifact"] == "AAEC"
    assert "source" not in job and "public" not in job  # the bytes, the inputs, the grader's modules: nothing else
    [answer] = inbox.sent
    assert protocol.kind_of(answer, TrustedSays) is TrustedSays.ARTIFACT_LOADED
    assert answer["id"] == 1 and answer["report"] == REPORT and answer["end"] is None  # the first report only


@pytest.mark.parametrize(("outcome", "cause"), [
    (RunOutcome(exit_code=0), RunnerEnd.EXIT), (RunOutcome(timed_out=True), RunnerEnd.TIME),
    (RunOutcome(memory_exceeded=True), RunnerEnd.MEMORY), (RunOutcome(signal=9), RunnerEnd.SIGNAL)])
def test_a_loader_that_ends_without_a_report_is_told_with_its_end(outcome, cause):
    inbox = Recorder()
    loads = Loads(LoaderSandbox(said=[{"type": "internal_error", "message": "x"}], outcome=outcome), Limits(), inbox)
    loads.ask(load_request())
    loads.join()
    [answer] = inbox.sent
    assert answer["report"] is None and RunnerEnd.of(answer["end"]["cause"]) is cause


def test_a_malformed_request_or_one_too_many_runs_nothing():
    sandbox, inbox = LoaderSandbox(said=[protocol.message(LoaderSays.REPORT, **REPORT)]), Recorder()
    loads = Loads(sandbox, Limits(), inbox)
    loads.ask(load_request(artifact=7))  # not the bytes as text
    for ident in range(2, MAX_LOADS + 2):
        loads.ask(load_request(ident))
    loads.join()
    assert len(sandbox.runs) == MAX_LOADS - 1  # the malformed request counted among the loads asked for
    refused = [a for a in inbox.sent if a["report"] is None]
    assert len(refused) == 2 and all(RunnerEnd.of(a["end"]["cause"]) is RunnerEnd.PROTOCOL for a in refused)


def test_the_verifiers_stdin_stays_open_until_the_load_that_outlived_the_runner_answers():
    gate, inbox = threading.Event(), Recorder()
    loads = Loads(LoaderSandbox(said=[protocol.message(LoaderSays.REPORT, **REPORT)], gate=gate), Limits(), inbox)
    loads.ask(load_request())
    loads.runner_ended()
    assert not inbox.closed.is_set()
    gate.set()
    loads.join()
    assert inbox.closed.is_set() and inbox.sent[0]["report"] == REPORT


def test_the_kind_of_the_bytes_travels_into_the_job_and_an_unknown_kind_is_refused():
    sandbox, inbox = LoaderSandbox(said=[protocol.message(LoaderSays.REPORT, **REPORT)]), Recorder()
    loads = Loads(sandbox, Limits(), inbox)
    loads.ask(load_request(1, artifact_kind="cache"))
    loads.ask(load_request(2))  # none said: the aot_compile kind, as before there were two
    loads.ask(load_request(3, artifact_kind="pickle"))
    loads.join()
    assert sorted(job["kind"] for job, _ in sandbox.runs) == ["aot", "cache"]
    [refused] = [a for a in inbox.sent if a["report"] is None]
    assert refused["id"] == 3 and RunnerEnd.of(refused["end"]["cause"]) is RunnerEnd.PROTOCOL


# A loader as a warm worker's forked run has it (the sandbox's environment, the judge's preparation), in a process of
# its own: the "cache" kind changes the process's Inductor cache folder and flags.
LOADER = """
import json, os, sys
from pathlib import Path
from judge import child
child.prepare_worker(warm_compile=False)
child.configure_compile_caches()
from judge.loader_side import loader
from judge.shared.jobs import LoaderJob
job = LoaderJob.model_validate_json(Path(sys.argv[1]).read_text())
found = loader.load_and_call(job, Path(sys.argv[2]))
Path(sys.argv[3]).write_text(json.dumps(found))
os._exit(0)
"""

BUILD = """
import os, sys, torch
exec(open(sys.argv[1]).read())
shape = [int(n) for n in sys.argv[3].split(",")]
torch.compile(fn)(torch.randn(*shape))
open(sys.argv[2], "wb").write(torch.compiler.save_cache_artifacts()[0])
os._exit(0)
"""


def known_isa_probes() -> dict[str, str]:
    """The ISA probe libraries known to load from the shared C++ build cache, as a sandbox tells its runs
    (PRACTICE_VEC_ISA_LOADED): the fresh processes here start from copies of them, as the judge's do, instead of
    compiling their own (~3 CPU-s a process)."""
    from judge.parent.vec_isa import skip_check_env
    from sandbox.compile_cache import ISA_LOADED_ENV
    from sandbox.limits import inductor_cache_dir

    loaded = skip_check_env().get(ISA_LOADED_ENV)
    return {ISA_LOADED_ENV: loaded, "TORCHINDUCTOR_CACHE_DIR": inductor_cache_dir()} if loaded else {}


def run_loader(job: LoaderJob, tmp_path, cache_dir) -> dict:
    """LOADER in a new interpreter whose run's cache is `cache_dir` (with the probe libraries copied into it by
    `build_cache_artifacts`)."""
    from sandbox.compile_cache import ISA_LOADED_ENV
    from sandbox.limits import BASE_ENV

    (tmp_path / "job.json").write_text(job.model_dump_json())
    (tmp_path / "scratch").mkdir(exist_ok=True)
    env = {**os.environ, **BASE_ENV, "PYTHONPATH": str(PROJECT_ROOT), "TORCHINDUCTOR_CACHE_DIR": str(cache_dir)}
    if ISA_LOADED_ENV in (probes := known_isa_probes()):
        env[ISA_LOADED_ENV] = probes[ISA_LOADED_ENV]
    subprocess.run([sys.executable, "-c", LOADER, str(tmp_path / "job.json"), str(tmp_path / "scratch"),
                    str(tmp_path / "found.json")], env=env, check=True, timeout=300, capture_output=True)
    return json.loads((tmp_path / "found.json").read_text())


def build_cache_artifacts(tmp_path, grader_fn: str, builds: list[tuple[str, object]]) -> list[bytes]:
    """save_cache_artifacts() of fresh processes, as the runner's build process is set up, each compiling fn on a
    tensor of its `shape` with its own Inductor cache folder (kept): [(shape, cache_dir)], run at once."""
    from judge.checks.artifact_processes import ENV
    from judge.shared.isa_probes import seed_isa_probes

    (tmp_path / "grader_fn.py").write_text(grader_fn)
    probes = known_isa_probes()
    procs = []
    for n, (shape, cache_dir) in enumerate(builds):
        with pytest.MonkeyPatch.context() as patch:  # copies from where the sandbox would say they loaded
            for name, value in probes.items():
                patch.setenv(name, value)
            seed_isa_probes(Path(cache_dir))
        env = {**os.environ, **ENV, "TORCHINDUCTOR_CACHE_DIR": str(cache_dir)}
        procs.append(subprocess.Popen([sys.executable, "-c", BUILD, str(tmp_path / "grader_fn.py"),
                                       str(tmp_path / f"art-{n}.bin"), shape], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()[-2000:]
    return [(tmp_path / f"art-{n}.bin").read_bytes() for n in range(len(builds))]


def test_bytes_that_are_no_cache_artifacts_load_no_entry(tmp_path):
    job = LoaderJob(kind="cache", artifact=base64.b64encode(b"\x80\x04no artifacts at all.").decode(),
                    inputs=[wire.encode_tensor(torch.ones(4))], modules={"grader_fn": "def fn(x):\n    return x\n"})
    found = run_loader(job, tmp_path, tmp_path / "run-cache")
    assert set(found) == {"load_error"}


@pytest.mark.slow
def test_cache_artifacts_hit_in_a_cache_of_their_own_and_only_from_the_bytes(tmp_path):
    """The "cache" kind: the FX-graph entry the build process saved is a hit in the loader (the keys agree between
    a fresh process and a warm worker's run), and the loader's Inductor cache is empty but for the bytes: bytes of
    another shape miss, though the run's own cache folder holds the very entry fn's compile looks up."""
    grader_fn = exercise_public("compile-cache-artifacts").GRADER_FN
    run_cache = tmp_path / "run-cache"
    # the run's cache now holds fn's entry for [16, 32]; the other bytes hold one for [8, 32]
    data, other = build_cache_artifacts(tmp_path, grader_fn, [("16,32", run_cache), ("8,32", tmp_path / "other-cache")])
    xs = [torch.randn(16, 32), torch.randn(16, 32)]
    job = LoaderJob(kind="cache", artifact=base64.b64encode(data).decode(), inputs=[wire.encode_tensor(x) for x in xs],
                    modules={"grader_fn": grader_fn})
    found = run_loader(job, tmp_path, run_cache)
    assert found["counters"]["inductor"].get("fxgraph_cache_hit") == 1, found["counters"]
    assert not found["counters"]["inductor"].get("fxgraph_cache_miss") and found["changed"] == []
    namespace: dict = {}
    exec(grader_fn, namespace)
    for x, out in zip(xs, found["outputs"], strict=True):
        torch.testing.assert_close(wire.decode_tensor(out), namespace["fn"](x), rtol=1e-4, atol=1e-4)
    found = run_loader(job.model_copy(update={"artifact": base64.b64encode(other).decode()}), tmp_path, run_cache)
    assert found["counters"]["inductor"].get("fxgraph_cache_miss") == 1, found["counters"]
    assert not found["counters"]["inductor"].get("fxgraph_cache_hit")


def exercise_public(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"public_{name.replace('-', '_')}",
                                                  EXERCISES_DIR / name / "public.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bytes_that_are_no_artifact_do_not_load(tmp_path):
    job = LoaderJob(artifact=base64.b64encode(b"\x80\x04no artifact at all.").decode(),
                    inputs=[wire.encode_tensor(torch.ones(16, 32))])
    found = loader.load_and_call(job, tmp_path)
    assert set(found) == {"load_error"} and "Unpickling" in found["load_error"]


# The two forged files that were ACCEPTED while the runner's report decided (both exercises' wrong/forged_and_blind.py)
# are pinned wrong solutions: tests/test_exercises.py proves their verdict and failing check on every run.
