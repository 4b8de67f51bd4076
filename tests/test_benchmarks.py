"""The benchmarks' small modes run in the suite: they must work (their figures are printed, never asserted)."""

import subprocess
import sys

import pytest

from judge.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow


def test_latency_cost_small_mode():
    """benchmarks/latency.py --cost --cost-runs 1: the Inductor exercise with and without its cost section."""
    result = subprocess.run([sys.executable, str(PROJECT_ROOT / "benchmarks" / "latency.py"), "--cost",
                             "--cost-runs", "1"], capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines() if "with cost" in line]
    assert [line.split()[1] for line in lines] == ["reference", "other"], result.stdout
    assert all("without" in line and "target +15%" in line for line in lines), result.stdout
    cpu = [line for line in result.stdout.splitlines() if "CPU with" in line]  # beside the wall times
    assert [line.split()[1] for line in cpu] == ["reference", "other"], result.stdout


def test_signin_flood_small_mode():
    """benchmarks/signin_flood.py --small: /healthz and a static file, idle and while sign-ins hash."""
    result = subprocess.run([sys.executable, str(PROJECT_ROOT / "benchmarks" / "signin_flood.py"), "--small"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert [line.split()[0] for line in result.stdout.splitlines() if " ms, p95 " in line] == [
        "/healthz", "/healthz", "/static/style.css", "/static/style.css"], result.stdout
