"""What a new password must be: long enough to resist guessing, short enough to bound hashing, not trivial.

Refused, each with a message that says what to change: fewer than `MIN_PASSWORD_CHARS` characters (spaces at
either end do not count), more than `MAX_PASSWORD_CHARS`, fewer than `MIN_DISTINCT_CHARS` different
characters (`aaaaaaaaaa`, `abababab..`), a run of the keyboard or the alphabet (`1234567890`, `qwertyuiop`),
one of the passwords every guessing list starts with, and the account's own name.
"""

from __future__ import annotations

import unicodedata

from web.errors import InputError
from web.i18n import N_

MIN_PASSWORD_CHARS = 10
MAX_PASSWORD_CHARS = 256
MIN_DISTINCT_CHARS = 5
RUNS = ("0123456789", "abcdefghijklmnopqrstuvwxyz", "qwertyuiop", "asdfghjkl", "zxcvbnm", "1qaz2wsx3edc")
COMMON = frozenset({
    "password", "password1", "password12", "password123", "passw0rd", "p@ssw0rd", "p@ssword", "iloveyou",
    "letmein", "welcome", "welcome1", "admin", "administrator", "changeme", "monkey", "dragon", "football",
    "baseball", "sunshine", "princess", "superman", "trustno1", "whatever", "starwars", "computer",
    "qwerty123", "abc12345", "abcd1234", "1q2w3e4r", "1q2w3e4r5t", "qwer1234", "woaini1314", "5201314",
    "pytorch", "torchcompile", "torch.compile", "practice",
})


def check_new_password(password: str, names: tuple[str, ...] = ()) -> None:
    """Raise `InputError` saying what to change when `password` may not become a password (`names`: the
    account's own names, which it may not be)."""
    if len(password) > MAX_PASSWORD_CHARS:
        raise InputError(N_("The password is too long: use at most {n} characters."), n=MAX_PASSWORD_CHARS)
    core = password.strip()
    if len(core) < MIN_PASSWORD_CHARS:
        raise InputError(N_("The password is too short: use at least {n} characters (spaces at either end do "
                            "not count)."), n=MIN_PASSWORD_CHARS)
    folded = unicodedata.normalize("NFKC", core).casefold()
    if len(set(folded)) < MIN_DISTINCT_CHARS:
        raise InputError(N_("The password repeats too few characters: use at least {n} different ones."),
                         n=MIN_DISTINCT_CHARS)
    squeezed = "".join(folded.split())
    if (squeezed in COMMON or squeezed.rstrip("0123456789!.") in COMMON or _is_run(squeezed)
            or any(squeezed == "".join(n.casefold().split()) for n in names if n)):
        raise InputError(N_("This password is among the first that anyone guessing would try (a common "
                            "password, a run of keys, or your own name): choose a less obvious one, such as "
                            "a few unrelated words."))


def _is_run(text: str) -> bool:
    """A stretch of one of the runs, forwards or backwards, maybe repeated (`12345678901234`)."""
    for run in RUNS:
        for line in (run, run[::-1]):
            doubled = line * (len(text) // len(line) + 2)
            if text in doubled:
                return True
    return False
