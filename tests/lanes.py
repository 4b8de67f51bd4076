"""The suite's lanes: every test runs in exactly one, decided here by what it needs.

A lane groups tests that need the same things (nothing, warm graders, bubblewrap and Docker, a PostgreSQL server, a
browser) and carries a CPU-seconds budget (tests/lane_budgets.toml, checked by tests/lane_plugin.py). `RULES` is
read top to bottom and the first rule that matches a test gives its lane; a test that no rule matches fails the
collection, naming this file. Markers, fixtures and parameters come before paths so that a new test that asks for
a warm grader (the `local` fixture), a PostgreSQL database or a sandbox backend lands in its lane by itself; a new
file in a folder listed last (tests/core, tests/web, ...) lands in `inprocess` unless it asks for more.

Pure standard library, so that scripts/test.sh can ask it what a lane needs before any virtualenv exists:
`python3 tests/lanes.py needs quick` prints the services to set up (postgres, sandboxes, chromium), one a line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True)
class Lane:
    name: str
    what: str
    needs: tuple[str, ...] = ()  # what scripts/test.sh sets up: postgres, sandboxes (bwrap, Docker), chromium


LANES = {lane.name: lane for lane in (
    Lane("inprocess", "everything in the test's own process: no grading subprocess, no server"),
    Lane("warm", "grades through warm forked graders (the `local` backend, the `local` fixture): the fake course"),
    Lane("proofs", "the course proven (tests/test_exercises.py) and tests heavy with real exercises or Inductor "
                   "compiles (marked slow): nothing beyond the warm lane's needs, but minutes of CPU"),
    Lane("sandbox", "bubblewrap and Docker: the attacks, the cheats, the compile-cache layers", ("sandboxes",)),
    Lane("cold", "fresh processes where a cold start is what is tested: the CLI's one grading, the notebook, "
                 "`--sandbox none`"),
    Lane("browser", "Playwright driving Debian's chromium", ("chromium",)),
    Lane("deploy", "a PostgreSQL server: every test on PostgreSQL, `practice worker`s, the deploy Procfiles, the "
                   "benchmarks' small modes", ("postgres", "sandboxes")),
)}
# `--lane quick`: the inner loop, under two minutes on two cores.
GROUPS = {"quick": ("inprocess", "warm"), "all": tuple(LANES)}


@dataclass(frozen=True)
class Rule:
    """Matches a test when every criterion given matches: `nodeids` (any of these fnmatch patterns on the node id,
    e.g. "tests/web/*" or "tests/cli/test_cli.py::test_grade_*"), `marker`, `fixture` (in the test's closure) and
    `param` ((name, value) of its parametrization; name "*": any)."""

    lane: str
    nodeids: tuple[str, ...] = ()
    marker: str | None = None
    fixture: str | None = None
    param: tuple[str, str] | None = None
    why: str = ""

    def matches(self, nodeid: str, markers: set[str], fixtures: set[str], params: dict) -> bool:
        return ((not self.nodeids or any(fnmatchcase(nodeid, p) for p in self.nodeids))
                and (self.marker is None or self.marker in markers)
                and (self.fixture is None or self.fixture in fixtures)
                and (self.param is None or any(self.param[0] in (name, "*") and str(value) == self.param[1]
                                               for name, value in params.items())))


RULES: tuple[Rule, ...] = (
    # What a test needs that a lane is made of.
    Rule("browser", ("tests/web/browser/*",), why="drives chromium"),
    Rule("browser", marker="browser"),
    Rule("proofs", ("tests/test_exercises.py::*",), why="the course's exercises, every solution graded"),
    Rule("deploy", ("tests/test_benchmarks.py::*",), why="benchmarks' small modes start servers, graders, soaks"),
    Rule("deploy", ("tests/web/test_cluster.py::*", "tests/web/test_deploy.py::*", "tests/web/test_distributed.py::*"),
         why="`practice worker`s and web processes on one PostgreSQL"),
    Rule("deploy", marker="postgres"),
    Rule("deploy", fixture="postgres"),
    Rule("deploy", param=("*", "postgresql"), why="the PostgreSQL half of a test run on both databases"),
    Rule("warm", ("tests/sandbox/test_local.py::*",), why="the local backend itself"),
    Rule("sandbox", ("tests/sandbox/*", "tests/cheats/*"), why="bwrap, Docker, attacks, compile-cache layers"),
    Rule("sandbox", marker="sandbox"),
    # Fresh processes: each grading costs about 14 CPU-s of imports, or `practice prove` starts warm workers of its own.
    Rule("cold", ("tests/core/test_verdicts.py::test_verdict_in_a_fresh_process*",
                  "tests/core/test_verdicts.py::test_hidden_tests_are_gone_before_the_submission_runs*fresh*",
                  "tests/core/test_assert_messages.py::*",
                  "tests/core/test_environment.py::test_a_*",
                  "tests/core/test_grading.py::test_a_set_up_failure_is_retried_once",
                  "tests/core/test_grading.py::test_a_runner_that_cannot_start_*",
                  "tests/cli/test_cli.py::test_grade_*",
                  "tests/cli/test_cli.py::test_check_*",
                  "tests/cli/test_cli.py::test_a_scaffold_*",
                  "tests/cli/test_cli.py::test_a_failing_proof_*",
                  "tests/cli/test_cli.py::test_watch_*",
                  "tests/cli/test_cli.py::test_the_proving_command_*",
                  "tests/cli/test_lang_and_admin.py::test_a_wrong_solution_is_graded_*",
                  "tests/cli/test_lang_and_admin.py::test_show_graphs_*",
                  "tests/cli/test_lang_and_admin.py::test_the_watch_loop_*",
                  "tests/cli/test_output.py::test_a_real_grading_*",
                  "tests/cli/test_submit.py::test_login_*",
                  "tests/notebook/*"),
         why="a grading in fresh processes (`--sandbox none`, the CLI's one grading, the notebook)"),
    Rule("cold", ("tests/cli/test_cli.py::test_new_scaffolds_*",  # `practice check` starts warm workers of its own
                  "tests/web/test_grader_state.py::test_a_gpu_submission_*",  # the web's real grader, its own pool
                  "tests/core/test_vec_isa.py::test_the_probe_runs_*",  # the probe's compiler in fresh processes
                  "tests/core/test_prepared_process.py::*"),  # a runner's stand-in and a new interpreter: torch twice
         why="its own grader pool or compiler processes: 6-12 CPU-s each (measured 2026-12-02)"),
    Rule("cold", ("tests/cli/test_daemon.py::*",),
         why="`practice` processes starting background judges, whose warm workers import torch behind the test: "
             "50 s of the quick lane's 264 test-seconds (measured 2026-12-03)"),
    # Heavy in a quick lane's clothes: real exercises, Inductor's C++ compiles.
    Rule("proofs", ("tests/core/test_cost.py::test_one_fused_kernel_*",
                    "tests/core/test_cost.py::test_after_a_graph_break_*",
                    "tests/core/test_cost.py::test_an_extern_call_*",
                    "tests/core/test_cost.py::test_a_rebuilt_graph_has_no_dynamo_figures_*",
                    "tests/core/test_cost.py::test_a_checks_own_inductor_compile_*",
                    "tests/core/test_loading.py::test_bytes_that_are_no_cache_artifacts_*"),  # Inductor's cache loads
         why="real Inductor compiles in the test's process: 3-13 CPU-s each (measured 2026-12-02)"),
    Rule("proofs", marker="slow", why="marked slow: real exercises or Inductor compiles"),
    Rule("warm", ("tests/core/test_verdicts.py::*",), why="the fake course's verdicts, graded by warm forks"),
    Rule("warm", fixture="local", why="grades through the shared warm local sandbox"),
    Rule("inprocess", ("tests/core/*", "tests/checks/*", "tests/cli/*", "tests/web/*", "tests/test_lanes.py::*",
                       "tests/test_rendered_text.py::*", "tests/test_checkout.py::*")),
)


class NoLane(LookupError):
    pass


def lane_of(nodeid: str, markers: set[str], fixtures: set[str], params: dict) -> str:
    """The lane of one test: the first rule of `RULES` that matches it."""
    for rule in RULES:
        if rule.matches(nodeid, markers, fixtures, params):
            return rule.lane
    raise NoLane(nodeid)


def expand(names: list[str]) -> list[str]:
    """Lane names from `--lane` values: each a lane, a group (quick, all) or a comma-separated list of them."""
    lanes: list[str] = []
    for value in names:
        for name in filter(None, (part.strip() for part in value.split(","))):
            if name not in LANES and name not in GROUPS:
                raise ValueError(f"unknown lane {name!r}: the lanes are {', '.join(LANES)}; the groups "
                                 + ", ".join(f"{g} ({'+'.join(m)})" for g, m in GROUPS.items()))
            lanes += [lane for lane in GROUPS.get(name, (name,)) if lane not in lanes]
    return lanes


def needs(names: list[str]) -> list[str]:
    """The services the lanes named need, in a stable order."""
    wanted = {need for lane in expand(names or ["all"]) for need in LANES[lane].needs}
    return [need for need in ("postgres", "sandboxes", "chromium") if need in wanted]


if __name__ == "__main__":  # python3 tests/lanes.py needs LANE... (scripts/test.sh)
    if len(sys.argv) < 2 or sys.argv[1] != "needs":
        sys.exit("usage: tests/lanes.py needs [LANE|GROUP|A,B ...]")
    try:
        print("\n".join(needs(sys.argv[2:])))
    except ValueError as exc:
        sys.exit(f"tests/lanes.py: {exc}")
