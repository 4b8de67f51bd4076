"""judge.shared.phases: spans are written only where PRACTICE_PHASES names a folder, one file per role and process."""

import json
import os

from judge.shared import phases


def test_a_span_is_recorded_under_the_processes_role(tmp_path, monkeypatch):
    monkeypatch.setenv(phases.ENV, str(tmp_path))
    monkeypatch.setitem(phases._role, "name", "verifier")
    with phases.span("verifier.rebuild"):
        sum(range(10_000))
    written = tmp_path / f"verifier-{os.getpid()}.jsonl"
    [record] = [json.loads(line) for line in written.read_text().splitlines()]
    assert record["name"] == "verifier.rebuild" and record["cpu"] >= 0 and record["wall"] > 0


def test_without_the_setting_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv(phases.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with phases.span("runner.compile"):
        pass
    assert list(tmp_path.iterdir()) == []


def test_a_span_is_recorded_when_its_body_raises(tmp_path, monkeypatch):
    monkeypatch.setenv(phases.ENV, str(tmp_path))
    try:
        with phases.span("check test_x"):
            raise ValueError("the learner's failure")
    except ValueError:
        pass
    assert "check test_x" in next(tmp_path.iterdir()).read_text()


def test_an_unwritable_folder_never_fails_the_grading(tmp_path, monkeypatch):
    monkeypatch.setenv(phases.ENV, str(tmp_path / "missing"))
    with phases.span("runner.compile"):
        value = 1
    assert value == 1
