"""Live progress per submission: worker threads publish `ProgressEvent`s, SSE streams subscribe.

Each live submission keeps its events so far, so a page that subscribes late is replayed the
queued/running/check events it missed before it receives new ones.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

from judge.reports.report import ProgressEvent


@dataclass
class _Subscriber:
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue


@dataclass
class _Live:
    events: list[ProgressEvent] = field(default_factory=list)
    subscribers: list[_Subscriber] = field(default_factory=list)


class EventHub:
    """Thread-safe fan-out of progress events to asyncio subscribers."""

    shares_database = False  # events live in this process only: `done` is published after the report is stored

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[str, _Live] = {}

    def open(self, submission_id: str) -> None:
        with self._lock:
            self._live.setdefault(submission_id, _Live())

    def publish(self, submission_id: str, event: ProgressEvent) -> None:
        with self._lock:
            live = self._live.setdefault(submission_id, _Live())
            live.events.append(event)
            subscribers = list(live.subscribers)
            if event.type == "done":
                del self._live[submission_id]
        for sub in subscribers:
            try:
                sub.loop.call_soon_threadsafe(sub.queue.put_nowait, event)
            except RuntimeError:  # the subscriber's loop has closed
                pass

    def subscribe(self, submission_id: str) -> tuple[list[ProgressEvent], asyncio.Queue] | None:
        """Events so far and a queue of the next ones; None when the submission is not live."""
        sub = _Subscriber(asyncio.get_running_loop(), asyncio.Queue())
        with self._lock:
            live = self._live.get(submission_id)
            if live is None:
                return None
            live.subscribers.append(sub)
            return list(live.events), sub.queue

    def unsubscribe(self, submission_id: str, queue: asyncio.Queue) -> None:
        with self._lock:
            live = self._live.get(submission_id)
            if live is not None:
                live.subscribers = [s for s in live.subscribers if s.queue is not queue]
