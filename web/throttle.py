"""Sign-in backoff: failed password sign-ins counted per account name and per client address, in the database.

After `signin_failures_per_name` failures for one name (whether or not it names anyone, so a refusal tells
nothing about which names exist) or `signin_failures_per_address` from one address (web/settings.py), each
further failure blocks that key for twice as long as the one before, from `BASE_BLOCK_S` up to `MAX_BLOCK_S`;
while blocked, no password is even checked. A key's count is forgotten `FORGET_AFTER` after its last failure;
a successful sign-in forgets its account's. Kept in the database, so every web process counts the same.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from web.admission import address_key as client_unit
from web.errors import InputError
from web.i18n import N_
from web.store import _aware
from web.tables import SignInFailureRow, now as _now

ACCOUNT_FREE = 5  # the defaults of the settings
ADDRESS_FREE = 20
BASE_BLOCK_S = 30
MAX_BLOCK_S = 15 * 60
FORGET_AFTER = timedelta(hours=1)


class SignInThrottled(InputError):
    """Too many failed sign-ins: `retry_after` seconds to wait (the page's 429 and its Retry-After)."""

    def __init__(self, retry_after: int):
        super().__init__(N_("Too many failed sign-ins for this name or from this network: wait {minutes} "
                            "minute(s) and try again."), minutes=max(1, math.ceil(retry_after / 60)))
        self.retry_after = retry_after


def account_key(kind: str, scope: str, name: str) -> str:
    return f"account:{kind}:{scope}:{name}"[:255]


def address_key(address: str | None) -> str:
    """An address counted as the submission limits count it (an IPv6 address as its /64)."""
    return f"address:{client_unit(address) if address else 'unknown'}"[:255]


class SignInThrottle:
    """The `signin_failures` table; every method opens and closes its own session (thread-safe)."""

    def __init__(self, engine: Engine, per_name: int = ACCOUNT_FREE, per_address: int = ADDRESS_FREE):
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self.per_name, self.per_address = per_name, per_address

    def check(self, *keys: str) -> None:
        """Raise `SignInThrottled` when any of the keys is blocked now."""
        when = _now()
        until: list[datetime] = []
        with self._sessions() as s:
            for key in keys:
                row = s.get(SignInFailureRow, key)
                blocked = _aware(row.blocked_until) if row is not None else None
                if blocked is not None and blocked > when:
                    until.append(blocked)
        if until:
            raise SignInThrottled(math.ceil((max(until) - when).total_seconds()))

    def failed(self, account: str, address: str) -> None:
        """Count a failure for both keys, blocking each that is past its free failures."""
        when = _now()
        try:
            self._count(account, address, when)
        except IntegrityError:  # another process counted the first failure of a key at the same moment
            self._count(account, address, when)

    def _count(self, account: str, address: str, when) -> None:
        with self._sessions() as s, s.begin():
            for key, free in ((account, self.per_name), (address, self.per_address)):
                row = s.get(SignInFailureRow, key, with_for_update=True)
                if row is None:
                    row = SignInFailureRow(key=key, failures=0, last_at=when)
                    s.add(row)
                elif when - _aware(row.last_at) > FORGET_AFTER:
                    row.failures = 0
                row.failures += 1
                row.last_at = when
                if row.failures >= free:
                    row.blocked_until = when + _block(row.failures - free)

    def succeeded(self, account: str) -> None:
        with self._sessions() as s, s.begin():
            s.execute(delete(SignInFailureRow).where(SignInFailureRow.key == account))


def _block(over: int) -> timedelta:
    return timedelta(seconds=min(BASE_BLOCK_S * 2 ** min(over, 20), MAX_BLOCK_S))

