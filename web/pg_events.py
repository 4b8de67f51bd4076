"""Live progress shared by every process through PostgreSQL: events are rows, NOTIFY says a row was added.

A grader (`practice worker`, any machine) calls `publish`: the event is inserted into
`submission_events` and `pg_notify('practice_events', submission_id)` is sent in the same transaction.
Each web process LISTENs on one connection; when a submission it streams gets a notification, it reads
the rows it has not delivered yet. The rows are the truth, the notification only a wake-up, so a page
that subscribes late (or to another web process than the one it submitted to) is replayed what it
missed, and nothing is lost when a notification is. Same interface as `web.events.EventHub`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import delete, insert, select, text
from sqlalchemy.engine import Connection, Engine

from judge.reports.report import ProgressEvent
from web import db
from web.tables import DONE, EventRow, SubmissionRow, now

log = logging.getLogger(__name__)
CHANNEL = "practice_events"
RECONNECT_S = 1.0
LISTEN_POLL_S = 0.25  # how often the listener looks up from its socket to see whether it should stop


@dataclass
class _Subscriber:
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue
    last_id: int = 0


@dataclass
class _Watched:
    subscribers: list[_Subscriber] = field(default_factory=list)


class PgEventHub:
    """Publish from any process, subscribe from any web process (`listen=True` starts the listener)."""

    shares_database = True  # events are rows: `done` is stored in the report's own transaction (`publish_in`)

    def __init__(self, engine: Engine, listen: bool = False):
        self._engine = engine
        self._lock = threading.Lock()
        self._watched: dict[str, _Watched] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if listen:
            self._thread = threading.Thread(target=self._listen_forever, name="pg-events", daemon=True)
            self._thread.start()

    def open(self, submission_id: str) -> None:
        """Nothing to do: a submission is live while its row is not done."""

    def publish(self, submission_id: str, event: ProgressEvent) -> None:
        with self._engine.begin() as conn:
            self.publish_in(conn, submission_id, event)

    @staticmethod
    def publish_in(conn: Connection, submission_id: str, event: ProgressEvent) -> None:
        """Publish as part of the caller's transaction: the row and the wake-up count only if it commits."""
        conn.execute(insert(EventRow).values(
            submission_id=submission_id, event_json=event.model_dump_json(), created_at=now()))
        conn.execute(text("SELECT pg_notify(:channel, :payload)"), {"channel": CHANNEL, "payload": submission_id})

    def subscribe(self, submission_id: str) -> tuple[list[ProgressEvent], asyncio.Queue] | None:
        """Events so far and a queue of the next ones; None when the submission is done (or unknown)."""
        sub = _Subscriber(asyncio.get_running_loop(), asyncio.Queue())
        with self._lock:
            with self._engine.connect() as conn:
                status = conn.scalar(select(SubmissionRow.status).where(SubmissionRow.id == submission_id))
                if status is None or status == DONE:
                    return None
                rows = list(conn.execute(select(EventRow.id, EventRow.event_json).where(
                    EventRow.submission_id == submission_id).order_by(EventRow.id)))
            sub.last_id = rows[-1][0] if rows else 0
            self._watched.setdefault(submission_id, _Watched()).subscribers.append(sub)
        return [ProgressEvent.model_validate_json(js) for _, js in rows], sub.queue

    def unsubscribe(self, submission_id: str, queue: asyncio.Queue) -> None:
        with self._lock:
            watched = self._watched.get(submission_id)
            if watched is None:
                return
            watched.subscribers = [s for s in watched.subscribers if s.queue is not queue]
            if not watched.subscribers:
                del self._watched[submission_id]

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def prune(self, older_than: timedelta = timedelta(hours=1)) -> int:
        """Delete the events of submissions finished more than `older_than` ago; returns how many."""
        finished = select(SubmissionRow.id).where(SubmissionRow.status == DONE,
                                                  SubmissionRow.finished_at < now() - older_than)
        with self._engine.begin() as conn:
            return conn.execute(delete(EventRow).where(EventRow.submission_id.in_(finished))).rowcount

    # The listener thread: one LISTEN connection; it delivers what each subscriber has not had yet.

    def _listen_forever(self) -> None:
        import psycopg

        info = db.conninfo(self._engine.url)
        while not self._stop.is_set():
            try:
                with psycopg.connect(info, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._deliver(list(self._watched))  # catch up on what came while not listening
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=LISTEN_POLL_S):
                            self._deliver([note.payload])
            except Exception:  # the database went away: reconnect, then catch up
                if not self._stop.is_set():
                    log.warning("event listener lost its connection; reconnecting", exc_info=True)
                    self._stop.wait(RECONNECT_S)

    def _deliver(self, submission_ids: list[str]) -> None:
        with self._lock:
            for submission_id in dict.fromkeys(submission_ids):
                watched = self._watched.get(submission_id)
                if watched is None or not watched.subscribers:
                    continue
                since = min(s.last_id for s in watched.subscribers)
                with self._engine.connect() as conn:
                    rows = list(conn.execute(select(EventRow.id, EventRow.event_json).where(
                        EventRow.submission_id == submission_id, EventRow.id > since).order_by(EventRow.id)))
                for row_id, event_json in rows:
                    event = ProgressEvent.model_validate_json(event_json)
                    for sub in watched.subscribers:
                        if row_id > sub.last_id:
                            sub.last_id = row_id
                            try:
                                sub.loop.call_soon_threadsafe(sub.queue.put_nowait, event)
                            except RuntimeError:  # the subscriber's loop has closed
                                pass
