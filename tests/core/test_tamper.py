"""judge.shared.tamper names what a submission replaced: module functions, methods of the judge's classes, methods set
on
a live object it watches; and it stays quiet when nothing changed."""

from __future__ import annotations

import pytest

from judge.runner_side.compiling import Session
from judge.runner_side.runner import Runner
from judge.shared import tamper


@pytest.fixture
def restore():
    saved = []

    def patch(owner, name, value):
        saved.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, value)

    yield patch
    for owner, name, value in reversed(saved):
        setattr(owner, name, value)


def test_nothing_changed_says_nothing():
    runner = Runner({"source": "", "entry_point": "f"}, 1, None)
    assert tamper.Snapshot(watch={"judge.runner_side.runner.Runner": runner}).changes() == []


@pytest.mark.parametrize("owner, name, expected", [
    (Session, "call", "judge.runner_side.compiling.Session.call"),
    (Runner, "op_compile", "judge.runner_side.runner.Runner.op_compile"),
    (Runner, "op_tamper", "judge.runner_side.runner.Runner.op_tamper"),
    (Session, "__init__", "judge.runner_side.compiling.Session.__init__"),
])
def test_a_patched_method_of_a_judge_class_is_named(restore, owner, name, expected):
    snapshot = tamper.Snapshot()
    restore(owner, name, lambda self, *args, **kwargs: {})
    assert f"`{expected}` was replaced" in snapshot.changes()


def test_a_patched_property_and_staticmethod_are_named(restore):
    from judge.reports import report

    snapshot = tamper.Snapshot()
    restore(report.Report, "accepted", property(lambda self: True))
    assert "`judge.reports.report.Report.accepted` was replaced" in snapshot.changes()


def test_a_method_set_on_the_live_runner_is_named():
    runner = Runner({"source": "", "entry_point": "f"}, 1, None)
    snapshot = tamper.Snapshot(watch={"judge.runner_side.runner.Runner": runner})
    runner.op_call = lambda request: {"result": 1.0}
    assert snapshot.changes() == ["`judge.runner_side.runner.Runner.op_call` was replaced"]


def test_a_plain_attribute_of_the_live_runner_is_not_a_patch():
    runner = Runner({"source": "", "entry_point": "f"}, 1, None)
    snapshot = tamper.Snapshot(watch={"judge.runner_side.runner.Runner": runner})
    runner.handles["h0"] = object()
    runner.submission = object()
    assert snapshot.changes() == []


def test_a_symbolic_shapes_config_flag_is_named():
    # backed_size_oblivious drops the 0/1 specialisation of every backed size in the process (unbacked-sizes' cheat)
    import torch.fx.experimental._config as shapes_config

    snapshot = tamper.Snapshot()
    with shapes_config.patch(backed_size_oblivious=True):
        assert any("torch.fx.experimental._config.backed_size_oblivious" in c for c in snapshot.changes())
    assert snapshot.changes() == []



def test_a_compiler_config_source_list_is_named():
    # dynamic_sources makes a dim of every argument of that name dynamic in every later compile (mark-dynamic-seq's
    # cheat, ACCEPTED while torch.compiler.config was not watched)
    import torch.compiler.config as compiler_config

    snapshot = tamper.Snapshot()
    with compiler_config.patch(dynamic_sources="L['x']:1"):
        assert any("torch.compiler.config.dynamic_sources" in c for c in snapshot.changes())
    assert snapshot.changes() == []


def test_flushing_denormals_is_named():
    """torch.set_flush_denormal has no getter: the snapshot sees it by a denormal that a multiply flushes."""
    import torch

    snapshot = tamper.Snapshot()
    assert torch.set_flush_denormal(True)  # x86 CPUs support it
    try:
        assert any("torch.set_flush_denormal" in c for c in snapshot.changes())
    finally:
        torch.set_flush_denormal(False)
    assert snapshot.changes() == []


def test_a_replaced_function_of_the_exercises_public_module_is_named(monkeypatch):
    """The runner loads public.py as `tamper.PUBLIC_MODULE`: a file that replaces one of its functions (the fresh
    processes' report of aot-compile-artifact) is named like a patched judge function."""
    import sys
    import types

    from judge.shared.loaded import load_source

    monkeypatch.setitem(sys.modules, tamper.PUBLIC_MODULE, types.ModuleType("before"))  # removed again afterwards
    public = load_source(tamper.PUBLIC_MODULE, "def build_and_serve(build, x):\n    return {}\n")
    snapshot = tamper.Snapshot()
    monkeypatch.setattr(public, "build_and_serve", lambda build, x: {"serve": {}})
    assert snapshot.changes() == [f"`{tamper.PUBLIC_MODULE}.build_and_serve` was replaced"]
