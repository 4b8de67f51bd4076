"""Sign-in backoff: failed password sign-ins counted so that guessing slows down but a stranger cannot lock the
owner out. Counted in the database (every web process counts the same), under three keys:

- the name from one client address (`signin_failures_per_name`, 5): a guesser is slowed on the name, from where
  they are, and no one else is;
- one client address (`signin_failures_per_address`, 20), whatever names it tries;
- the name from anywhere (`signin_failures_per_name_anywhere`, 50): guessing spread over many addresses. This
  key blocks only addresses the account has never signed in from: an address with a successful sign-in in the
  last `KNOWN_FOR` is known, and the owner there is not blocked by strangers elsewhere.

A name counts whether or not it names anyone, so a refusal tells nothing about which names exist. Past a key's
free failures, each further failure blocks that key for twice as long as the one before, from `BASE_BLOCK_S` up
to `MAX_BLOCK_S`; while blocked, no password is even checked. A key's count is forgotten `FORGET_AFTER` after its
last failure; a successful sign-in forgets its name's count from that address and makes the address known.
A personal sign-in link is never blocked (it checks no password).
"""

from __future__ import annotations

import hashlib
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
ANYWHERE_FREE = 50
BASE_BLOCK_S = 30
MAX_BLOCK_S = 15 * 60
FORGET_AFTER = timedelta(hours=1)
KNOWN_FOR = timedelta(days=90)


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


def _pair(prefix: str, account: str, address: str) -> str:
    return f"{prefix}:" + hashlib.sha256(f"{account}\n{address}".encode()).hexdigest()


def name_from_key(account: str, address: str) -> str:
    """The key of an account name tried from one address (`address` an `address_key`)."""
    return _pair("name-from", account, address)


def known_key(account: str, address: str) -> str:
    """The row that says the account signed in from the address."""
    return _pair("known", account, address)


class SignInThrottle:
    """The `signin_failures` table; every method opens and closes its own session (thread-safe). `account` is an
    `account_key`, `address` an `address_key`."""

    def __init__(self, engine: Engine, per_name: int = ACCOUNT_FREE, per_address: int = ADDRESS_FREE,
                 per_name_anywhere: int = ANYWHERE_FREE):
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self.per_name, self.per_address, self.per_name_anywhere = per_name, per_address, per_name_anywhere

    def check(self, account: str, address: str) -> None:
        """Raise `SignInThrottled` when this name from this address may not try now."""
        when = _now()
        until: list[datetime] = []
        with self._sessions() as s:
            keys = [name_from_key(account, address), address]
            known = s.get(SignInFailureRow, known_key(account, address))
            if known is None or when - _aware(known.last_at) > KNOWN_FOR:
                keys.append(account)
            for key in keys:
                row = s.get(SignInFailureRow, key)
                blocked = _aware(row.blocked_until) if row is not None else None
                if blocked is not None and blocked > when:
                    until.append(blocked)
        if until:
            raise SignInThrottled(math.ceil((max(until) - when).total_seconds()))

    def failed(self, account: str, address: str) -> None:
        """Count a failure under the three keys, blocking each that is past its free failures."""
        when = _now()
        try:
            self._count(account, address, when)
        except IntegrityError:  # another process counted the first failure of a key at the same moment
            self._count(account, address, when)

    def _count(self, account: str, address: str, when) -> None:
        keys = ((name_from_key(account, address), self.per_name), (address, self.per_address),
                (account, self.per_name_anywhere))
        with self._sessions() as s, s.begin():
            for key, free in keys:
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

    def succeeded(self, account: str, address: str) -> None:
        """Forget the name's failures from this address, and remember the address as the account's."""
        when = _now()
        try:
            with self._sessions() as s, s.begin():
                s.execute(delete(SignInFailureRow).where(SignInFailureRow.key.in_(
                    [name_from_key(account, address), known_key(account, address)])))
                s.add(SignInFailureRow(key=known_key(account, address), failures=0, last_at=when))
        except IntegrityError:  # the same sign-in succeeded in another request at the same moment
            pass


def _block(over: int) -> timedelta:
    return timedelta(seconds=min(BASE_BLOCK_S * 2 ** min(over, 20), MAX_BLOCK_S))
