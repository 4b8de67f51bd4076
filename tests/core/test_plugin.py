"""How the verifier's pytest plugin names a failure that a hidden test raised without a CheckFailure."""

import sys

import torch

from judge.reports.i18n import text
from judge.reports.report import Verdict
from judge.verifier_side.plugin import classify


def _raised(fn, *args):
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001 - the exception is what is under test
        return exc, sys.exc_info()[2]
    raise AssertionError("nothing was raised")


def test_a_graph_break_in_a_tests_own_compile_reads_like_every_other_graph_break():
    def prints(x):
        print("in the graph")
        return x + 1

    torch._dynamo.reset()
    exc, tb = _raised(torch.compile(prints, backend="eager", fullgraph=True), torch.ones(2))
    verdict, message, diagnostics = classify(exc, tb)
    assert verdict is Verdict.GRAPH_BREAK and diagnostics[0].kind == "graph_break"
    english, chinese = text(message, "en"), text(message, "zh")
    # the same form as the checks' graph breaks; this file is not the learner's, so no line of theirs is named
    assert english.startswith("`torch.compile`: graph break at a line outside your file: ") and "print()" in english
    assert chinese.startswith("`torch.compile`") and chinese != english and "print()" in chinese


def test_an_assertion_is_a_wrong_answer_with_its_message_as_code():
    exc, tb = _raised(lambda: (_ for _ in ()).throw(AssertionError("values differ\nmore detail")))
    verdict, message, _ = classify(exc, tb)
    assert verdict is Verdict.WRONG_ANSWER and text(message, "en").startswith("a check failed: `values differ")


def test_a_marked_test_carries_its_reason_onto_its_check_result(tmp_path):
    import pytest

    from judge.verifier_side.plugin import Collector

    (tmp_path / "test_marked.py").write_text(
        "from judge.checks import rests_on_learner_process\n"
        "from judge.reports.i18n import T\n\n"
        "@rests_on_learner_process(T('what an eager call printed', zh='eager 调用打印的内容'))\n"
        "def test_marked():\n    pass\n\n"
        "def test_plain():\n    pass\n", encoding="utf-8")
    sent = []
    collector = Collector(lambda result, runner_end: sent.append(result), lambda names: True, lambda: [])
    pytest.main([str(tmp_path / "test_marked.py"), "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)],
                plugins=[collector])
    results = {r.name: r for r in sent}
    assert results["test_marked"].learner_process == "what an eager call printed"
    assert text(results["test_marked"].text("learner_process"), "zh") == "eager 调用打印的内容"
    assert results["test_plain"].learner_process == ""


def test_a_reason_must_come_in_both_languages():
    import pytest

    from judge.checks import rests_on_learner_process

    with pytest.raises(TypeError, match="zh and en"):
        rests_on_learner_process("printed text")
