"""Passwords and tokens: Argon2id hashes (argon2-cffi), random tokens for join codes and sign-in links.

A sign-in link's token is random (32 bytes), so the database keeps only its SHA-256: a stolen database
reveals no working link. Passwords are Argon2id with argon2-cffi's default cost (RFC 9106 low-memory profile);
what a new password must be is `web.password_policy`.
"""

from __future__ import annotations

import hashlib
import secrets
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_HASHER = PasswordHasher()


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def verify_password(stored_hash: str | None, password: str) -> bool:
    """True when `password` matches; with no stored hash it still spends the time of one check."""
    try:
        return _HASHER.verify(stored_hash or _dummy_hash(), password) and stored_hash is not None
    except (VerificationError, InvalidHashError):
        return False


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    # Unknown user names cost as much as wrong passwords, so timing does not tell which names exist.
    return _HASHER.hash(secrets.token_hex(16))


def new_token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
