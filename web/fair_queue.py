"""The embedded queue's order: fair between client addresses, then between the learners of one address.

Live submissions are taken round-robin: the next address in turn, then that address's next learner in turn, then
that learner's oldest submission; so a flood from one address (or one learner) waits behind itself while every
other address keeps its turn. Regrades come after every live submission, oldest first; a stop comes before all.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque

Item = tuple[str, str]  # (kind, id): ("submission", id), ("regrade", id) or ("stop", "")


class FairQueue:
    """Thread-safe; `get` blocks until an item is there."""

    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._live: OrderedDict[str, OrderedDict[str, deque[Item]]] = OrderedDict()
        self._regrades: deque[Item] = deque()
        self._stops = 0

    def put_live(self, item: Item, learner_id: str, address: str) -> None:
        with self._ready:
            self._live.setdefault(address, OrderedDict()).setdefault(learner_id, deque()).append(item)
            self._ready.notify()

    def put_regrade(self, item: Item) -> None:
        with self._ready:
            self._regrades.append(item)
            self._ready.notify()

    def put_stop(self) -> None:
        with self._ready:
            self._stops += 1
            self._ready.notify()

    def get(self) -> Item:
        with self._ready:
            while not (self._stops or self._live or self._regrades):
                self._ready.wait()
            if self._stops:
                self._stops -= 1
                return ("stop", "")
            if self._live:
                return self._next_live()
            return self._regrades.popleft()

    def _next_live(self) -> Item:
        address, learners = next(iter(self._live.items()))
        learner_id, items = next(iter(learners.items()))
        item = items.popleft()
        del learners[learner_id]
        if items:
            learners[learner_id] = items  # to the back of its address's turn
        del self._live[address]
        if learners:
            self._live[address] = learners  # to the back of the addresses' turn
        return item
