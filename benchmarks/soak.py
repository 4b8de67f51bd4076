"""Soak: one server process grades hundreds of mixed submissions with bubblewrap, then still grades an honest one
at its normal speed and has leaked nothing.

    python benchmarks/soak.py [--count 500] [--learners 3] [--workers 2] [--honest-runs 20]
    python benchmarks/soak.py --small      # the suite's mode: one submission of each kind, timings not judged

The web app runs in this process (FastAPI's TestClient, the embedded queue, SQLite in a temporary folder) with the
bwrap sandbox and its compile cache layers, on a course made of the fake course's add-one (most submissions:
correct, wrong, syntax error, time limit, memory limit, output flood, crash) and the exercises the cheats of
tests/cheats/submissions attack, copied as tests/cheats builds its course (`make_course`: whatever exercises its
table names). Several learners submit at once, each waiting for its verdict before the next.

It prints the counts per kind and verdict and the honest submission's latency before and after the soak (median
and 95th percentile side by side), then fails (exit 1) on any INTERNAL_ERROR, any verdict a kind does not allow,
an honest median after the soak slower than 1.5x (+0.5 s) its median before (not in --small, whose single runs say
nothing about speed), or anything left behind: a process of a sandbox uid, a run cgroup, a mount of this process's
namespace, a file in its temporary folder.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# Everything this process and its sandbox create on the host's /tmp goes here, so that leaks can be counted.
PRIVATE_TMP = Path(tempfile.mkdtemp(prefix="practice-soak-"))
tempfile.tempdir = str(PRIVATE_TMP)
os.environ["TMPDIR"] = str(PRIVATE_TMP)
# Sandbox uids of their own (the test suite uses 61000 and 62000+), so that leftovers are this run's.
os.environ.setdefault("PRACTICE_UID_BASE", "58000")

from tests.cheats.test_cheats import (  # noqa: E402
    CHEATS,
    HERE as CHEATS_DIR,
    make_course as make_cheat_course,
)
from tests.sandbox.leftovers import sandbox_processes  # noqa: E402

FAKE = ROOT / "tests" / "fake_course" / "add-one"
ADD_ONE_SECONDS = 20  # add-one's time limit here (--add-one-seconds), in CPU time (sandbox/clock.py): a busy loop
# costs this much CPU, a sleep 3x this in wall time; an honest grading uses well under a second of CPU, though it took
# over 6 s of wall time on a loaded machine (load 8 to 20 on 2 cores)
SMALL_ADD_ONE_SECONDS = 5  # --small's: its one busy loop and one sleep cost this much (15 s of wall), not 20 and 60;
# an honest add-one grading in a warm fork stays under a CPU-second however loaded the machine
CHEAT_SECONDS = 60  # the cheats' exercises: time for an honest grading on a loaded machine
NEVER_SECONDS = 4  # the copy for the cheat that never answers (tests/cheats' `<exercise>-never`): cut when idle 3x this

# kind -> (weight per round, the verdicts allowed, sources); "cheat" sources come from tests/cheats.
KINDS: dict[str, tuple[int, set[str], list[str]]] = {
    "correct": (20, {"ACCEPTED"}, [
        "import torch\n\n\ndef f(x):\n    return x + 1\n",
        "import torch\n\n\ndef f(x):\n    return torch.add(x, 1)\n",
        "import torch\n\n\ndef f(x):\n    y = x.clone()\n    y += 1\n    return y\n",
    ]),
    "wrong": (8, {"WRONG_ANSWER"}, [
        "import torch\n\n\ndef f(x):\n    return x + 2\n",
        "import torch\n\n\ndef f(x):\n    return x - 1\n",
        "import torch\n\n\ndef f(x):\n    return x * 1.0001 + 1\n",
    ]),
    "syntax_error": (2, {"LOAD_ERROR", "COMPILE_ERROR"}, ["import torch\n\ndef f(x)\n    return x + 1\n"]),
    "time_limit": (2, {"TIME_LIMIT"}, [
        "while True:\n    pass\n",
        "import time\ntime.sleep(3600)\n",
    ]),
    "memory_limit": (2, {"MEMORY_LIMIT"}, [
        "import torch\nkeep = [torch.ones(64 * 2**20) for _ in range(64)]\n",
        "keep = []\nwhile True:\n    keep.append(bytearray(50 * 2**20))\n",
    ]),
    "output_flood": (2, {"OUTPUT_LIMIT"}, ["while True:\n    print('x' * 1000)\n"]),
    "crash": (2, {"RUNTIME_ERROR"}, [
        "import ctypes\nctypes.string_at(0)\n",
        "import ctypes\n\n\ndef f(x):\n    ctypes.string_at(0)\n    return x + 1\n",
    ]),
    "cheat": (2, set(), []),  # each cheat's own allowed verdicts (tests/cheats), never ACCEPTED
}


def make_course(folder: Path, add_one_seconds: int = ADD_ONE_SECONDS) -> Path:
    """add-one with a short time limit, and the exercises the cheats attack, as tests/cheats builds them."""
    course = folder / "course"
    shutil.copytree(FAKE, course / "add-one")
    _set_time(course / "add-one", add_one_seconds)
    make_cheat_course(course, CHEAT_SECONDS, NEVER_SECONDS)
    return course


def _set_time(folder: Path, seconds: int) -> None:
    toml = folder / "exercise.toml"
    text = toml.read_text(encoding="utf-8")
    start = text.index("time_seconds = ")
    end = text.index("\n", start)
    toml.write_text(text[:start] + f"time_seconds = {seconds}" + text[end:], encoding="utf-8")


def plan(count: int) -> list[tuple[str, str, str, set[str]]]:
    """(kind, exercise, source, allowed verdicts) for `count` submissions, the kinds interleaved by weight; the
    first len(KINDS) are one of each kind."""
    cheats = sorted(CHEATS)
    rotation = [kind for kind, (weight, _, _) in KINDS.items() for _ in range(weight)]
    spread = [rotation[(i * 7) % len(rotation)] for i in range(len(rotation))]  # spread the kinds over a round
    for kind in KINDS:  # a round that begins with each kind once
        spread.remove(kind)
    order = list(KINDS) + spread
    seen: collections.Counter = collections.Counter()
    items = []
    for i in range(count):
        kind = order[i % len(order)]
        n = seen[kind]
        seen[kind] += 1
        if kind == "cheat":
            name = cheats[n % len(cheats)]
            exercise, allowed = CHEATS[name]
            items.append((f"cheat:{name}", exercise, (CHEATS_DIR / name).read_text(encoding="utf-8"),
                          {v.value for v in allowed}))
        else:
            _, allowed, sources = KINDS[kind]
            items.append((kind, "add-one", sources[n % len(sources)], allowed))
    return items


class Learner:
    """One browser: its own cookie jar on the app's in-process transport."""

    def __init__(self, client):
        import httpx

        self.http = httpx.Client(transport=client._transport, base_url=str(client.base_url), timeout=900)

    def grade(self, exercise: str, source: str) -> tuple[dict, float]:
        started = time.perf_counter()
        created = self.http.post(f"/api/exercises/{exercise}/submissions", json={"source": source})
        created.raise_for_status()
        url = created.json()["url"]
        delay = 0.05
        while True:
            body = self.http.get(url).json()
            if body["status"] == "done":
                return body["report"], time.perf_counter() - started
            time.sleep(delay)
            delay = min(0.5, delay * 1.5)


# ---- what must not be left behind ----------------------------------------------------------------------------

def descendants() -> list[str]:
    """Processes below this one (workers of the pools while the app is up)."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    names = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        pid, rest = int(text.split(" ", 1)[0]), text[text.rindex(")") + 2:].split()
        children[int(rest[1])].append(pid)
        names[pid] = text[text.index("(") + 1:text.rindex(")")]
    found, todo = [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(f"{child} {names.get(child, '?')}")
            todo.append(child)
    return found


def run_cgroups() -> list[str]:
    from sandbox.settings import SandboxSettings

    base = SandboxSettings().base_cgroup()
    return sorted(str(p) for d in base.dirs.values() if d.exists() for p in d.glob("*/run-*"))


# Mounts the host's Docker engine makes for other people's containers: this process's namespace is the host's, and
# the soak runs no container (its sandbox is bwrap, whose mounts live in namespaces of their own).
OTHERS_MOUNTS = ("/run/docker/", "/var/lib/docker/")


def mounts() -> list[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    points = (line.split(" - ")[0].split(" ", 4)[4] for line in lines)
    return sorted(p for p in points if not p.startswith(OTHERS_MOUNTS))


def temp_files(data: Path) -> list[str]:
    return sorted(str(p.relative_to(PRIVATE_TMP)) for p in PRIVATE_TMP.rglob("*")
                  if data not in p.parents and p != data)


def p95(times: list[float]) -> float:
    """The 95th percentile (nearest rank)."""
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, max(0, -(-95 * len(ordered) // 100) - 1))]


# ---- the run --------------------------------------------------------------------------------------------------

def honest_times(learner: Learner, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        report, seconds = learner.grade("add-one", KINDS["correct"][2][0])
        if report["verdict"] != "ACCEPTED":
            raise SystemExit(f"the honest submission got {report['verdict']}: {report['summary']}")
        times.append(seconds)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500, help="mixed submissions to grade")
    parser.add_argument("--learners", type=int, default=3, help="learners submitting at once")
    parser.add_argument("--workers", type=int, default=2, help="gradings at once (the server's workers)")
    parser.add_argument("--honest-runs", type=int, default=20, help="honest gradings timed before and after")
    parser.add_argument("--add-one-seconds", type=int, default=None,
                        help="add-one's time limit in CPU seconds (an honest grading must fit in it, load or not; "
                             f"default {ADD_ONE_SECONDS}, {SMALL_ADD_ONE_SECONDS} in --small)")
    parser.add_argument("--small", action="store_true",
                        help="the suite's mode: one submission of each kind, 2 learners, 1 honest run each side")
    args = parser.parse_args()
    if args.small:
        args.count, args.learners, args.honest_runs = len(KINDS), 2, 1
    if args.add_one_seconds is None:
        args.add_one_seconds = SMALL_ADD_ONE_SECONDS if args.small else ADD_ONE_SECONDS

    from fastapi.testclient import TestClient

    from judge.parent import cache_layers
    from judge.parent.exercise import load_course
    from sandbox.backends import unavailable_reason
    from web.app import create_app
    from web.settings import Settings

    reason = unavailable_reason("bwrap")
    if reason:
        raise SystemExit(f"bwrap is unavailable: {reason}")
    course = make_course(PRIVATE_TMP, args.add_one_seconds)
    data = PRIVATE_TMP / "data"
    started = time.perf_counter()
    exercises = load_course(course)
    cache = cache_layers.for_backend("bwrap", exercises)
    if cache is not None:  # complete before the server starts: its background build then has nothing to do
        cache_layers.build(cache, exercises, say=print)
    print(f"compile cache layers ready in {time.perf_counter() - started:.0f} s "
          f"({'on' if cache is not None else 'off'})")
    mounts_before = mounts()
    settings = Settings(data_dir=data, exercises_dir=course, sandbox="bwrap", workers=args.workers,
                        secret_key="soak", submissions_per_minute=100_000,
                        submissions_per_minute_per_address=100_000, max_queued_submissions=100_000)
    items = plan(args.count)
    counts: collections.Counter = collections.Counter()
    problems: list[str] = []
    lock = threading.Lock()
    with TestClient(create_app(settings), base_url="http://localhost") as client:
        first = Learner(client)
        if not args.small:  # every warm worker of both pools has forked once (PRACTICE_POOL_SIZE 2)
            honest_times(first, 2 * 2 + 1)
        before = honest_times(first, args.honest_runs)
        load_before = os.getloadavg()
        temp_before = temp_files(data)
        queue = list(enumerate(items))
        soak_started = time.perf_counter()

        def learner_loop() -> None:
            learner = Learner(client)
            while True:
                with lock:
                    if not queue:
                        return
                    i, (kind, exercise, source, allowed) = queue.pop(0)
                try:
                    report, _ = learner.grade(exercise, source)
                    verdict = report["verdict"]
                except Exception as exc:  # noqa: BLE001 - counted, the soak goes on
                    verdict, report = f"HTTP-ERROR {type(exc).__name__}", {"summary": str(exc)}
                with lock:
                    counts[(kind.split(":")[0], verdict)] += 1
                    if verdict == "INTERNAL_ERROR" or verdict not in allowed or (
                            kind.startswith("cheat") and verdict == "ACCEPTED"):
                        problems.append(f"#{i} {kind}: {verdict} ({str(report.get('summary'))[:200]})")
                    done = sum(counts.values())
                    if done % 50 == 0:
                        print(f"  {done}/{len(items)} graded, {time.perf_counter() - soak_started:.0f} s", flush=True)

        threads = [threading.Thread(target=learner_loop, name=f"learner-{n}") for n in range(args.learners)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        soak_seconds = time.perf_counter() - soak_started
        after = honest_times(first, args.honest_runs)
        load_after = os.getloadavg()
        leaks = {"sandbox-uid processes": sandbox_processes(exclude=set()), "run cgroups": run_cgroups(),
                 "new mounts": sorted(set(mounts()) - set(mounts_before)),
                 "new temporary files": sorted(set(temp_files(data)) - set(temp_before))}
        workers_up = len(descendants())
    deadline = time.monotonic() + 30  # retired workers are closed in the background
    while descendants() and time.monotonic() < deadline:
        time.sleep(0.5)
    leaks["processes after close"] = descendants()

    print(f"\n{len(items)} submissions in {soak_seconds:.0f} s ({len(items) / soak_seconds:.2f}/s) by "
          f"{args.learners} learners on {args.workers} workers; "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on "
          f"{os.cpu_count()} cores")
    by_kind: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for (kind, verdict), n in counts.items():
        by_kind[kind][verdict] += n
    for kind in KINDS:
        if by_kind.get(kind):
            print(f"  {kind:<13} {sum(by_kind[kind].values()):>4}  " +
                  ", ".join(f"{v} {n}" for v, n in sorted(by_kind[kind].items())))
    internal = sum(n for (_, v), n in counts.items() if v == "INTERNAL_ERROR")
    print(f"INTERNAL_ERROR: {internal}; unexpected verdicts: {len(problems)}")
    for line in problems[:20]:
        print("   ", line)
    b, a = statistics.median(before), statistics.median(after)
    slow = a > max(1.5 * b, b + 0.5) and not args.small
    print(f"honest add-one through the web ({args.honest_runs} runs each side):")
    print(f"  {'':<8}{'median':>9}{'p95':>9}{'min':>9}{'max':>9}   load average (1, 5, 15 min) when timed")
    for label, times, load in (("before", before, load_before), ("after", after, load_after)):
        print(f"  {label:<8}{statistics.median(times):>8.3f}s{p95(times):>8.3f}s{min(times):>8.3f}s"
              f"{max(times):>8.3f}s   {' '.join(f'{x:.1f}' for x in load)}")
    judged = 'not judged in --small' if args.small else 'SLOWER' if slow else 'ok'
    print(f"  after/before median {a / b:.2f}x ({judged})")
    print(f"processes under the server while up: {workers_up} (the warm workers)")
    for what, found in leaks.items():
        print(f"left behind, {what}: {len(found)}" + (f" {found[:5]}" if found else ""))
    failed = bool(internal or problems or slow or any(leaks.values()))
    print("SOAK FAILED" if failed else "SOAK OK")
    shutil.rmtree(PRIVATE_TMP, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
