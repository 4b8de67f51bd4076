"""PyTorch's graph-break registry in the judge's reports: ids, PyTorch's words in both languages, the pins."""

from pathlib import Path

import pytest
import torch

from judge.checks.graphs import find_graph_breaks, graph_break_from_exception
from judge.compiler import break_registry
from judge.parent.exercise import load_course
from judge.parent.proving import CJK, reads_as_english
from judge.reports.i18n import OTHER_LANGS
from judge.reports.report import GraphBreakDiagnostic, localized

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"


def test_every_id_of_the_chinese_catalogue_is_in_the_installed_registry():
    unknown = sorted(set(break_registry.catalogue()) - set(break_registry.registry()))
    assert not unknown, (f"judge/compiler/break_registry_zh.toml names ids the installed torch does not "
                         f"register: {unknown}")


def test_the_catalogue_covers_the_common_breaks_in_chinese():
    catalogue = break_registry.catalogue()
    assert len(catalogue) >= 40
    for gb_id, entry in catalogue.items():
        assert CJK.search(entry["title"]) and CJK.search(entry["explanation"]), gb_id
        words = break_registry.words(gb_id)
        if words.hints:  # PyTorch gives hints: so does the Chinese
            assert entry["hints"], f"{gb_id}: the registry has hints, the catalogue none"


def pinned_ids():
    for exercise in load_course(EXERCISES):
        if exercise.starter_break_id:
            yield exercise.id, exercise.starter, exercise.starter_break_id
        for wrong in exercise.wrong:
            if wrong.break_id:
                yield exercise.id, wrong.path, wrong.break_id


def test_every_break_the_course_pins_has_its_chinese():
    pinned = list(pinned_ids())
    assert len(pinned) >= 15
    missing = [(e, p, i) for e, p, i in pinned if i not in break_registry.catalogue()]
    assert not missing, missing


@pytest.mark.parametrize("text, gb_type, expected", [
    ("", "Data-dependent branching", "GB0170"),  # Unsupported.gb_type
    ("see: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html", None, "GB0059"),
    ("Graph Break Reason: Failed to trace builtin operator", None, "GB0059"),
    ("generic_jump TensorVariable()", None, "GB0170"),  # torch._dynamo.explain's older wording
    ("call_method TensorVariable() item () {}", None, "GB0124"),
    ("Could not guard on data-dependent expression zuf0 > 0.0", None, "GB0170"),  # fullgraph's UserError
    ("host sync: item()", None, "GB0124"),
    ("something else entirely", None, None),
])
def test_classify_finds_the_registry_id(text, gb_type, expected):
    assert break_registry.classify(text, gb_type) == expected


def test_pytorchs_words_come_in_english_from_the_registry_and_in_chinese_from_the_catalogue():
    words = break_registry.words("GB0170")
    assert words.title == "Data-dependent branching" and "torch.cond" in words.hints
    assert words.url == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html"
    zh = localized(words, "zh")
    assert zh.title == "依赖数据的分支" and "torch.cond" in zh.hints and not reads_as_english(zh.explanation)
    catalogue = break_registry.catalogue()
    english_only = next(i for i in break_registry.registry() if i not in catalogue and break_registry.words(i))
    shown = localized(break_registry.words(english_only), "zh")  # no Chinese in the catalogue: shown in English
    assert shown.title == break_registry.words(english_only).title and not CJK.search(shown.explanation)


def test_enrich_sets_pytorchs_words_on_a_classified_break_only():
    classified = GraphBreakDiagnostic(reason="x", gb_id="GB0059")
    made_up = GraphBreakDiagnostic(reason="y", gb_id="not an id")
    plain = GraphBreakDiagnostic(reason="z")
    break_registry.enrich([classified, made_up, plain])
    assert classified.pytorch.gb_id == "GB0059" and made_up.pytorch is None and plain.pytorch is None
    assert all(not classified.pytorch.missing_texts(lang) for lang in OTHER_LANGS)


def _branchy(x):
    if x.sum() > 0:
        return x * 2
    return x


def test_a_real_break_without_fullgraph_gets_the_classified_id():
    found = find_graph_breaks(_branchy, torch.randn(4))
    assert [b.gb_id for b in found] == ["GB0170"]


def test_a_real_break_with_fullgraph_gets_its_gb_type():
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported) as caught:
        torch.compile(_branchy, backend="eager", fullgraph=True)(torch.randn(4))
    assert graph_break_from_exception(caught.value).gb_id == "GB0170"
