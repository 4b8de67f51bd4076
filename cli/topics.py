"""What the course covers: one row per exercise (chapter section, idea, tags), generated from the exercises.

`practice list --topics` prints it; docs/topics.md is this module's Markdown (`python -m cli.topics > docs/topics.md`;
tests/cli/test_topics.py fails when the page is out of date)."""

from __future__ import annotations

from pathlib import Path

from judge.parent.exercise import Exercise, load_course

ROOT = Path(__file__).resolve().parent.parent


def topic_rows(course: list[Exercise], lang: str = "en") -> list[tuple[str, str, str, str]]:
    """(section, exercise id, idea: the title, tags) in course order."""
    return [(e.section.get(lang), e.id, e.title.get(lang),
             ", ".join(e.tags)) for e in course]


def topics_markdown(course: list[Exercise]) -> str:
    """docs/topics.md: the index, grouped by the chapter's section."""
    lines = ["# What the course covers", "",
             "Generated from `exercises/*/exercise.toml` by `python -m cli.topics` (`practice list --topics` "
             "prints the same); regenerate it after adding an exercise.", "",
             "| section | exercise | idea | tags |", "|---|---|---|---|"]
    for section, exercise_id, idea, tags in topic_rows(course):
        lines.append(f"| {section} | `{exercise_id}` | {idea} | {tags} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(topics_markdown(load_course(ROOT / "exercises")), end="")
