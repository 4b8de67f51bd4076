"""The learner's workspace: their own copy of each exercise and what they have done so far."""

from __future__ import annotations

import json
from pathlib import Path

from judge.parent.exercise import Exercise
from judge.reports.report import Report

STATE_FILE = ".progress.json"
REPORTS_DIR = ".reports"  # the last report of each exercise (`practice show EXERCISE --graphs` reads it)


class Workspace:
    """`<root>/<exercise-id>.py` files (created from the starter on first use) and a small state file."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def file_for(self, exercise: Exercise) -> Path:
        return self.root / f"{exercise.id.replace('-', '_')}.py"

    def ensure(self, exercise: Exercise, lang: str = "zh") -> tuple[Path, bool]:
        """The learner's file for `exercise`, created from the starter (its comments in `lang`) if missing;
        (path, created)."""
        path = self.file_for(exercise)
        if path.exists():
            return path, False
        self.root.mkdir(parents=True, exist_ok=True)
        path.write_text(exercise.code(exercise.starter, lang), encoding="utf-8")
        return path, True

    def _load(self) -> dict:
        try:
            return json.loads((self.root / STATE_FILE).read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def _save(self, state: dict) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True), encoding="utf-8")
        tmp.replace(self.root / STATE_FILE)

    def record(self, exercise_id: str, verdict: str) -> None:
        state = self._load()
        entry = state.setdefault(exercise_id, {})
        entry["last_verdict"] = verdict
        entry["solved"] = entry.get("solved", False) or verdict == "ACCEPTED"
        self._save(state)

    def save_report(self, exercise_id: str, report: Report) -> None:
        folder = self.root / REPORTS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"{exercise_id}.json.tmp"
        tmp.write_text(report.model_dump_json(), encoding="utf-8")
        tmp.replace(folder / f"{exercise_id}.json")

    def last_report(self, exercise_id: str) -> Report | None:
        """The report of the last grading of `exercise_id` here, or None (never graded, or unreadable)."""
        try:
            return Report.model_validate_json((self.root / REPORTS_DIR / f"{exercise_id}.json").read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def status(self, exercise: Exercise) -> str:
        """'solved', 'failing' or 'not started'."""
        entry = self._load().get(exercise.id, {})
        if entry.get("solved"):
            return "solved"
        if "last_verdict" in entry:
            return "failing"
        return "not started"

    def next_hint(self, exercise: Exercise) -> int | None:
        """Reveal one more hint; its index, or None when every hint is already shown."""
        state = self._load()
        entry = state.setdefault(exercise.id, {})
        shown = entry.get("hints_shown", 0)
        if shown >= len(exercise.hints):
            return None
        entry["hints_shown"] = shown + 1
        self._save(state)
        return shown
