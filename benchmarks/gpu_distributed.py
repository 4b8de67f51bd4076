"""The distributed GPU path end to end, as a class deploys it (docs/deploy.md, "A GPU grading machine"):

- PostgreSQL: a throwaway cluster from Debian's binaries (installed, or unpacked under `--pg-root` by
  `scripts/gpu_carry.sh install`, run with LD_LIBRARY_PATH; as an unprivileged user when started as root), or the
  server that `--database-url` names;
- `practice db upgrade`, `practice serve` grading nothing itself, two `practice worker --queue gpu` and one
  `practice worker --queue cpu`, all `--sandbox none` (docs/deploy.md says why);
- every GPU exercise's pinned solutions (reference, other solutions, starter, wrong/) submitted at once through the
  web API, each by a learner of its own: each must get its pinned verdict (and, for wrong/, its failing check);
- a worker SIGKILLed while it grades a submission: the other worker of its queue must finish it, with exactly
  one verdict stored and streamed.

    python benchmarks/gpu_distributed.py [--pg-root .carry-gpu/pg] [--concurrency 4]
    python benchmarks/gpu_distributed.py --small     # no CUDA needed: the fixture course, two cpu workers

Prints a verdict table, the kill test's outcome and a summary line; exits 1 when anything missed its pin.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.shared.paths import EXERCISES_DIR, PROJECT_ROOT
from tests.web.live import free_port
from tests.web.procs import Proc

SMALL_COURSE, SMALL_EXERCISE = PROJECT_ROOT / "tests" / "fake_course", "add-one"  # --small: the judge's fake course
CPU_CHECK = "graph-break-step"  # one CPU exercise's reference beside the GPU ones: the cpu queue's worker serves it
NOBODY = 65534  # PostgreSQL refuses to run as root: a root caller's cluster belongs to this uid


class Cluster:
    """A throwaway PostgreSQL cluster (initdb, pg_ctl) in `folder`, from the binaries under `root`."""

    def __init__(self, root: Path, folder: Path):
        found = sorted(glob.glob(str(root / "usr/lib/postgresql/*/bin/postgres")))
        if not found:
            raise SystemExit(f"no PostgreSQL under {root}: scripts/gpu_carry.sh install unpacks one, or "
                             "apt-get install postgresql")
        self.bin = Path(found[-1]).parent
        libs = [root / "usr/lib/x86_64-linux-gnu", root / "lib/x86_64-linux-gnu"]
        self.env = dict(os.environ)
        if root != Path("/"):
            self.env["LD_LIBRARY_PATH"] = ":".join(str(p) for p in libs if p.is_dir())
        self.folder, self.port = folder, free_port()
        self.user = NOBODY if os.geteuid() == 0 else None

    def _run(self, *args: str) -> None:
        done = subprocess.run([str(self.bin / args[0]), *args[1:]], env=self.env, capture_output=True, text=True,
                              user=self.user, group=self.user, extra_groups=[] if self.user else None, timeout=120)
        if done.returncode != 0:
            log = self.folder / "server.log"
            raise SystemExit(f"{args[0]} failed: {done.stdout[-1500:]}{done.stderr[-1500:]}"
                             f"{log.read_text()[-1500:] if log.exists() else ''}")

    def start(self) -> str:
        self.folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.folder, 0o755)
        for parent in self.folder.parents:  # the cluster's user must reach its folder
            if parent.stat().st_mode & 0o005 != 0o005 and self.user is not None:
                os.chmod(parent, parent.stat().st_mode | 0o005)
        if self.user is not None:
            os.chown(self.folder, self.user, self.user)
        self._run("initdb", "-D", str(self.folder / "data"), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--no-locale")
        self._run("pg_ctl", "-D", str(self.folder / "data"), "-l", str(self.folder / "server.log"), "-w", "-t", "60",
                  "start", "-o", f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                                 "-c max_connections=200 -c jit=off")
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        subprocess.run([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop"],
                       env=self.env, capture_output=True, user=self.user, group=self.user,
                       extra_groups=[] if self.user else None, timeout=60)


def practice(name: str, args: list[str], env: dict[str, str], logs: Path) -> Proc:
    """`practice ARGS` of this checkout as one process of the deployment (a session of its own, so that a kill takes
    its graders too)."""
    return Proc(name, [sys.executable, "-m", "cli.main", *args], env, logs)


def wait_for(predicate, timeout: float, what: str, procs: list[Proc]):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        for proc in procs:
            if proc.popen.poll() is not None:
                raise SystemExit(f"{proc.name} exited ({proc.popen.returncode}) while waiting for {what}:\n"
                                 f"{proc.output()[-3000:]}")
        time.sleep(0.2)  # the operator's view (/healthz, the database) polled as an operator would
    logs = "\n".join(f"--- {p.name}\n{p.output()[-2000:]}" for p in procs)
    raise SystemExit(f"{what}: not within {timeout:.0f} s\n{logs}")


def healthz(base: str) -> dict | None:
    import httpx

    try:
        response = httpx.get(f"{base}/healthz", timeout=5)
    except httpx.TransportError:
        return None
    return response.json() if response.status_code == 200 else None


class Submitted(threading.Thread):
    """One learner's submission: POST, then its event stream to the end (`dones`: the done events it read)."""

    def __init__(self, base: str, exercise_id: str, source: str):
        super().__init__(daemon=True)
        self.base, self.exercise_id, self.source = base, exercise_id, source
        self.id: str | None = None
        self.posted = threading.Event()
        self.seconds, self.report, self.dones, self.error = float("nan"), {}, 0, ""

    def run(self) -> None:
        import httpx

        try:
            with httpx.Client(base_url=self.base, timeout=httpx.Timeout(10, read=600)) as client:
                started = time.perf_counter()
                created = client.post(f"/api/exercises/{self.exercise_id}/submissions", json={"source": self.source})
                created.raise_for_status()
                self.id = created.json()["id"]
                self.posted.set()
                with client.stream("GET", created.json()["events_url"]) as stream:
                    kind = None
                    for line in stream.iter_lines():
                        if line.startswith("event: "):
                            kind = line[7:]
                        elif line.startswith("data: ") and kind == "done":
                            self.dones += 1
                            self.report = json.loads(line[6:]).get("report") or {}
                            self.seconds = time.perf_counter() - started
        except Exception as exc:  # noqa: BLE001 - said in the table
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.posted.set()


def first_failing(report: dict) -> str | None:
    return next((c["name"] for c in report.get("checks", []) if not c.get("passed")), None)


def pinned_cases(course: Path, gpu: bool) -> list[tuple[str, str, str, str, str | None]]:
    """(exercise id, kind, path, verdict, failing check) of every pinned solution of the course's GPU exercises and
    the CPU exercise's reference beside them; without `gpu`, of the fake course's exercise."""
    from judge.parent.exercise import load_course
    from judge.parent.proving import cases
    from judge.parent.requirements import needs_cuda

    found = []
    for exercise in load_course(course):
        every = needs_cuda(exercise) if gpu else exercise.id == SMALL_EXERCISE
        for kind, path, verdict, check in cases(exercise):
            if every or (gpu and exercise.id == CPU_CHECK and kind == "reference"):
                found.append((exercise.id, kind, path, verdict.value, check if kind == "wrong" else None))
    return found


def read(course: Path, exercise_id: str, path: str) -> str:
    return (course / exercise_id / path).read_text()


def submission_row(engine, submission_id: str):
    from sqlalchemy import text

    with engine.connect() as conn:
        row = conn.execute(text("SELECT status, verdict, attempts, graded_by FROM submissions WHERE id = :i"),
                           {"i": submission_id}).one()
        dones = conn.scalar(text("SELECT count(*) FROM submission_events WHERE submission_id = :i "
                                 "AND event_json LIKE '{\"type\":\"done\"%'"), {"i": submission_id})
    return row, dones


def kill_test(base: str, engine, pair: list[Proc], course: Path, exercise_id: str, procs: list[Proc]) -> bool:
    """Submit the exercise's reference, SIGKILL whichever of `pair` grades it once it is running, and check that
    the other one finishes it: ACCEPTED, stored once, one done event streamed, two attempts."""
    from sqlalchemy import text

    from judge.parent.exercise import load_exercise

    reference = load_exercise(course / exercise_id).reference
    job = Submitted(base, exercise_id, read(course, exercise_id, reference))
    job.start()
    job.posted.wait(60)

    def grader() -> str | None:
        with engine.connect() as conn:
            return conn.scalar(text("SELECT graded_by FROM submissions WHERE id = :i AND status = 'running'"),
                               {"i": job.id})

    # a GPU exercise with a CPU tier is graded by the cpu worker first: wait for one of the pair
    name = wait_for(lambda: (found := grader()) in {p.name for p in pair} and found, 300,
                    "the kill test's submission running on a worker of the pair", procs)
    victim = next(p for p in pair if p.name == name)
    survivor = next(p for p in pair if p is not victim)
    time.sleep(0.5)  # into its grading: its runner and verifier are at work
    killed_at = time.perf_counter()
    victim.kill9()
    print(f"  killed {victim.name} (SIGKILL to its process group) while it graded {exercise_id} {reference}",
          flush=True)
    job.join(600)
    row, stored = submission_row(engine, job.id)
    ok = (job.report.get("verdict") == "ACCEPTED" and job.dones == 1 and stored == 1 and row.status == "done"
          and row.verdict == "ACCEPTED" and row.graded_by == survivor.name and row.attempts >= 2)
    print(f"  kill test: verdict {row.verdict} stored once: {stored == 1} ({stored} done events stored, {job.dones} "
          f"streamed), graded by {row.graded_by} after {row.attempts} attempts, "
          f"{time.perf_counter() - killed_at:.1f} s after the kill: {'OK' if ok else 'FAILED'} {job.error}", flush=True)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg-root", type=Path, default=Path("/"),
                        help="where Debian's PostgreSQL packages are unpacked (default: installed in /)")
    parser.add_argument("--database-url", help="an existing (empty) database instead of a throwaway cluster")
    parser.add_argument("--concurrency", type=int, default=4, help="each GPU worker's concurrent gradings")
    parser.add_argument("--cpu-concurrency", type=int, default=4,
                        help="the cpu worker's concurrent gradings (the GPU exercises' CPU tiers go through it first)")
    parser.add_argument("--stalled-after", type=float, default=5.0, help="seconds of silence before a job moves")
    parser.add_argument("--keep", type=Path, help="copy the processes' logs into this folder")
    parser.add_argument("--small", action="store_true", help="without CUDA: the fixture course on two cpu workers")
    args = parser.parse_args()

    if not args.small:
        from judge.parent.requirements import cuda_missing

        if cuda_missing():
            print(f"no CUDA device ({cuda_missing()}): run with --small here, in full on a GPU machine")
            return 1
    course = SMALL_COURSE if args.small else EXERCISES_DIR
    queue = "cpu" if args.small else "gpu"
    cases = pinned_cases(course, gpu=not args.small)
    folder = Path(tempfile.mkdtemp(prefix="practice-gpu-distributed-"))
    cluster = None if args.database_url else Cluster(args.pg_root, folder / "pg")
    procs: list[Proc] = []
    engine = None
    try:
        started = time.perf_counter()
        url = args.database_url or cluster.start()
        print(f"PostgreSQL: {'given' if args.database_url else f'{cluster.bin} on port {cluster.port}'} "
              f"({time.perf_counter() - started:.1f} s)", flush=True)
        upgraded = subprocess.run([sys.executable, "-m", "cli.main", "db", "upgrade", "--database-url", url],
                                  capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=300)
        if upgraded.returncode != 0:
            raise SystemExit(f"practice db upgrade: {upgraded.stdout}{upgraded.stderr}")
        print(f"  {upgraded.stdout.strip()}", flush=True)
        port = free_port()
        common = {"PRACTICE_SECRET_KEY": "gpu-distributed", "PRACTICE_GRADING_SECRET": "gpu-distributed",
                  "PRACTICE_EXERCISES_DIR": str(course), "PRACTICE_SUBMISSIONS_PER_MINUTE": "1000",
                  "PRACTICE_SUBMISSIONS_PER_MINUTE_PER_ADDRESS": "1000", "PRACTICE_ALLOW_UNSANDBOXED": "1",
                  "PRACTICE_HEARTBEAT_SECONDS": "1", "PRACTICE_STALLED_AFTER_SECONDS": str(args.stalled_after),
                  "PYTHONUNBUFFERED": "1"}
        procs.append(practice("web", ["serve", "--database-url", url, "--port", str(port)],
                          {**common, "PRACTICE_DATA_DIR": str(folder / "web")}, folder))
        names = [f"{queue}-a", f"{queue}-b"] + ([] if args.small else ["cpu"])
        for i, name in enumerate(names):
            worker_queue = "cpu" if name == "cpu" else queue
            concurrency = 1 if args.small else args.cpu_concurrency if name == "cpu" else args.concurrency
            env = {**common, "PRACTICE_COMPILE_CACHE_DIR": str(folder / f"layers-{name}"),
                   "PRACTICE_PRESTARTED_UID_BASE": str(63000 + 200 * i)}  # the workers' graders: uids apart
            procs.append(practice(name, ["worker", "--database-url", url, "--queue", worker_queue, "--concurrency",
                                     str(concurrency), "--sandbox", "none", "--name", name], env, folder))
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: (h := healthz(base)) and len(h["workers"]) == len(names), 300,
                 f"{len(names)} workers seen by the web process", procs)
        print(f"practice serve and {len(names)} workers up after {time.perf_counter() - started:.1f} s:", flush=True)
        for proc in procs[1:]:
            print("  " + next((line for line in proc.output().splitlines() if line.startswith("practice worker")), ""))
        from sqlalchemy import create_engine

        engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))

        started = time.perf_counter()
        jobs = [Submitted(base, e, read(course, e, path)) for e, _, path, _, _ in cases]
        for job in jobs:
            job.start()
        for job in jobs:
            job.join(900)
        wall = time.perf_counter() - started
        misses = 0
        print(f"\n{'exercise':<26} {'solution':<34} {'pinned':<32} {'got':<32} {'s':>6}  graded by")
        for (exercise_id, _kind, path, verdict, check), job in zip(cases, jobs):
            got = (job.report.get("verdict"), first_failing(job.report) if check else None)
            row, stored = submission_row(engine, job.id) if job.id else (None, 0)
            ok = got == (verdict, check) and job.dones == 1 and stored == 1
            misses += not ok
            print(f"{exercise_id:<26} {path:<34} {verdict + ' ' + (check or ''):<32} "
                  f"{(got[0] or job.error[:30]) + ' ' + (got[1] or ''):<32} {job.seconds:6.1f}  "
                  f"{row.graded_by if row else '-'}{'' if ok else '  MISSED: ' + str(job.report.get('summary'))[:300]}",
                  flush=True)
        print(f"{len(cases) - misses}/{len(cases)} at their pin, sent at once, all done in {wall:.0f} s\n", flush=True)

        pair = [p for p in procs if p.name in (f"{queue}-a", f"{queue}-b")]
        victim_exercise = next(e for e, *_ in cases if e != CPU_CHECK)  # an exercise of the pair's queue
        killed_ok = kill_test(base, engine, pair, course, victim_exercise, procs)
        health = healthz(base) or {}
        print(f"\nSUMMARY: {len(cases) - misses}/{len(cases)} pinned solutions at their verdict through practice "
              f"worker --queue {queue}; kill test {'OK' if killed_ok else 'FAILED'}; queue depth after "
              f"{health.get('queue_depth')}; workers seen {sorted(w['name'] for w in health.get('workers', []))}")
        return 0 if not misses and killed_ok else 1
    finally:
        for proc in procs:
            proc.stop(grace=30)  # a worker may be finishing a GPU grading
        if engine is not None:
            engine.dispose()
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for log in folder.glob("*.log"):
                shutil.copy(log, args.keep / log.name)
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
