"""Cheats against the runner/verifier boundary: none is ever ACCEPTED, through the CLI or the web.

Each file in submissions/ is a learner's whole submission that tries to win without solving the exercise:
forging the result channel, patching the runner, sending graphs that lie, or fitting the hidden tests' probes
(what a cost check counts, the values it measures on, the lengths it compares, a provenance replacement). Each is
graded with the CLI's backend (warm local forks, through `judge.parent.grading.grade` as `python practice/judge.py`
calls it), and through the
web with bubblewrap; both run the same two processes. The CLI command itself grades the cheats that attack what
it prints or that need its --sandbox option.
A cheat that returns a graph computing the right function on every hidden input would be a correct solution
(docs/security.md), so every graph these send is wrong somewhere, or not a graph the judge may run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from judge.reports.report import Verdict
from judge.shared.paths import EXERCISES_DIR, PROJECT_ROOT

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent / "submissions"
BOOK = "graph-break-step"
# cheat file -> (exercise, the verdicts it may get). None of them is ever ACCEPTED.
CHEATS = {
    "stack_walk_channel.py": (BOOK, {Verdict.WRONG_ANSWER}),
    "gc_channel.py": (BOOK, {Verdict.WRONG_ANSWER}),
    "forged_lines_every_fd.py": (BOOK, {Verdict.WRONG_ANSWER}),
    "patched_request_handler.py": (BOOK, {Verdict.RUNTIME_ERROR, Verdict.GRAPH_BREAK}),
    "patched_torch_compile.py": (BOOK, {Verdict.FORBIDDEN, Verdict.WRONG_ANSWER}),
    "constant_graph.py": (BOOK, {Verdict.WRONG_ANSWER}),
    "traced_original.py": (BOOK, {Verdict.WRONG_ANSWER, Verdict.GRAPH_BREAK}),
    "target_builtins_eval.py": (BOOK, {Verdict.FORBIDDEN}),
    "target_os_system.py": (BOOK, {Verdict.FORBIDDEN}),
    "target_submission_step.py": (BOOK, {Verdict.FORBIDDEN}),
    "method_outside_allowlist.py": (BOOK, {Verdict.FORBIDDEN}),
    "huge_nested_ir.py": (BOOK, {Verdict.RUNTIME_ERROR}),
    "lying_tensor.py": (BOOK, {Verdict.RUNTIME_ERROR}),
    "never_answers.py": (BOOK + "-never", {Verdict.TIME_LIMIT}),
    "read_hidden_files.py": (BOOK, {Verdict.WRONG_ANSWER}),
    "plant_generated_code.py": ("fuse-rmsnorm-silu", {Verdict.FORBIDDEN, Verdict.WRONG_ANSWER}),
    "grad_off_in_graph.py": ("branchless-grad", {Verdict.FORBIDDEN}),
    "patched_session_method.py": (BOOK, {Verdict.FORBIDDEN}),
    # Probes a file could predict, each file's docstring naming its kind: cost from operator names or hidden in an
    # opaque operator, planted values and thresholds, lengths past the schedule, float32 for float64, a provenance
    # replacement imitated from its statistics, a forged report of fresh processes.
    "renamed_heavy_ops.py": ("cond-skip-refine", {Verdict.WRONG_ANSWER}),
    "cheap_for_probe_value.py": ("cond-skip-refine", {Verdict.WRONG_ANSWER}),
    "threshold_past_boundary.py": ("cond-skip-refine", {Verdict.WRONG_ANSWER}),
    "refine_in_custom_op.py": ("cond-skip-refine", {Verdict.FORBIDDEN}),
    "forged_fresh_process.py": ("aot-compile-artifact", {Verdict.FORBIDDEN}),
    "float32_refine.py": ("cond-skip-refine", {Verdict.WRONG_ANSWER}),
    "op_on_zeros.py": ("custom-op-gelu", {Verdict.WRONG_ANSWER}),
    "lengths_up_to_256.py": ("scan-cumulative", {Verdict.COMPILE_ERROR, Verdict.WRONG_ANSWER}),
}
# cheat file -> what its report's summary must name (the judge's method it patched, the check's reason).
NAMED = {"patched_session_method.py": "judge.runner_side.compiling.Session.call",
         "forged_fresh_process.py": "exercise_public.build_and_serve"}
# Through the CLI command: a cheat that forges what the CLI prints, with the CLI's default backend for one file
# (None: fresh processes), and, since the unisolated backends run the learner's code as the user next to the
# exercises folder (reference included) by design, a cheat that reads files, graded with the CLI's --sandbox bwrap.
CLI_SANDBOX = {"forged_lines_every_fd.py": None, "read_hidden_files.py": "bwrap"}
SHORT_SECONDS = 60  # time enough for an honest grading on a busy machine (the sealed runs and boundary search of
# branchless-grad took 20 s with two test workers), not the exercises' minutes
NEVER_SECONDS = 4  # the copy of the book exercise for the cheat that never answers: only its limit is reached


def make_course(root: Path, seconds: int = SHORT_SECONDS, never_seconds: int = NEVER_SECONDS) -> Path:
    """The exercises CHEATS names, copied into `root` with a time limit of `seconds`; an `<exercise>-never` is a
    copy of `<exercise>` under that id with `never_seconds` (benchmarks/soak.py builds its course with this too)."""
    for exercise in {e for e, _ in CHEATS.values()}:
        original = exercise.removesuffix("-never")
        shutil.copytree(EXERCISES_DIR / original, root / exercise)
        toml = root / exercise / "exercise.toml"
        text = toml.read_text(encoding="utf-8").replace(f'id = "{original}"', f'id = "{exercise}"')
        start = text.index("time_seconds = ")
        end = text.index("\n", start)
        limit = never_seconds if exercise != original else seconds
        toml.write_text(text[:start] + f"time_seconds = {limit}" + text[end:], encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The exercises the cheats attack, with a short time limit (a shorter one for `<exercise>-never`)."""
    return make_course(tmp_path_factory.mktemp("cheat-course"))


def test_there_are_at_least_twelve_cheats_of_different_kinds():
    assert len(CHEATS) >= 12 and sorted(p.name for p in HERE.glob("*.py")) == sorted(CHEATS)


@pytest.mark.parametrize("name", sorted(set(CHEATS) - {n for n, s in CLI_SANDBOX.items() if s == "bwrap"}))
def test_cheat_through_the_clis_backend(name, course, local):
    from judge.parent.exercise import load_exercise
    from judge.parent.grading import grade

    exercise, allowed = CHEATS[name]
    report = grade(load_exercise(course / exercise), (HERE / name).read_text(encoding="utf-8"), sandbox=local)
    assert report.verdict is not Verdict.ACCEPTED
    assert report.verdict in allowed, (report.verdict, report.summary)
    assert NAMED.get(name, "") in report.summary, report.summary


@pytest.mark.parametrize("name", sorted(CLI_SANDBOX))
def test_cheat_through_the_cli(name, course, tmp_path):
    exercise, allowed = CHEATS[name]
    env = {**os.environ, "PRACTICE_EXERCISES_DIR": str(course), "PRACTICE_WORKSPACE": str(tmp_path / "ws"),
           "PRACTICE_POOL_SIZE": "1"}  # one grading: a second warm bwrap worker per pool would only cost
    sandbox = CLI_SANDBOX[name]
    if sandbox == "bwrap":
        _require_bwrap()
    chosen = ["--sandbox", sandbox] if sandbox else []
    result = subprocess.run([sys.executable, str(PROJECT_ROOT / "practice" / "judge.py"), exercise,
                             str(HERE / name), "--json", *chosen], capture_output=True, text=True,
                            env=env, timeout=600)
    report = json.loads(result.stdout)
    assert report["verdict"] != "ACCEPTED" and result.returncode == 1
    assert Verdict(report["verdict"]) in allowed, (report["verdict"], report["summary"])


def _require_bwrap() -> None:
    from sandbox.backends import unavailable_reason

    reason = unavailable_reason("bwrap")
    if reason and os.environ.get("PRACTICE_REQUIRE_SANDBOXES") == "1":
        pytest.fail(f"bwrap unavailable although PRACTICE_REQUIRE_SANDBOXES=1: {reason}")
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def web(course, tmp_path_factory):
    from fastapi.testclient import TestClient

    from web.app import create_app
    from web.settings import Settings

    _require_bwrap()
    settings = Settings(data_dir=tmp_path_factory.mktemp("cheat-data"), exercises_dir=course, sandbox="bwrap",
                        workers=1, secret_key="cheats", submissions_per_minute=1000,
                        submissions_per_minute_per_address=1000)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PRACTICE_POOL_SIZE", "1")  # one grading at a time: a second warm worker would only cost
        with TestClient(create_app(settings)) as client:
            yield client


@pytest.mark.sandbox
@pytest.mark.xdist_group("sandbox")
@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheat_through_the_web(name, web):
    from tests.web.test_api_submissions import read_events

    exercise, allowed = CHEATS[name]
    created = web.post(f"/api/exercises/{exercise}/submissions", json={"source": (HERE / name).read_text()})
    assert created.status_code == 202, created.text
    report = read_events(web, created.json()["events_url"])[-1]["report"]
    assert report["verdict"] != "ACCEPTED"
    assert Verdict(report["verdict"]) in allowed, (report["verdict"], report["summary"])
    assert NAMED.get(name, "") in report["summary"], report["summary"]
    assert web.get(f"/api/exercises/{exercise}/solution").status_code == 403
