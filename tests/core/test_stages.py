"""Your code or the compiler? A mismatch of a captured graph's result names the first compiler stage that changes it
(judge/verifier_side/stages.py, judge/remote/stages.py), in both languages: the learner's code where the graph run op
by op
already gives the numbers, Inductor (and the operator whose lowering does it) where only Inductor's result differs.

The runner is a stand-in that answers every compile with the graph of one function; the graphs run here, sealed.
"""

from __future__ import annotations

import pytest
import torch

from judge import remote
from judge.checks import assert_same
from judge.checks.failures import WrongAnswer
from judge.reports.report import MismatchDiagnostic, localized
from judge.shared import ir
from judge.verifier_side import stages
from judge.verifier_side.plugin import with_stage

aten = torch.ops.aten


class OneGraph:
    """Stands in for the runner's line: every compile answers with the captured graph of `fn` (one tensor input)."""

    def __init__(self, fn):
        self.gm = torch.fx.symbolic_trace(fn)
        self.gone = None

    def request(self, op, *, replay_key=None, **fields):
        return {"graphs": [{"index": 0, "ir": ir.to_ir(self.gm), "inputs": [{"kind": "arg", "path": [0]}]}],
                "ran": [0], "error": None, "output": {"spec": None, "leaves": [{"out": 0}]}}

    def session_order(self, name):
        return 0


def graded(fn):
    """A grading context whose runner captures `fn`."""
    return remote.using(remote.GradingContext(client=OneGraph(fn)))


def mismatch(compiled, x, expected) -> MismatchDiagnostic:
    """The failed comparison of `compiled(x)` with `expected`, explained as the plugin does."""
    with pytest.raises(WrongAnswer) as caught:
        assert_same(compiled(x), expected, case="x")
    with_stage(caught.value, caught.value.diagnostics)
    [diag] = [d for d in caught.value.diagnostics if isinstance(d, MismatchDiagnostic)]
    return diag


def test_a_learner_bug_names_the_learners_code_in_both_languages():
    x = torch.randn(4, 8)
    with graded(lambda x: (x * 2 + 1,)):  # the learner's function computes 2x + 1; the original 2x + 2
        diag = mismatch(remote.entry_ref().compile(fullgraph=True), x, x * 2 + 2)
    assert diag.stage is not None and diag.stage.stage == "eager" and diag.stage.agreed == []
    assert "Your function itself computes this" in localized(diag, "en").stage.explanation
    assert "你的函数本身就算出了这个结果" in localized(diag, "zh").stage.explanation


def test_a_mismatch_not_computed_by_a_graph_here_gets_no_stage():
    x = torch.randn(4, 8)
    with graded(lambda x: (x + 1,)):
        remote.entry_ref().compile(fullgraph=True)(x)
        with pytest.raises(WrongAnswer) as caught:
            assert_same(x + 1, x + 2, case="x")  # a value the test computed itself, not the graph's result
        with_stage(caught.value, caught.value.diagnostics)
    assert caught.value.diagnostics[0].stage is None


def test_the_stages_run_in_torchs_order_up_to_the_one_that_failed():
    seen = []
    assert stages.first_disagreeing(lambda s: seen.append(s) or s != "aot_eager_decomp_partition", "inductor") == (
        "aot_eager_decomp_partition", ["eager", "aot_eager"])
    assert seen == ["eager", "aot_eager", "aot_eager_decomp_partition"]
    assert stages.first_disagreeing(lambda s: True, "inductor") == ("inductor", list(stages.STAGES[:3]))


def test_the_bisector_stops_at_its_time_limit_with_the_stage_alone():
    """A graph that would make the bisector run long (hostile or large) costs at most NARROW_SECONDS."""
    calls = []
    assert stages.narrow("inductor", lambda: calls.append(1) or False, seconds=0) == ("", "")
    assert calls == []


def test_a_graph_that_changes_process_state_under_a_stage_gets_no_finding(monkeypatch):
    """The reruns are sealed like every run of a returned graph: a run that changes the verifier's state (here grad
    mode, as an allowlisted `torch._C._set_grad_enabled` call in a graph would) is put back and gives no finding, so
    a hostile graph cannot turn its own mismatch into the compiler's fault."""
    from judge.remote import stages as remote_stages

    def hostile(*_):
        torch._C._set_grad_enabled(False)
        return (torch.zeros(1),)

    monkeypatch.setattr(remote_stages, "rerun", lambda run, stage: remote_stages.run_sealed(hostile, [], what="g"))
    x = torch.randn(4, 8)
    with graded(lambda x: (x.sin(),)):
        diag = mismatch(remote.entry_ref().compile(fullgraph=True, local_backend="aot_eager"), x, x.sin() + 1)
    assert torch.is_grad_enabled() and diag.stage is None


def test_the_explanation_names_the_operator_and_the_setting():
    assert "Inductor's lowering of `sin`" in str(stages.explanation("inductor", "lowerings", "sin_2"))
    zh = stages.explanation("aot_eager_decomp_partition", "decomposition", "aten.addcmul.default").render("zh")
    assert zh is not None and "aten.addcmul.default" in zh
    setting = stages.explanation("inductor", "inductor_emulate_precision_casts", "inductor.emulate_precision_casts = "
                                 "True")
    assert "emulate_precision_casts" in str(setting) and setting.render("zh") is not None


@pytest.fixture
def sin_lowered_off_by_half():
    """Inductor's lowering of `sin` patched, for this test only, to add 0.5 (the FX-graph cache off: an entry of
    the real lowering must not answer)."""
    from unittest import mock

    import torch._inductor.config as inductor_config
    from torch._inductor import lowering

    real = lowering.lowerings[aten.sin.default]

    def off_by_half(x):
        return lowering.lowerings[aten.add.Tensor](real(x), 0.5)

    with mock.patch.dict(lowering.lowerings, {aten.sin.default: off_by_half}), \
            inductor_config.patch(fx_graph_cache=False):
        yield


@pytest.mark.slow
def test_a_planted_lowering_change_names_inductor_and_the_operator_in_both_languages(sin_lowered_off_by_half):
    """The graph run op by op, under aot_eager and under aot_eager_decomp_partition agrees with the original;
    Inductor's does not; compiler_bisector names the lowering of `sin`."""
    x = torch.randn(4, 8)
    with graded(lambda x: (torch.sin(x) * 2,)):
        diag = mismatch(remote.entry_ref().compile(fullgraph=True, local_backend="inductor"), x, torch.sin(x) * 2)
    finding = diag.stage
    assert finding is not None and finding.stage == "inductor"
    assert finding.agreed == ["eager", "aot_eager", "aot_eager_decomp_partition"]
    assert (finding.subsystem, finding.detail.split("_")[0]) == ("lowerings", "sin")
    assert "Inductor's lowering of `sin` changes the numbers here" in localized(diag, "en").stage.explanation
    zh = localized(diag, "zh").stage.explanation
    assert "Inductor 对 `sin` 的 lowering 在这里改变了数值" in zh and "是编译器" in zh


@pytest.mark.slow
def test_the_playground_names_the_lowering_where_inductor_differs_from_eager(sin_lowered_off_by_half):
    """`practice playground` and the web playground: the verifier's own Inductor compile of each graph is compared with
    the graph run op by op; where they differ, the report names the stage and the lowering (judge.parent.playground)."""
    from judge.parent.playground import PlaygroundReport
    from judge.verifier_side import playground as doctor_checks

    x = torch.randn(4, 8)
    findings: dict = {"notes": []}
    with graded(lambda x: (torch.sin(x) + 1,)):
        session = remote.entry_ref().compile()
        session.take_graphs(remote.current().runner.request("compile")["graphs"])
        assert doctor_checks._inductor(session, 0, (x,), findings) is not None  # its cost figures, as before
    report = PlaygroundReport(summary="", stages=findings["stages"])
    [finding] = report.stages
    assert (finding.stage, finding.subsystem, finding.detail.split("_")[0]) == ("inductor", "lowerings", "sin")
    assert "Inductor's lowering of `sin`" in localized(report, "en").stages[0].explanation
    assert "Inductor 对 `sin` 的 lowering" in localized(report, "zh").stages[0].explanation


def test_the_playground_says_nothing_where_inductor_agrees_with_eager():
    """No stage is looked for where the compiled result agrees (every playground run without a compiler bug)."""
    from judge.remote.compiled import LastRun
    from judge.verifier_side import playground as doctor_checks

    x = torch.randn(4, 8)
    findings: dict = {}
    with graded(lambda x: (x * 2,)):
        session = remote.entry_ref().compile()
        session.take_graphs(remote.current().runner.request("compile")["graphs"])
        out = (x * 2,)
        doctor_checks._compare_with_eager(LastRun(session, 0, [x], out), (x * 2,), findings)
    assert "stages" not in findings
