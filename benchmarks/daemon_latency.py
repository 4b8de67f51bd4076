"""The background judge (cli/daemon.py): `python practice/judge.py graph-break-step FILE` from a fresh shell, side
by side:

- `--no-daemon`: every grading in two fresh processes (torch imported twice), as before the daemon;
- the first grading without a running daemon: graded the same way, then the daemon is started (target: no slower
  than `--no-daemon`);
- a second grading sent the moment the first ends (the daemon is still importing torch and warming its workers);
- later gradings once the daemon is warm (target: at most 2 s, the command's own start included).

Each figure is the median wall time of whole commands (a new Python process each, as a learner's shell runs
them); CPU is what the command and the processes it waited for used (a daemon's work is not in it). The daemon
lives in a folder of its own (PRACTICE_DAEMON_DIR), stopped between rounds. Every verdict must be ACCEPTED.

    python benchmarks/daemon_latency.py [--rounds 3] [--fresh-runs 3] [--warm-runs 3]
    python benchmarks/daemon_latency.py --small     # the suite's: one run each way
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cli import daemon  # noqa: E402 - after the path is set
from cli.daemon_protocol import DaemonSettings  # noqa: E402

EXERCISE = "graph-break-step"
WARM_TARGET_S = 2.0
READY_WAIT_S = 300.0


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def practice(env: dict, *args: str) -> tuple[float, float, subprocess.CompletedProcess]:
    """One command, as from a shell: (wall seconds, CPU seconds, the finished process)."""
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "practice" / "judge.py"), *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"`practice {' '.join(args)}` exited {done.returncode}, expected 0 (ACCEPTED):\n"
                         f"{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return wall, children_cpu() - cpu, done


def wait_ready(settings: DaemonSettings) -> None:
    deadline = time.monotonic() + READY_WAIT_S
    while time.monotonic() < deadline:
        found = daemon.status(settings)
        if found and found.get("state") == "ready":
            return
        time.sleep(0.2)
    raise SystemExit(f"the daemon was not ready within {READY_WAIT_S:g} s")


def line(label: str, times: list[tuple[float, float]], target: str = "") -> str:
    walls, cpus = [w for w, _ in times], [c for _, c in times]
    return (f"{label:<44} median {statistics.median(walls):6.2f} s over {len(walls)} run(s) "
            f"(min {min(walls):.2f}, max {max(walls):.2f}; CPU median {statistics.median(cpus):.2f} s){target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="first gradings, each with the daemon stopped before")
    parser.add_argument("--fresh-runs", type=int, default=3, help="gradings with --no-daemon")
    parser.add_argument("--warm-runs", type=int, default=3, help="gradings with a warm daemon, per round")
    parser.add_argument("--small", action="store_true", help="one run each way (the test suite's)")
    args = parser.parse_args()
    if args.small:
        args.rounds, args.fresh_runs, args.warm_runs = 1, 1, 1

    with tempfile.TemporaryDirectory(prefix="practice-daemon-bench-") as scratch:
        folder = Path(scratch) / "daemon"
        settings = DaemonSettings(dir=folder)
        solution = Path(scratch) / "mine.py"
        solution.write_text((ROOT / "exercises" / EXERCISE / "solutions" / "reference.py").read_text())
        env = {**os.environ, "PRACTICE_DAEMON": "1", "PRACTICE_DAEMON_DIR": str(folder),
               "PRACTICE_WORKSPACE": str(Path(scratch) / "workspace"), "PYTHONPATH": str(ROOT)}
        env.pop("PRACTICE_SANDBOX", None)
        grade = (EXERCISE, str(solution))
        print(f"{EXERCISE}: `python practice/judge.py {EXERCISE} FILE` from a fresh shell; {os.cpu_count()} CPU(s), "
              f"load average {os.getloadavg()[0]:.2f} at start (figures move with what else runs here)", flush=True)
        fresh, first, at_once, warm = [], [], [], []
        try:
            for _ in range(args.fresh_runs):
                fresh.append(practice(env, *grade, "--no-daemon")[:2])
            for _ in range(args.rounds):
                daemon.stop(settings)
                wall, cpu, done = practice(env, *grade)
                if "A background judge is starting" not in done.stderr:
                    raise SystemExit(f"the first grading did not start the daemon: {done.stderr[-2000:]}")
                first.append((wall, cpu))
                at_once.append(practice(env, *grade)[:2])
                wait_ready(settings)
                for _ in range(args.warm_runs):
                    wall, cpu, done = practice(env, *grade, "--json")
                    if not json.loads(done.stdout)["sandbox"].startswith("local"):
                        raise SystemExit("a warm grading did not go through the daemon")
                    warm.append((wall, cpu))
        finally:
            daemon.stop(settings)
        print(line("--no-daemon (two fresh processes)", fresh))
        verdict = "no slower" if statistics.median(w for w, _ in first) <= statistics.median(
            w for w, _ in fresh) * 1.1 else "SLOWER"
        print(line("first grading (fresh, then starts the daemon)", first,
                   f"  target: no slower than --no-daemon ({verdict}, within 10%)"))
        print(line("second at once (daemon still warming)", at_once))
        median = statistics.median(w for w, _ in warm)
        print(line("later gradings (daemon warm)", warm,
                   f"  target {WARM_TARGET_S:.1f} s ({'met' if median <= WARM_TARGET_S else 'MISSED'})"))


if __name__ == "__main__":
    main()
