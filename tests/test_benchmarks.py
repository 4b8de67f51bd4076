"""Every benchmark in benchmarks/ runs in its small mode in the suite (seconds, not minutes): a benchmark that no
longer starts fails here. Their figures are printed, never asserted; what is asserted is that each ran to its end
and printed the lines it exists for."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from judge.shared.paths import PROJECT_ROOT

BENCHMARKS = PROJECT_ROOT / "benchmarks"
SANDBOXED = [pytest.mark.sandbox, pytest.mark.xdist_group("sandbox")]

# benchmark -> (its small mode's arguments, a line each run must print, marks); one row per way it is run.
SMALL_MODES = {
    "latency-small": (["latency.py", "--small"], ["graph-break-step, web API", "first start (no layers)"],
                           SANDBOXED),
    "latency-cost": (["latency.py", "--cost", "--cost-runs", "1"],
                          ["reference  with cost", "other      with cost",  # the wall times, then CPU beside them
                           "reference  CPU with", "other      CPU with"], []),
    "soak-small": (["soak.py", "--small"], ["INTERNAL_ERROR: 0", "SOAK OK"], SANDBOXED),
    "slow_exercises": (["slow_exercises.py", "graph-break-step", "--runs", "1"],
                          ["graph-break-step", "worst run used"], []),
    "slow_exercises-cold": (["slow_exercises.py", "graph-break-step", "--cold", "--runs", "1"],
                            ["graph-break-step           cold run 1: ACCEPTED", "worst cold median"], []),
    "throughput": (["throughput.py", "--submissions", "2", "--burst", "4", "--grading-seconds", "0.05"],
                      ["3 worker(s):", "burst of 4"], []),
    "daemon_latency-small": (["daemon_latency.py", "--small"],
                             ["--no-daemon (two fresh processes)", "first grading (fresh, then starts the daemon)",
                              "later gradings (daemon warm)"], []),
    # On a machine without CUDA: says so, and how long a prestarted process takes to prepare, each way.
    # (the baseline and the path in use; `fresh` is between them and has its own tests in tests/sandbox)
    "gpu_latency-small": (["gpu_latency.py", "--small", "--paths", "before,zygote"],
                          ["prepare per successor, before", "prepare per successor, zygote",
                           "zygote and shared preparation started in"], []),
    # Its own PostgreSQL cluster (scripts/postgres.sh's binaries), two cpu workers, one of them killed mid-grading.
    "gpu_distributed-small": (["gpu_distributed.py", "--small"],
                              ["3/3 at their pin", "verdict ACCEPTED stored once: True", "kill test OK"], []),
    "grading_phases-small": (["grading_phases.py", "--small"],
                             ["runner: request compile", "verifier: checks (all)", "PHASES OK"], []),
    "cpu_tier-small": (["cpu_tier.py", "--small"], ["warm-up grading", "over 1 run(s)", "CPU-tier verdict in at most"],
                       []),
    "signin_flood-small": (["signin_flood.py", "--small"], ["/healthz", "/static/style.css"], []),
    "class_flood-small": (["class_flood.py", "--small"],
                          ["/healthz             flooded", "/static/style.css    flooded",
                           "/exercises/add-one   flooded", "own playground run", "429  Retry-After",
                           "runs the server dropped", "other address, time to verdict", "CLASS FLOOD OK"], []),
}


def test_every_benchmark_has_a_small_mode_here():
    assert {row[0][0] for row in SMALL_MODES.values()} == {p.name for p in BENCHMARKS.glob("*.py")}


def _env(args: list[str], request) -> dict[str, str]:
    env = dict(os.environ)
    from sandbox.settings import SandboxSettings

    # Past this test process's sandbox uids (4 pools x 64 slots), before the +512 and +768 other tests use: the soak
    # counts every process of its uids as left behind.
    env["PRACTICE_UID_BASE"] = str(SandboxSettings().uid_base + 256)
    env["PRACTICE_COMPILE_CACHE_DIR"] = str(request.getfixturevalue("layers_root"))  # the run's layers
    if args[0] == "throughput.py":
        from tests.databases import PostgresDatabases, postgres_server

        databases = PostgresDatabases(postgres_server())
        request.addfinalizer(databases.drop_all)
        args.extend(["--database-url", databases.create()])
    return env


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, marks=m) for n, (_, _, m) in SMALL_MODES.items()])
def test_small_mode(name, request):
    args, expected, _ = SMALL_MODES[name]
    args = list(args)
    env = _env(args, request)
    result = subprocess.run([sys.executable, str(BENCHMARKS / args[0]), *args[1:]], capture_output=True, text=True,
                            timeout=1800, env=env, cwd=PROJECT_ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-3000:]
    missing = [text for text in expected if text not in result.stdout]
    assert not missing, (missing, result.stdout[-4000:])
