"""Trusted compile cache layers (sandbox/compile_cache.py, judge/parent/cache_layers.py): a run reads a layer through
its
own overlay, and nothing one submission writes there is ever seen, let alone loaded, by another one.

The bwrap tests keep one warm pair per layer configuration; a synthetic layer (a few files, no Inductor) shows
the overlay's isolation quickly, a real one (built here from trusted code) shows that a planted cache entry is
a pickle Inductor would load, yet the next grading never sees it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from judge.parent.grading import grade, make_sandbox
from judge.reports.report import Verdict
from sandbox.backends import unavailable_reason
from sandbox.base import SandboxError
from sandbox.compile_cache import CompileCache, Layer, LayerBuild, config_key, secure_root
from sandbox.limits import Limits

pytestmark = [pytest.mark.xdist_group("sandbox")]
NEEDS_BWRAP = pytest.mark.skipif(bool(unavailable_reason("bwrap")), reason=f"bwrap: {unavailable_reason('bwrap')}")
HONEST_F = "\n\ndef f(x):\n    return x + 1\n"
TRUSTED = b"trusted layer content"


def _synthetic(root: Path, name: str = "t") -> CompileCache:
    """Two complete layers of a few files (the shapes Inductor's cache has), base for the runner, full for the
    verifier, built the way real ones are: a private folder, sealed, renamed into place."""
    cache = CompileCache(root=root, pools={"runner": (Layer("base", name),), "verifier": (Layer("full", name),)})
    for (layer,) in cache.pools.values():
        build = LayerBuild(cache, layer).start()
        if build is None:
            continue
        for rel in ("ab/cabkernel.so", "ab/cabkernel.cpp", "fxgraph/xy/fkey/entry", "aotautograd/akey/entry",
                    "precompiled_headers/h.h.gch"):
            (build.dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (build.dir / rel).write_bytes(TRUSTED)
        build.commit({"vec_isa_ok": False})
    return cache


def _snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under `root` with its mode and (for files) a hash of its bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if rel.startswith(".lock-"):
            continue
        mode = oct(path.lstat().st_mode)
        found[rel] = mode if path.is_dir() else f"{mode} {hashlib.sha256(path.read_bytes()).hexdigest()}"
    return found


# ---- the parts, without a sandbox ------------------------------------------------------------------------------

def test_a_layer_counts_only_once_complete(tmp_path):
    layer = Layer("full", "k")
    cache = CompileCache(root=tmp_path / "root", pools={"verifier": (layer,)})
    build = LayerBuild(cache, layer).start()
    (build.dir / "ab").mkdir()
    (build.dir / "ab" / "x.so").write_bytes(b"x")
    assert cache.ready(layer) is None and cache.layer_for("verifier") is None  # half-built: invisible
    assert LayerBuild(cache, layer).start() is None  # one build at a time
    path = build.commit({"vec_isa_ok": True})
    found, info = cache.layer_for("verifier")
    assert found == layer and info["vec_isa_ok"] is True and path == cache.path(layer)
    assert cache.run_env(info) == {"TORCHINDUCTOR_FX_GRAPH_CACHE": "1", "TORCHINDUCTOR_AUTOGRAD_CACHE": "1",
                                   "TORCHINDUCTOR_VEC_ISA_OK": "1"}
    assert LayerBuild(cache, layer).start() is None  # complete: nothing to build
    assert oct((path / "ab" / "x.so").stat().st_mode & 0o777) == "0o644"
    assert not list(cache.root.glob(".build-*"))


def test_a_build_that_waits_for_another_uses_its_layer(tmp_path):
    """Two builders of one layer (two servers, a proof beside a server, two tests): the second waits for the lock
    and, the layer complete, builds nothing; a layer whose builder gave up is built by the one that waited."""
    cache = CompileCache(root=tmp_path / "root")
    for outcome in ("commit", "discard"):
        first = LayerBuild(cache, Layer("base", outcome)).start()
        waited: list = []
        waiter = threading.Thread(target=lambda out, layer: out.append(LayerBuild(cache, layer).start(wait=True)),
                                  args=(waited, first.layer))
        waiter.start()
        waiter.join(0.3)
        assert waiter.is_alive() and waited == []  # held by the first builder
        if outcome == "commit":
            first.commit({})
        else:
            first.discard()
        waiter.join(30)
        if outcome == "commit":
            assert waited == [None] and cache.ready(first.layer) is not None
        else:
            [second] = waited
            assert second is not None and cache.ready(first.layer) is None
            second.commit({})
            assert cache.ready(first.layer) is not None


def test_a_full_layer_links_the_base_and_adds_its_own(tmp_path):
    cache = _synthetic(tmp_path / "root")
    base, full = cache.path(cache.pools["runner"][0]), cache.path(cache.pools["verifier"][0])
    build = LayerBuild(cache, Layer("full", "other")).start(base=cache.pools["runner"][0])
    (build.dir / "cd").mkdir()
    (build.dir / "cd" / "new.so").write_bytes(b"new")
    path = build.commit({})
    assert (path / "ab" / "cabkernel.so").stat().st_ino == (base / "ab" / "cabkernel.so").stat().st_ino
    assert (path / "cd" / "new.so").exists() and not (base / "cd").exists() and full.exists()


def test_a_pool_uses_its_first_complete_layer(tmp_path):
    """While this course's layer is being built, the verifier's runs use a complete one built earlier."""
    _synthetic(tmp_path / "root", name="old")
    cache = CompileCache(root=tmp_path / "root", pools={"verifier": (Layer("full", "new"), Layer("full", "old"))})
    assert cache.layer_for("verifier")[0] == Layer("full", "old")
    LayerBuild(cache, Layer("full", "new")).start().commit({})
    assert cache.layer_for("verifier")[0] == Layer("full", "new")
    assert [layer.name for layer, _ in cache.complete("full")] == ["new", "old"]
    with pytest.raises(ValueError, match="one kind"):
        CompileCache(root=tmp_path, pools={"runner": (Layer("base", "a"), Layer("full", "b"))})


def test_a_build_of_a_dead_process_is_removed(tmp_path):
    cache = _synthetic(tmp_path / "root")
    stale = cache.root / ".build-full-x-999999999-abcdef"
    stale.mkdir()
    LayerBuild(cache, Layer("full", "y")).start().discard()
    assert not stale.exists()


@pytest.mark.parametrize("problem", ["group_writable", "other_owner"])
def test_a_root_anyone_else_could_write_is_refused(tmp_path, problem):
    root = tmp_path / "root"
    root.mkdir()
    if problem == "group_writable":
        root.chmod(0o770)
    else:
        os.chown(root, 12345, 12345)
    with pytest.raises(SandboxError, match="must be a folder owned by"):
        secure_root(root)


def test_a_run_on_a_layer_skips_what_its_build_already_learnt(tmp_path):
    cache = CompileCache(root=tmp_path)
    info = {"vec_isa_ok": True, "vec_isa_loaded": ["ab/c1.so", "cd/c2.so", "bad,name.so", 3]}
    assert cache.run_env(info)["PRACTICE_VEC_ISA_LOADED"] == "ab/c1.so,cd/c2.so"
    assert "PRACTICE_VEC_ISA_LOADED" not in cache.run_env({**info, "vec_isa_ok": False})


def test_a_run_reuses_the_header_name_its_layer_remembered(tmp_path, monkeypatch):
    """Naming a precompiled header costs a g++ -E of all of ATen per process; a name noted by an earlier process
    (the layer's build) is used while the header and its .gch exist."""
    from torch._inductor import codecache

    from judge.shared import torch_patches

    computed = []

    def compute(header, hashable_cmd_line, **options):
        computed.append(header)
        for name in ("h1.h", "h1.h.gch"):
            (tmp_path / name).write_text("x")
        return str(tmp_path / "h1.h")

    monkeypatch.setattr(codecache, "_precompile_header", compute)
    torch_patches.remember_precompiled_headers(str(tmp_path))
    first = codecache._precompile_header("a.h", "g++ i", vec_isa=object())
    assert computed == ["a.h"] and first == str(tmp_path / "h1.h")
    monkeypatch.setattr(codecache, "_precompile_header", compute)  # a later process: a fresh wrapper
    torch_patches.remember_precompiled_headers(str(tmp_path))
    assert codecache._precompile_header("a.h", "g++ i", vec_isa=object()) == first  # addresses aside, same options
    assert codecache._precompile_header("a.h", "g++ -O0 i", vec_isa=object()) == first
    assert computed == ["a.h", "a.h"]  # another command line is computed
    (tmp_path / "h1.h.gch").unlink()
    monkeypatch.setattr(codecache, "_precompile_header", compute)
    torch_patches.remember_precompiled_headers(str(tmp_path))
    codecache._precompile_header("a.h", "g++ i", vec_isa=object())
    assert computed == ["a.h", "a.h", "a.h"]  # a note whose files are gone is not trusted


def test_the_key_names_this_machine_and_torch():
    assert config_key() == config_key()
    assert len(config_key()) == 16


CACHE_SETTINGS = [  # a run's environment -> (FX-graph cache, AOTAutograd cache, vec_isa_ok) in its process
    ({}, (False, False, None)),
    ({"TORCHINDUCTOR_FX_GRAPH_CACHE": "1", "TORCHINDUCTOR_AUTOGRAD_CACHE": "1", "TORCHINDUCTOR_VEC_ISA_OK": "1"},
     (True, True, True)),
    ({"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "1"}, (False, True, None)),
]


def test_the_child_follows_the_cache_settings_of_its_run():
    """A warm worker imported torch with the caches forced off; each run forked from it follows its own
    environment (one warm process, a fork per run, as the local and hardened backends do)."""
    script = textwrap.dedent("""
        import json, os, sys
        os.environ.update({"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"})
        import torch._inductor.config as ic, torch._functorch.config as fc
        for key in ("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOGRAD_CACHE"):
            del os.environ[key]
        for env in json.loads(sys.argv[1]):
            if os.fork() == 0:
                os.environ.update(env)
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = "/nonexistent/run-cache"
                from judge.child import configure_compile_caches
                configure_compile_caches()
                import torch._inductor.codecache as cc
                print(json.dumps([ic.fx_graph_cache, fc.enable_autograd_cache, ic.cpp.vec_isa_ok,
                                  ic.fx_graph_remote_cache, fc.enable_remote_autograd_cache, cc._HEADER_DIR]),
                      flush=True)
                os._exit(0)
            os.wait()
    """)
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", script, json.dumps([env for env, _ in CACHE_SETTINGS])],
                         capture_output=True, text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                         timeout=120)
    runs = [json.loads(line) for line in out.stdout.strip().splitlines()]
    assert len(runs) == len(CACHE_SETTINGS), out.stderr[-2000:]
    for (env, expected), (fx, aot, vec, fx_remote, aot_remote, header_dir) in zip(CACHE_SETTINGS, runs):
        assert (fx, aot, vec) == expected, env
        assert fx_remote is False and aot_remote is False
        assert header_dir == "/nonexistent/run-cache/precompiled_headers"


# ---- through the hardened backends ------------------------------------------------------------------------------

@pytest.fixture(scope="module", params=["bwrap", "docker"])
def synthetic(request, tmp_path_factory):
    """A sandbox whose runner sees a synthetic base layer (one warm worker per pool), per hardened backend."""
    reason = unavailable_reason(request.param)
    if reason and os.environ.get("PRACTICE_REQUIRE_SANDBOXES") == "1":
        pytest.fail(f"{request.param} unavailable although PRACTICE_REQUIRE_SANDBOXES=1: {reason}")
    if reason:
        pytest.skip(f"{request.param} unavailable: {reason}")
    root = tmp_path_factory.mktemp("layers") / "root"
    cache = _synthetic(root)
    sandbox = make_sandbox(request.param, compile_cache=cache, pool_size=1)
    yield cache, sandbox
    sandbox.close()


PLANT = """
import os
cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
print("CACHES", os.environ.get("TORCHINDUCTOR_FX_GRAPH_CACHE"), sorted(os.listdir(cache)))
for dirpath, dirs, files in os.walk(cache):
    for name in files:
        path = os.path.join(dirpath, name)
        for how in ("overwrite", "replace"):
            try:
                if how == "overwrite":
                    open(path, "wb").write(b"PLANTED")
                else:
                    open(path + ".new", "wb").write(b"PLANTED")
                    os.replace(path + ".new", path)
            except OSError as exc:
                print("denied", how, path, type(exc).__name__)
os.makedirs(os.path.join(cache, "fxgraph", "zz", "fplanted"), exist_ok=True)
open(os.path.join(cache, "fxgraph", "zz", "fplanted", "entry"), "wb").write(b"PLANTED")
open(os.path.join(cache, "planted-kernel.so"), "wb").write(b"PLANTED")
os.remove(os.path.join(cache, "ab", "cabkernel.cpp"))
for path in ("/opt/compile-cache", "/tmp/.inductor-overlay", "/tmp/.inductor-overlay/upper"):
    try:
        if os.listdir(path):
            print("LAYERS-VISIBLE", path, os.listdir(path))
    except OSError as exc:
        print("hidden:", path, type(exc).__name__)
for dirpath, dirs, files in os.walk("/opt/compile-cache"):  # the layer itself, where a backend shows it
    for name in files + ["planted-new"]:
        path = os.path.join(dirpath, name)
        try:
            open(path, "ab").write(b"PLANTED")
            print("ESCAPED wrote", path)
        except OSError:
            pass
raise SystemExit("planted")
"""

READ_BACK = """
import os
cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
seen = {}
for dirpath, dirs, files in os.walk(cache):
    for name in files:
        path = os.path.join(dirpath, name)
        seen[os.path.relpath(path, cache)] = open(path, "rb").read()[:40]
print("SEEN", sorted(seen), os.environ.get("TORCHINDUCTOR_FX_GRAPH_CACHE"))
print("PLANTED" if any(b"PLANTED" in v for v in seen.values()) else "CLEAN")
""" + HONEST_F


@pytest.mark.sandbox
def test_a_submission_cannot_change_the_layer_for_the_next(synthetic, add_one):
    """poison_compile_cache, for the layer: the runner writes, replaces and deletes in its /tmp/inductor and tries
    the layer's folder; the next grading on the same warm worker sees the trusted layer as it was, and so does the
    host. (bwrap hides the layer's folder from the run; Docker's runner may read its base layer, never write it.)"""
    cache, sandbox = synthetic
    before = _snapshot(cache.root)
    attack = grade(add_one, PLANT, sandbox=sandbox)
    shown = attack.stdout + attack.stderr
    assert attack.verdict is not Verdict.ACCEPTED
    assert "CACHES 1 ['ab', 'aotautograd', 'fxgraph', 'layer.json', 'precompiled_headers']" in shown, shown[-3000:]
    assert "denied replace" not in shown, shown[-3000:]  # the overlay takes its writes...
    assert "ESCAPED" not in shown, shown[-3000:]
    if sandbox.name == "bwrap":
        assert "LAYERS-VISIBLE" not in shown, shown[-3000:]
    after = grade(add_one, READ_BACK, sandbox=sandbox)
    assert after.verdict is Verdict.ACCEPTED, after.summary
    assert "CLEAN" in after.stdout and "planted" not in after.stdout, after.stdout[-3000:]  # ...for itself only
    assert "'ab/cabkernel.cpp'" in after.stdout and "SEEN" in after.stdout
    assert _snapshot(cache.root) == before


@pytest.mark.sandbox
@NEEDS_BWRAP
def test_a_layer_is_used_only_once_complete(tmp_path, add_one):
    cache = CompileCache(root=tmp_path / "root", pools={"runner": (Layer("base", "missing"),)})
    sandbox = make_sandbox("bwrap", compile_cache=cache, pool_size=1)
    try:
        report = grade(add_one, READ_BACK, sandbox=sandbox)
        assert report.verdict is Verdict.ACCEPTED, report.summary
        assert "SEEN [] 0" in report.stdout, report.stdout[-2000:]  # its own empty cache, no pickle caches
        build = LayerBuild(cache, cache.pools["runner"][0]).start()
        (build.dir / "ab").mkdir()
        (build.dir / "ab" / "k.so").write_bytes(TRUSTED)
        build.commit({})
        report = grade(add_one, READ_BACK, sandbox=sandbox)  # the same warm worker, now with the layer
        assert "SEEN ['ab/k.so', 'layer.json'] 1" in report.stdout, report.stdout[-2000:]
    finally:
        sandbox.close()


PICKLE_PLANT = """
import os, pickle, torch
from torch._dynamo.utils import counters

def g(x):
    return torch.sin(x) * 3 + torch.cos(x).sum()

torch.compile(g)(torch.randn(16))

class Planted:
    def __reduce__(self):
        return (print, ("PLANTED-PICKLE-LOADED",))

for top in ("fxgraph", "aotautograd"):
    for dirpath, dirs, files in os.walk(os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], top)):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path + ".new", "wb") as fh:
                fh.write(pickle.dumps(Planted()))
            os.replace(path + ".new", path)
torch._dynamo.reset()
try:
    torch.compile(g)(torch.randn(16))  # this process loads its own plant: the attack is real
except Exception as exc:
    print("failed after loading:", type(exc).__name__)
""" + HONEST_F

SAME_GRAPH = """
import torch
from torch._dynamo.utils import counters

def g(x):
    return torch.sin(x) * 3 + torch.cos(x).sum()

torch.compile(g)(torch.randn(16))
print("COUNTERS", dict(counters["inductor"]))
""" + HONEST_F


@pytest.fixture(scope="session")
def private_layers_root(layers_root) -> Path:
    """The test run's layers (tests/conftest.py), not the machine's, built once for both backends (the same layers:
    the key names the machine and torch, not the backend) and for the other tests that build layers."""
    return layers_root


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_a_planted_cache_entry_is_never_loaded_by_the_next_submission(backend, add_one, fake_course,
                                                                     private_layers_root):
    """A runner compiles with Inductor on its view of the real base layer (FX-graph and AOTAutograd caches on),
    replaces the entries it wrote with pickles that run code when loaded and shows that it loads them itself; the
    next submission compiling the same function on the same warm worker misses the cache and loads nothing."""
    from judge.parent import cache_layers
    from judge.parent.exercise import load_course
    from sandbox.settings import SandboxSettings

    if unavailable_reason(backend):
        pytest.skip(f"{backend} unavailable: {unavailable_reason(backend)}")
    course = load_course(fake_course)
    settings = SandboxSettings(compile_cache=True, compile_cache_dir=private_layers_root)
    cache = cache_layers.for_backend(backend, course, settings)
    assert cache is not None
    cache_layers.build(cache, course)
    exercise = add_one.model_copy(update={"limits": Limits(time_seconds=180, memory_mb=2048)})
    sandbox = make_sandbox(backend, compile_cache=cache, pool_size=1)
    try:
        before = _snapshot(cache.path(cache.pools["runner"][0]))
        attack = grade(exercise, PICKLE_PLANT, sandbox=sandbox)
        assert "PLANTED-PICKLE-LOADED" in attack.stdout, (attack.summary, attack.stdout[-2000:],
                                                          attack.stderr[-2000:])
        after = grade(exercise, SAME_GRAPH, sandbox=sandbox)
        assert after.verdict is Verdict.ACCEPTED, after.summary
        assert "PLANTED" not in after.stdout + after.stderr
        assert "'fxgraph_cache_miss': 1" in after.stdout, after.stdout[-2000:]
        assert _snapshot(cache.path(cache.pools["runner"][0])) == before
    finally:
        sandbox.close()


@pytest.mark.slow
@pytest.mark.sandbox
@NEEDS_BWRAP
def test_the_cache_artifacts_exercise_is_passed_on_a_run_over_the_layers(fake_course, private_layers_root):
    """compile-cache-artifacts' reference on bwrap over the trusted layers, as a server grades by default. Two bugs
    failed it there and only there: the verifier kept its answer in its cache by a rename from the temporary folder,
    another file system in a sandbox (RUNTIME_ERROR), and the layer's TORCHINDUCTOR_VEC_ISA_OK=1 reached the build
    process but not the loader, so the two looked up different keys (WRONG_ANSWER)."""
    from judge.parent import cache_layers
    from judge.parent.exercise import find_exercise, load_course
    from judge.shared.paths import PROJECT_ROOT
    from sandbox.settings import SandboxSettings

    course = load_course(fake_course)
    cache = cache_layers.for_backend("bwrap", course, SandboxSettings(compile_cache=True,
                                                                      compile_cache_dir=private_layers_root))
    cache_layers.build(cache, course)  # built once a run: the planted-entry test's layers
    exercise = find_exercise(PROJECT_ROOT / "exercises", "compile-cache-artifacts")
    sandbox = make_sandbox("bwrap", compile_cache=cache, pool_size=1)
    try:
        report = grade(exercise, exercise.read("solutions/reference.py"), sandbox=sandbox)
        assert report.verdict is Verdict.ACCEPTED, [(c.name, c.message) for c in report.checks if not c.passed]
    finally:
        sandbox.close()
