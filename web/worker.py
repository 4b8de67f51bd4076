"""`practice worker`: a grader on any machine that reaches the database, fed by Procrastinate.

Start-up order matters: the sandbox's warm workers are started (as processes of their own, exec'd by the
sandbox's launcher) before the queue engine starts its event loop and threads, so nothing the engine runs
is ever forked. The warm pool then lives as long as the worker.

Delivery is at least once, the database being the truth:
- every worker heartbeats (Procrastinate's `procrastinate_workers`, and our `graders` row for /healthz);
- each worker's reaper hands a job whose worker has been silent `stalled_after_seconds` back to the queue
  (kill -9, machine gone), and re-queues a submission left unfinished without a live job, and a regrade left
  unfinished without one (its job lost with a worker, or a row stored without its job);
- each job runs `web.grading_loop.GradingLoop`, the embedded queue's loop: a finished submission is skipped and
  only the first report is stored, so a duplicate or late delivery changes nothing; its retry rule is theirs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from procrastinate.worker import Worker as ProcrastinateWorker
from sqlalchemy import delete, text
from sqlalchemy.dialects.postgresql import insert

from web import db
from web.errors import StartupError
from web.grading_loop import GradeFn, GradingLoop
from web.pg_events import PgEventHub
from web.pg_queue import REGRADE_TASK, TASK, defer, defer_regrade, procrastinate_app
from web.settings import Settings
from web.store import Store
from web.tables import GraderRow, now

log = logging.getLogger(__name__)
ORPHANS = text("""
    SELECT s.id FROM submissions s
     WHERE s.status != 'done' AND s.created_at < now() - make_interval(secs => :grace)
       AND NOT EXISTS (SELECT 1 FROM procrastinate_jobs j
                        WHERE j.queueing_lock = s.id AND j.status IN ('todo', 'doing'))
     ORDER BY s.created_at LIMIT 100""")
# A regrade row not done and without a waiting or running job (the job's queueing lock is `regrade-<id>`).
ORPHAN_REGRADES = text("""
    SELECT r.id, r.exercise_id FROM regrades r
     WHERE r.status != 'done' AND r.created_at < now() - make_interval(secs => :grace)
       AND NOT EXISTS (SELECT 1 FROM procrastinate_jobs j
                        WHERE j.queueing_lock = 'regrade-' || r.id AND j.status IN ('todo', 'doing'))
     ORDER BY r.created_at LIMIT 100""")

STOP_RETRY_S = 1.0  # how often a stop is asked again of a worker that has not ended


def describe(settings: Settings, name: str, sandbox: str) -> str:
    return (f"practice worker {name}: queues {','.join(settings.worker_queues)}, concurrency {settings.workers}, "
            f"sandbox {sandbox}, database {db.display(db.parse_url(settings.resolved_database_url()))}; "
            f"a silent worker's jobs go to another after {settings.stalled_after_seconds:g} s")


class Worker:
    """One worker process: its grader, its Procrastinate worker, its heartbeat and reaper."""

    def __init__(self, settings: Settings, grade: GradeFn | None = None, sandbox: str | None = None):
        url = settings.resolved_database_url()
        if not db.is_postgres(url):
            raise StartupError("practice worker needs the shared PostgreSQL database: pass --database-url "
                               "postgresql://USER:PASSWORD@HOST:5432/DB (SQLite serves only the graders inside "
                               "`practice serve`)")
        if "gpu" in settings.worker_queues:
            from judge.parent.requirements import cuda_missing

            reason = cuda_missing()
            if reason:
                raise StartupError(f"--queue gpu needs a CUDA device: {reason}; serve --queue cpu on this machine")
        if grade is None:  # a sandbox that cannot be used here is a settings error: said before connecting
            from web.graders import choose_sandbox

            sandbox = choose_sandbox(settings)
        self.settings = settings
        self.name = settings.worker_name or f"{socket.gethostname()}-{os.getpid()}"
        self.engine = db.make_engine(url)
        self.store = Store(self.engine)
        self.hub = PgEventHub(self.engine)
        self._close_grader: Callable[[], None] | None = None
        self._stop_requested = threading.Event()
        self._procrastinate: ProcrastinateWorker | None = None
        if grade is None:
            from web.course import Course
            from web.gpu_sizing import gpu_graders
            from web.graders import make_grade_fn

            course = Course(settings.exercises_dir, reload=settings.reload_exercises)
            grading = make_grade_fn(course, sandbox, gpu_pool_size=gpu_graders(settings, course),
                                    use_gpu="gpu" in settings.worker_queues)
            grade, self._close_grader = grading.grade, grading.close
            grading.warm()  # before the queue engine's threads exist; the warm pool lives as long as this worker
        self.sandbox = sandbox or "none"
        from web.lti.grades import GradeSender

        self.app = procrastinate_app(self.engine, min_size=1, max_size=settings.workers + 3)
        # The reaper defers on its own SQLAlchemy transactions: through an app never opened async (once `app` is
        # open its connector only takes async connections, and a sync one passed to `defer` fails).
        self._deferrer = procrastinate_app(self.engine)
        self.loop = GradingLoop(self.store, self.hub, grade, self.name, [GradeSender(self.engine)],
                                requeue_regrade=self._requeue_regrade, to_gpu=self._to_gpu)
        loop = self.loop

        def grade_submission(submission_id: str) -> None:
            loop.submission(submission_id)

        def regrade_submission(regrade_id: str) -> None:
            loop.regrade(regrade_id)

        self.app.task(name=TASK, pass_context=False)(grade_submission)
        self.app.task(name=REGRADE_TASK, pass_context=False)(regrade_submission)

    def describe(self) -> str:
        return describe(self.settings, self.name, self.sandbox)

    def run(self, install_signal_handlers: bool = True) -> None:
        """Grade until SIGINT/SIGTERM or `stop()` (a running grading is finished first)."""
        try:
            asyncio.run(self._main(install_signal_handlers))
        except asyncio.CancelledError:
            pass
        finally:
            self.close()

    def stop(self) -> None:
        """Stop from another thread (tests, embedding); `run` returns once running gradings end. A stop asked
        before the worker has started is kept: it starts only to stop."""
        self._stop_requested.set()
        worker = self._procrastinate
        if worker is not None:
            worker.stop()  # thread-safe; `_until_stopped` asks again until the worker ends

    def close(self) -> None:
        if self._close_grader is not None:
            self._close_grader()
            self._close_grader = None
        self.engine.dispose()

    async def _main(self, install_signal_handlers: bool) -> None:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(self.settings.workers + 4, thread_name_prefix="grade"))
        s = self.settings
        async with self.app.open_async():
            reaper = asyncio.create_task(self._reap_forever(), name="reaper")
            self._procrastinate = ProcrastinateWorker(
                app=self.app, queues=list(s.worker_queues), concurrency=s.workers, name=self.name,
                update_heartbeat_interval=s.heartbeat_seconds, stalled_worker_timeout=s.stalled_after_seconds,
                install_signal_handlers=install_signal_handlers)
            try:
                await self._until_stopped(asyncio.create_task(self._procrastinate.run(), name="worker"))
            finally:
                reaper.cancel()
                await asyncio.gather(reaper, return_exceptions=True)
                await asyncio.to_thread(self._forget)

    async def _until_stopped(self, running: asyncio.Task) -> None:
        """Wait for the Procrastinate worker; once a stop is asked, ask it again each round until the worker ends
        (a graceful stop, asked again harmlessly): a request that lands while it starts up is forgotten."""
        while not running.done():
            if self._stop_requested.is_set():
                self._procrastinate.stop()
            await asyncio.wait({running}, timeout=STOP_RETRY_S)
        running.result()  # a worker that failed says why

    async def _reap_forever(self) -> None:
        while True:
            try:
                await asyncio.to_thread(self._heartbeat)
                await self.reap()
            except Exception:  # the database may be away for a moment: try again next beat
                log.warning("heartbeat or reaping failed", exc_info=True)
            await asyncio.sleep(self.settings.heartbeat_seconds)

    async def reap(self) -> int:
        """Give stalled jobs back to the queue and re-queue orphaned submissions and regrades; returns how many."""
        from procrastinate.exceptions import ConnectorException

        manager, count = self.app.job_manager, 0
        for job in await manager.get_stalled_jobs(seconds_since_heartbeat=self.settings.stalled_after_seconds):
            try:
                await manager.retry_job(job)
                count += 1
                log.warning("job %s (%s) of a silent worker goes back to the queue", job.id,
                            job.task_kwargs.get("submission_id") or f"regrade {job.task_kwargs.get('regrade_id')}")
            except ConnectorException:  # another worker's reaper was first
                pass
        count += await asyncio.to_thread(self._requeue_orphans)
        count += await asyncio.to_thread(self._requeue_orphan_regrades)
        return count

    def _requeue_orphans(self) -> int:
        with self.engine.connect() as conn:
            ids = list(conn.scalars(ORPHANS, {"grace": self.settings.stalled_after_seconds}))
        for submission_id in ids:
            with self.engine.begin() as conn:
                defer(self._deferrer, conn, submission_id, self._queue_of(submission_id))
        self.hub.prune()
        return len(ids)

    def _requeue_orphan_regrades(self) -> int:
        """Regrades not done whose job is gone: deferred again (the queueing lock refuses a second waiting one)."""
        with self.engine.connect() as conn:
            rows = conn.execute(ORPHAN_REGRADES, {"grace": self.settings.stalled_after_seconds}).all()
        count = 0
        for regrade_id, exercise_id in rows:
            with self.engine.begin() as conn:
                queue = "gpu" if self._needs_gpu(exercise_id) else "cpu"
                if defer_regrade(self._deferrer, conn, regrade_id, queue):
                    count += 1
                    log.warning("regrade %s had no job (its worker died): queued again", regrade_id)
        return count

    def _requeue_regrade(self, regrade_id: str) -> None:
        """A regrade the grader failed, deferred again at once (its own job is running, not waiting: no lock)."""
        regrade = self.loop.regrades.get(regrade_id)
        if regrade is not None:
            queue = "gpu" if self._needs_gpu(regrade.exercise_id) else "cpu"
            with self.engine.begin() as conn:
                defer_regrade(self._deferrer, conn, regrade_id, queue)

    def _to_gpu(self, submission) -> tuple[int, float]:
        """A submission that passed its CPU tier here, deferred on the `gpu` queue (its own job is running, not
        waiting: no lock); its place there and the wait, over the GPU workers seen."""
        from judge.parent.exercise import load_course
        from judge.parent.requirements import needs_cuda
        from web import gpu_wait
        from web.pg_queue import graders_seen

        with self.engine.begin() as conn:
            defer(self._deferrer, conn, submission.id, "gpu")
        gpu_ids = [e.id for e in load_course(self.settings.exercises_dir) if needs_cuda(e)]
        graders = sum(g["concurrency"] for g in graders_seen(self.engine) if "gpu" in g["queues"])
        return gpu_wait.standing(self.store, submission, gpu_ids, graders)

    def _queue_of(self, submission_id: str) -> str:
        submission = self.store.get(submission_id)
        return "gpu" if submission is not None and self._needs_gpu(submission.exercise_id) else "cpu"

    def _needs_gpu(self, exercise_id: str) -> bool:
        from judge.parent.exercise import ExerciseError, find_exercise
        from judge.parent.requirements import needs_cuda

        try:
            return needs_cuda(find_exercise(self.settings.exercises_dir, exercise_id))
        except ExerciseError:
            return False

    def _heartbeat(self) -> None:
        values = dict(name=self.name, host=socket.gethostname(), pid=os.getpid(),
                      queues=",".join(self.settings.worker_queues), concurrency=self.settings.workers,
                      sandbox=self.sandbox, started_at=now(), last_seen=now())
        with self.engine.begin() as conn:
            conn.execute(insert(GraderRow).values(**values).on_conflict_do_update(
                index_elements=["name"], set_={"last_seen": values["last_seen"], "pid": values["pid"]}))

    def _forget(self) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(GraderRow).where(GraderRow.name == self.name))
