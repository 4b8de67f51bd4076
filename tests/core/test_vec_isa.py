"""Inductor's vector-ISA check is skipped only where a trusted probe found it picks what the CPU claims."""

import json
import subprocess
from pathlib import Path

import pytest

from judge.parent import vec_isa
from judge.parent.grading import make_sandbox
from sandbox.compile_cache import config_key


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PRACTICE_INDUCTOR_CACHE", str(tmp_path))
    vec_isa._probe_result.cache_clear()
    yield tmp_path
    vec_isa._probe_result.cache_clear()


def _probe_says(monkeypatch, result):
    calls = []

    def probe(cache_dir):
        calls.append(cache_dir)
        if isinstance(result, BaseException):
            raise result
        return result

    monkeypatch.setattr(vec_isa, "_probe", probe)
    return calls


def test_the_check_is_skipped_where_the_probe_picks_what_the_cpu_claims(cache, monkeypatch):
    said = {"probed": "avx512", "claimed": "avx512", "loaded": ["ab/cab.so", "cd/ccd.so", "../outside.so", "a,b.so"]}
    calls = _probe_says(monkeypatch, said)
    # the features' probe libraries that loaded come along; a path that leaves the cache or splits the list, never
    assert vec_isa.skip_check_env() == {"TORCHINDUCTOR_VEC_ISA_OK": "1",
                                        "PRACTICE_VEC_ISA_LOADED": "ab/cab.so,cd/ccd.so"}
    memo = json.loads((cache / f"practice-vec-isa-{config_key()}.json").read_text())
    assert memo == said and calls == [str(cache)]
    vec_isa._probe_result.cache_clear()  # another process: it reads the answer, it does not probe again
    assert vec_isa.skip_check_env() and len(calls) == 1


def test_the_check_stays_on_where_the_cpu_claims_more_than_builds(cache, monkeypatch):
    _probe_says(monkeypatch, {"probed": "avx2", "claimed": "avx512"})
    assert vec_isa.skip_check_env() == {}
    assert "TORCHINDUCTOR_VEC_ISA_OK" not in make_sandbox("none").program.environment()


@pytest.mark.parametrize("failure", [RuntimeError("exit 1: no compiler"), subprocess.TimeoutExpired("python", 300)])
def test_a_failed_probe_keeps_the_check_and_remembers_nothing(cache, monkeypatch, failure):
    _probe_says(monkeypatch, failure)
    assert vec_isa.skip_check_env() == {}
    assert not list(cache.glob("practice-vec-isa-*"))


def test_a_malformed_answer_on_disk_is_probed_again(cache, monkeypatch):
    (cache / f"practice-vec-isa-{config_key()}.json").write_text("{not json")
    calls = _probe_says(monkeypatch, {"probed": "avx2", "claimed": "avx2"})
    assert vec_isa.skip_check_env() and len(calls) == 1


def test_the_unisolated_backends_pass_it_to_their_runs(cache, monkeypatch):
    _probe_says(monkeypatch, {"probed": "avx2", "claimed": "avx2"})
    sandbox = make_sandbox("none")
    assert sandbox.program.environment()["TORCHINDUCTOR_VEC_ISA_OK"] == "1"


def test_the_probe_runs_against_this_torch():
    from sandbox.limits import inductor_cache_dir

    cache = inductor_cache_dir()
    found = vec_isa._probe(cache)  # the shared cache: its probe programs are usually built already
    assert set(found) == {"probed", "claimed", "loaded"} and found["probed"] and found["claimed"]
    assert all((Path(cache) / rel).is_file() and rel.endswith(".so") for rel in found["loaded"])
