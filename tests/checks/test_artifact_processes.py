"""judge.checks.artifact_processes on the verifier's side: the runner's report on the build process, the bytes that
come back and a loader's report are checked for their form, and the build's own failures come in order (the
processes themselves are proven by the two exercises that use them, in tests/test_exercises.py)."""

import pytest
import torch

from judge.checks import Forbidden, WrongAnswer
from judge.checks.artifact_processes import (
    MAX_ARTIFACT_BYTES,
    artifact_bytes,
    assert_built_bytes,
    build_form,
    loaded_form,
)
from judge.checks.fresh_process import LearnerError
from judge.remote import Protocol
from judge.reports.i18n import T
from judge.shared import wire


def test_a_report_of_the_form_gives_its_build():
    build = {"type": "bytes", "size": 3, "changed": []}
    assert build_form({"build": build, "serve": []}) is build  # anything beside the build is not read
    assert build_form({"build": {"error": "boom"}}) == {"error": "boom"}


@pytest.mark.parametrize("report", [
    None, [], {"serve": {}}, {"build": "bytes"},
    {"build": {"changed": "torch.set_num_threads"}},           # a list of names, not a string
    {"build": {"changed": [1]}},
], ids=repr)
def test_a_report_not_of_the_form_is_the_runners_protocol_error(report):
    with pytest.raises(Protocol):
        build_form(report)


RETURNS = T("what `load_compiled_function` reads", zh="`load_compiled_function` 读的内容")


@pytest.mark.parametrize("build, failure, words", [
    ({"error": "Traceback ...\nValueError: no", "changed": ["grad mode"], "type": "int"}, LearnerError, "ValueError"),
    ({"changed": ["grad mode"], "type": "int"}, Forbidden, "`grad mode`"),
    ({"type": "AOTCompileSaveResult"}, WrongAnswer, "returned `AOTCompileSaveResult`"),
])
def test_the_builds_failures_come_in_order(build, failure, words):
    with pytest.raises(failure) as info:
        assert_built_bytes(build, entry="build_artifact", scoped="`torch.no_grad()`", returns=RETURNS)
    assert words in str(info.value) and "build_artifact" in str(info.value)
    assert info.value.message.render("zh")  # the catalog's Chinese, or the learner's traceback as it is


def test_bytes_pass():
    assert_built_bytes({"type": "bytes", "size": 1}, entry="build_artifact", scoped="x", returns=RETURNS)


def test_the_bytes_come_back_as_a_uint8_tensor_no_larger_than_the_judge_loads():
    assert artifact_bytes({"artifacts": torch.tensor([1, 2, 3], dtype=torch.uint8)}) == b"\x01\x02\x03"
    for build in ({}, {"artifacts": b"abc"}, {"artifacts": torch.zeros(3)}, {"artifacts": torch.zeros(1, 3).byte()}):
        with pytest.raises(Protocol):
            artifact_bytes(build)
    with pytest.raises(WrongAnswer, match="larger than the judge loads"):
        artifact_bytes({"artifacts": torch.zeros(MAX_ARTIFACT_BYTES + 1, dtype=torch.uint8)})


LOADED = {"outputs": [wire.encode_tensor(torch.ones(2))], "counters": {"frames": {}, "stats": {}}, "changed": []}


def test_a_loaders_report_of_the_form_gives_its_outputs():
    found = loaded_form(LOADED, 1)
    assert torch.equal(found["outputs"][0], torch.ones(2)) and found["counters"] == LOADED["counters"]
    assert loaded_form({"load_error": "UnpicklingError"}, 1) == {"load_error": "UnpicklingError"}
    assert loaded_form({**LOADED, "outputs": [], "call_error": "guard failed"}, 1)["call_error"] == "guard failed"
    cache = {"inductor": {"fxgraph_cache_hit": 1}, "aot_autograd": {"autograd_cache_hit": 1}}  # a "cache" loader's
    assert loaded_form({**LOADED, "counters": cache}, 1)["counters"] == cache


@pytest.mark.parametrize("report", [
    None, [], {"load_error": 1}, {**LOADED, "counters": {"frames": {"total": "0"}}},   # a forged count
    {**LOADED, "changed": "grad mode"}, {**LOADED, "outputs": []},                      # an output short, no error
    {**LOADED, "outputs": [{"dtype": "float32", "shape": [2], "data": ""}]},             # bytes that do not fit
    {**LOADED, "outputs": LOADED["outputs"] * 2},                                          # more outputs than inputs
], ids=repr)
def test_a_loaders_report_not_of_the_form_is_a_protocol_error(report):
    with pytest.raises(Protocol):
        loaded_form(report, 1)


def test_the_fresh_process_gets_links_to_the_runners_precompiled_headers_and_nothing_else(tmp_path, monkeypatch):
    from torch._inductor import codecache

    from judge.checks.artifact_processes import link_precompiled_headers

    headers = tmp_path / "runner-headers"
    (headers / "locks").mkdir(parents=True)
    for name in ("abc.h", "abc.h.gch", "abc.h.lock", "notes.txt"):
        (headers / name).write_text(name)
    monkeypatch.setattr(codecache, "_HEADER_DIR", str(headers))
    link_precompiled_headers(tmp_path / "fresh")
    found = {p.name: p for p in (tmp_path / "fresh").iterdir()}
    assert sorted(found) == ["abc.h", "abc.h.gch"]
    assert all(p.is_symlink() and p.resolve() == headers / name for name, p in found.items())
    monkeypatch.setattr(codecache, "_HEADER_DIR", str(tmp_path / "none"))  # a runner with no header yet
    link_precompiled_headers(tmp_path / "empty")
    assert list((tmp_path / "empty").iterdir()) == []
