"""compile-cache-artifacts keeps the verifier's answer on the grader's own cache entries (public.own_entries) in the
verifier's Inductor cache. In a sandbox that cache is another file system than the temporary folder: keeping it by
a rename across them failed every grading of the reference (RUNTIME_ERROR, EXDEV) on bwrap with the trusted layers."""

import importlib.util
import os
import tempfile
from pathlib import Path

import pytest

from judge.checks import fresh_process

PUBLIC = Path(__file__).resolve().parents[2] / "exercises" / "compile-cache-artifacts" / "public.py"
SHM = Path("/dev/shm")


@pytest.fixture
def public():
    spec = importlib.util.spec_from_file_location("public_compile_cache_artifacts_kept", PUBLIC)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def asked(monkeypatch):
    """The fresh process stood in for: what it was asked, and the answer it gives."""
    calls = []

    def run_python(script, args, **kwargs):
        calls.append(kwargs["env"]["TORCHINDUCTOR_CACHE_DIR"])
        return {"inductor": ["fxgraph-key"]}

    monkeypatch.setattr(fresh_process, "run_python", run_python)
    return calls


@pytest.mark.skipif(not SHM.is_dir() or os.stat(SHM).st_dev == os.stat(tempfile.gettempdir()).st_dev,
                    reason="needs a temporary folder on another file system than /dev/shm")
def test_the_answer_is_kept_in_a_cache_on_another_file_system_and_read_back(public, asked, tmp_path, monkeypatch):
    shm = Path(tempfile.mkdtemp(dir=SHM))
    try:
        monkeypatch.setattr(tempfile, "tempdir", str(shm))  # the process's temporary folder: another file system
        monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
        assert public.own_entries() == {"inductor": ["fxgraph-key"]}
        kept = list((tmp_path / "cache" / "own-entries").iterdir())
        assert [p.suffix for p in kept] == [".json"]  # no half-written file beside it
        assert public.own_entries() == {"inductor": ["fxgraph-key"]} and len(asked) == 1  # read back, not asked
        public.own_entries(fresh=True)
        assert len(asked) == 2
    finally:
        import shutil

        shutil.rmtree(shm, ignore_errors=True)


def test_a_cache_that_cannot_be_written_only_costs_the_next_grading_its_fresh_process(public, asked, tmp_path,
                                                                                     monkeypatch):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "own-entries").write_text("a file where the folder would be")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    assert public.own_entries() == {"inductor": ["fxgraph-key"]}
    assert public.own_entries() == {"inductor": ["fxgraph-key"]} and len(asked) == 2


def test_the_kept_answer_is_keyed_by_what_the_fresh_process_sees(public, monkeypatch, tmp_path):
    """A layer's build and a run over it differ in settings the fresh process's own environment replaces (the
    layer's TORCHINDUCTOR_VEC_ISA_OK=1, the pickle caches' flags): the run finds the build's answer. A setting the
    fresh process inherits still names another answer."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    for name in ("TORCHINDUCTOR_VEC_ISA_OK", "TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_MAX_AUTOTUNE"):
        monkeypatch.delenv(name, raising=False)
    built = public._kept_path()
    monkeypatch.setenv("TORCHINDUCTOR_VEC_ISA_OK", "1")
    monkeypatch.setenv("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
    assert public._kept_path() == built
    monkeypatch.setenv("TORCHINDUCTOR_MAX_AUTOTUNE", "1")
    assert public._kept_path() != built
