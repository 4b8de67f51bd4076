"""An 80-column terminal: the exercise list never cuts an id (the title wraps instead), and the cost table says
why a function has no figures in full, under the table, not squeezed into a column."""

from __future__ import annotations

import pytest
from rich.console import Console

from cli.cost_render import print_cost
from cli.render import print_exercise_list
from judge.parent.exercise import load_course
from tests.cli.test_cost_display import section

WHY = "Inductor could not compile your graph here: a graph break left code between the graphs"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_exercise_list_keeps_every_id_whole_at_80_columns(lang):
    from pathlib import Path

    course = load_course(Path(__file__).resolve().parents[2] / "exercises")
    rows = [(n, e.id, e.title.get(lang), e.difficulty, "not started") for n, e in enumerate(course, 1)]
    console = Console(width=80, record=True, force_terminal=False)
    print_exercise_list(console, rows, lang)
    shown = console.export_text()
    assert max(map(len, shown.splitlines())) <= 80
    lines = shown.splitlines()
    for exercise in course:
        assert any(f" {exercise.id} " in line for line in lines), exercise.id  # whole, on one line


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_why_a_function_has_no_figures_is_said_whole(lang):
    console = Console(width=80, record=True, force_terminal=False)
    print_cost(console, section(learner_unavailable=WHY), lang)
    shown = " ".join(console.export_text().split())
    assert WHY in shown  # one sentence, wrapped by the terminal, not cut into a 12-character column
