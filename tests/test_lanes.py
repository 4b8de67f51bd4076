"""The lanes (tests/lanes.py) and their budgets (tests/lane_plugin.py): every test in one lane, `--lane` picks lanes,
a lane over its CPU budget fails the run. Small pytester suites laid out like ours stand in for the real one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.lane_plugin import tree_cpu
from tests.lanes import LANES, expand, lane_of, needs

ROOT = Path(__file__).resolve().parent.parent

# A small suite laid out like ours: one test for each lane, placed by its path, its fixtures or its parameters.
MINI_SUITE = {
    "tests/core/test_plain.py": "def test_plain():\n    pass\n",
    "tests/core/test_warm.py": "def test_warm(local):\n    pass\n",
    "tests/test_exercises.py": "def test_proof():\n    pass\n",
    "tests/sandbox/test_attacks.py": "def test_attack():\n    pass\n",
    "tests/notebook/test_magic.py": "def test_magic():\n    pass\n",
    "tests/web/browser/test_page.py": "def test_page():\n    pass\n",
    "tests/web/test_pg.py": ("import pytest\n\n\n@pytest.mark.parametrize('database_url', ['sqlite', 'postgresql'])\n"
                             "def test_db(database_url):\n    pass\n"),
}
CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef local():\n    return None\n"
MINI_LANES = {
    "tests/core/test_plain.py::test_plain": "inprocess",
    "tests/core/test_warm.py::test_warm": "warm",
    "tests/test_exercises.py::test_proof": "proofs",
    "tests/sandbox/test_attacks.py::test_attack": "sandbox",
    "tests/notebook/test_magic.py::test_magic": "cold",
    "tests/web/browser/test_page.py::test_page": "browser",
    "tests/web/test_pg.py::test_db[sqlite]": "inprocess",
    "tests/web/test_pg.py::test_db[postgresql]": "deploy",
}


@pytest.fixture(autouse=True)
def _no_plugins_but_ours(monkeypatch):
    """The inner runs load only the lanes plugin (-p tests.lane_plugin): a second each saved on entry points."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def mini(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(CONFTEST)
    for path, text in MINI_SUITE.items():
        pytester.path.joinpath(path).parent.mkdir(parents=True, exist_ok=True)
        pytester.path.joinpath(path).write_text(text, encoding="utf-8")
    return pytester


def collected(result: pytest.RunResult) -> list[str]:
    return sorted(line for line in result.outlines if "::" in line and not line.startswith(" "))


def lanes_of(items: list[pytest.Item]) -> dict[str, list[str]]:
    return {item.nodeid: [m.name.removeprefix("lane_") for m in item.iter_markers() if m.name.startswith("lane_")]
            for item in items}


def test_each_test_of_the_mini_suite_lands_in_its_lane(mini):
    items, _ = mini.inline_genitems("-p", "tests.lane_plugin")
    assert lanes_of(items) == {nodeid: [lane] for nodeid, lane in MINI_LANES.items()}


def test_a_lane_marker_selects_like_lane(mini):
    result = mini.runpytest("-p", "tests.lane_plugin", "--collect-only", "-q", "-m", "lane_warm or lane_cold")
    assert collected(result) == ["tests/core/test_warm.py::test_warm", "tests/notebook/test_magic.py::test_magic"]


@pytest.mark.parametrize("lanes, expected", [
    (["quick"], ["inprocess", "warm"]),
    (["proofs,cold"], ["proofs", "cold"]),
    (["deploy", "warm"], ["warm", "deploy"]),
])
def test_lane_picks_only_the_lanes_it_names(mini, lanes, expected):
    options = [part for lane in lanes for part in ("--lane", lane)]
    result = mini.runpytest("-p", "tests.lane_plugin", "--collect-only", "-q", *options)
    assert collected(result) == sorted(n for n, lane in MINI_LANES.items() if lane in expected)


def test_an_unknown_lane_is_a_usage_error_listing_the_lanes(mini):
    result = mini.runpytest("-p", "tests.lane_plugin", "--collect-only", "--lane", "quik")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown lane 'quik'" in result.stderr.str() and "quick (inprocess+warm)" in result.stderr.str()


def test_a_test_in_no_lane_fails_whatever_the_lane_asked_naming_the_table(mini):
    mini.makepyfile(**{"tests/elsewhere/test_new": "def test_new():\n    pass\n"})
    result = mini.runpytest("-p", "tests.lane_plugin", "--lane", "cold")
    result.assert_outcomes(passed=1, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*tests/elsewhere/test_new.py::test_new is in no lane: add a rule for it to RULES in "
                                 "tests/lanes.py*"])


SPIN = ("import time\n\n\ndef test_spin():\n    end = time.process_time() + 0.3\n"
        "    while time.process_time() < end:\n        pass\n")


def run_spin(pytester, budget: str, machine: str = "", *options: str):
    """The spinning test run with the lane plugin and `inprocess = budget` (then `machine`, a TOML table)."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(**{"tests/core/test_spin": SPIN})
    budgets = pytester.path / "budgets.toml"
    budgets.write_text(f"inprocess = {budget}\n{machine}", encoding="utf-8")
    return pytester.runpytest("-p", "tests.lane_plugin", "--lane-budgets", str(budgets), *options)


def test_the_tests_of_one_xdist_group_run_on_one_worker(pytester, monkeypatch):
    """scripts/test.sh's `--dist loadgroup`: a group's tests (one warm sandbox per worker, one layer build, the
    attacks' uids) stay on one worker, where pytest and pytest-xdist agree on how a group is named (pyproject.toml)."""
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")  # xdist is an entry point, in the workers too
    monkeypatch.setenv("WORKERS_FILE", str(pytester.path / "workers"))
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_grouped="import os\n\nimport pytest\n\n\n@pytest.mark.xdist_group('one')\n"
                        "@pytest.mark.parametrize('n', range(8))\ndef test_grouped(n):\n"
                        "    with open(os.environ['WORKERS_FILE'], 'a') as f:\n"
                        "        f.write(os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n")
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=8)
    workers = (pytester.path / "workers").read_text().split()
    assert len(workers) == 8 and len(set(workers)) == 1, workers


def test_the_lane_report_gives_each_test_its_lane_cpu_worker_and_span(pytester):
    before = time.time()
    result = run_spin(pytester, "30", "", "--lane-report", str(pytester.path / "lanes.json"))
    assert result.ret == pytest.ExitCode.OK
    [(name, row)] = json.loads((pytester.path / "lanes.json").read_text(encoding="utf-8")).items()
    assert name == "tests/core/test_spin.py::test_spin" and row["lane"] == "inprocess" and row["worker"] == "main"
    assert row["cpu_s"] >= 0.3 and before <= row["start"] <= row["stop"] - 0.3 <= time.time()


def test_the_summary_sets_what_the_lanes_counted_beside_what_the_machine_did(pytester):
    result = run_spin(pytester, "30")
    line = next(line for line in result.outlines if line.startswith("machine over the run: "))
    busy = float(line.split("machine over the run: ")[1].split(" core-s busy")[0])
    assert busy >= 0.3 and f"({os.cpu_count()} cores)" in line and "the lanes counted 0.0 CPU-s" not in line


def test_machine_core_seconds_reads_busy_and_idle_and_gives_none_without_a_stat(tmp_path):
    from tests.lane_plugin import _TICK, machine_core_seconds

    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice: guest is inside user already
    stat.write_text(f"cpu  {_TICK * 3} 0 {_TICK} {_TICK * 10} {_TICK * 2} 0 0 0 {_TICK * 3} 0\ncpu0 1 2 3\n")
    assert machine_core_seconds(str(stat)) == (4.0, 12.0)
    assert machine_core_seconds(str(tmp_path / "none")) is None
    stat.write_text("cpu  1 2\n")
    assert machine_core_seconds(str(stat)) is None


def test_a_lane_over_its_budget_fails_the_run_naming_lane_cpu_and_budget(pytester):
    result = run_spin(pytester, "0.1")
    result.assert_outcomes(passed=1)  # the test passed; the run did not
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    over = next(line for line in result.outlines if line.startswith("LANE OVER BUDGET"))
    assert "lane inprocess used 0." in over and "over its budget of 0.1 CPU-s" in over and "budgets.toml" in over
    assert any(line.startswith("inprocess = ") and "1 tests" in line for line in result.outlines)  # to paste


def test_a_lane_within_its_budget_passes_and_says_so(pytester):
    result = run_spin(pytester, "30")
    assert result.ret == pytest.ExitCode.OK
    line = next(line for line in result.outlines if line.startswith("inprocess "))
    assert "1 tests" in line and "budget     30   ok" in line


def test_a_slower_machine_than_the_budgets_grows_them_by_its_calibration(pytester):
    """Budgets set where the calibration took 1 ms: here it takes far longer, so 0.1 CPU-s grows past the spin's 0.3."""
    result = run_spin(pytester, "0.1", "[machine]\ncalibration_s = 0.001\n")
    assert result.ret == pytest.ExitCode.OK
    machine = next(line for line in result.outlines if line.startswith("machine: calibration"))
    assert "against 0.0010 when the budgets were set: budgets x " in machine
    assert any(line.startswith("calibration_s = ") for line in result.outlines)  # to paste


def test_a_faster_machine_than_the_budgets_keeps_them(pytester):
    result = run_spin(pytester, "0.1", "[machine]\ncalibration_s = 1000\n")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    over = next(line for line in result.outlines if line.startswith("LANE OVER BUDGET"))
    assert "over its budget of 0.1 CPU-s" in over and "machine's speed" not in over
    assert any(line.endswith("when the budgets were set: budgets as kept") for line in result.outlines)


def test_the_suite_has_a_budget_for_every_lane_and_the_machine_that_set_them():
    import tomllib

    kept = tomllib.loads((ROOT / "tests" / "lane_budgets.toml").read_text(encoding="utf-8"))
    machine = kept.pop("machine")
    assert sorted(kept) == sorted(LANES) and all(seconds > 0 for seconds in kept.values())
    assert machine["calibration_s"] > 0


def test_every_test_of_the_real_suite_has_exactly_one_lane(pytester):
    """The real suite collected in this process (its modules are imported already in a worker that collected them):
    the collection fails if a test has no lane, and each test carries one lane marker."""
    items, _ = pytester.inline_genitems(str(ROOT / "tests"), "--rootdir", str(ROOT), "-p", "no:xdist",
                                        "-p", "no:randomly")
    found = lanes_of(items)
    assert len(found) > 1000 and all(len(lanes) == 1 for lanes in found.values())
    assert {lanes[0] for lanes in found.values()} == set(LANES)  # and no lane is empty


@pytest.mark.parametrize("nodeid, markers, fixtures, params, lane", [
    ("tests/core/test_outcome.py::test_x", set(), set(), {}, "inprocess"),
    ("tests/core/test_new.py::test_x", set(), {"local"}, {}, "warm"),
    ("tests/web/test_new.py::test_x[postgresql]", set(), {"database_url"}, {"database_url": "postgresql"}, "deploy"),
    ("tests/web/test_new.py::test_x[sqlite]", set(), {"database_url"}, {"database_url": "sqlite"}, "inprocess"),
    ("tests/cli/test_new.py::test_x", {"postgres"}, set(), {}, "deploy"),
    ("tests/core/test_new.py::test_x", {"sandbox"}, {"local"}, {}, "sandbox"),
    ("tests/core/test_new.py::test_x", {"slow"}, {"local"}, {}, "proofs"),
    ("tests/sandbox/test_new.py::test_x", set(), set(), {}, "sandbox"),
    ("tests/web/browser/test_new.py::test_x", set(), set(), {}, "browser"),
    ("tests/test_exercises.py::test_solution_gets_its_pinned_verdict[a:b]", set(), {"local"}, {}, "proofs"),
    ("tests/core/test_verdicts.py::test_verdict_in_a_fresh_process[crash]", {"slow"}, set(), {}, "cold"),
])
def test_what_a_test_asks_for_decides_its_lane(nodeid, markers, fixtures, params, lane):
    assert lane_of(nodeid, markers, fixtures, params) == lane


def test_quick_needs_no_service_and_all_needs_every_one():
    assert expand(["quick"]) == ["inprocess", "warm"] and needs(["quick"]) == []
    assert needs([]) == needs(["all"]) == ["postgres", "sandboxes", "chromium"]
    assert needs(["warm,deploy"]) == ["postgres", "sandboxes"]


def test_scripts_test_sh_can_ask_before_any_virtualenv_exists():
    """tests/lanes.py imports only the standard library: the system's python3 runs it."""
    result = subprocess.run(["python3", "-I", str(ROOT / "tests" / "lanes.py"), "needs", "browser"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.split() == ["chromium"], result.stderr


def test_tree_cpu_counts_a_child_s_cpu_while_it_runs_and_after_it_is_reaped():
    start = tree_cpu()
    child = subprocess.Popen([sys.executable, "-S", "-c", "import time\nend = time.process_time() + 0.4\n"
                              "while time.process_time() < end: pass\nimport sys; sys.stdout.write('x'); "
                              "sys.stdout.flush(); time.sleep(30)"], stdout=subprocess.PIPE)
    try:
        assert child.stdout.read(1) == b"x"
        time.sleep(0.05)
        assert tree_cpu() - start >= 0.35  # alive: read from /proc
    finally:
        child.kill()
        child.wait()
    assert 0.35 <= tree_cpu() - start < 0.7  # reaped: RUSAGE_CHILDREN took over what /proc showed, counted once


@pytest.mark.parametrize("lane", ["sandbox", "deploy"])
def test_a_lane_named_like_a_folder_of_the_checkout_is_still_a_lane(lane):
    """`pytest --lane sandbox` from the checkout: "sandbox" is also a folder there, and pytest must still know
    `--lane` (the plugin is declared in the root conftest.py, loaded whatever the arguments)."""
    result = subprocess.run([sys.executable, "-m", "pytest", "--lane", lane, "--markers"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
