"""The course's topic index: generated from the exercises, printed by `practice list --topics`, kept in the docs."""

from pathlib import Path

from click.testing import CliRunner

from cli.main import cli
from cli.topics import topics_markdown
from judge.parent.exercise import load_course

ROOT = Path(__file__).resolve().parents[2]


def test_docs_topics_page_is_generated_from_the_exercises():
    page = (ROOT / "docs" / "topics.md").read_text(encoding="utf-8")
    assert page == topics_markdown(load_course(ROOT / "exercises")), "run: python -m cli.topics > docs/topics.md"


def test_list_topics_prints_each_exercises_section_idea_and_tags(fake_course):
    result = CliRunner().invoke(cli, ["list", "--topics", "--exercises", str(fake_course)], terminal_width=200)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "add-one" in line)
    assert "fake" in row and "Add one" in row
