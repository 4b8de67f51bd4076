"""A grading's draw: the seed that picks its probes, from a secret the learner's code never sees and the file itself.

A probe the learner can predict, the learner can fool: with one fixed seed, every grading saw the same inputs and the
same sizes, so a file could be written for them. The trusted side computes each grading's seed as an HMAC of the
exercise's own version (judge.parent.fingerprint.exercise_content: its files and settings, not the judge's) and the
submitted source under a secret:

- the same file on the same exercise version draws the same probes, so it gets the same verdict on every regrade,
  and the report records the seed, so that an instructor can replay a grading (`grade(..., seed=...)`);
- no one without the secret knows the draw of a file before writing it, and changing one character draws anew.

Only the verifier's job carries the seed (never the runner's); the verifier derives one stream per hidden test from
it (`stream`: the test's inputs, `torch.manual_seed` before each test), a separate one for the example values the
runner is sent instead of hidden inputs (they say nothing of the test's own draws), and the contract's sizes and
search (judge/checks/contract.py).

The secret: `PRACTICE_GRADING_SECRET` where set (every grading machine of a class shares it, so that any of them
grades a file the same way); else one per installation, made on first use in the user's config folder
(`PRACTICE_CONFIG_DIR`, else `~/.config/torch-practice`), readable by its owner only. The sandboxed processes see
neither: their environment is the sandbox's, and the folder is not mounted in them.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

from judge.shared.paths import config_dir

SECRET_ENV = "PRACTICE_GRADING_SECRET"
SECRET_FILE = "grading-secret"
# Proofs (`practice prove`, the test suite) draw under this one public secret on every machine: a wrong solution
# caught by two checks fails at the same one wherever it is proven, so its pinned check means one thing. A learner's
# grading never uses it.
PROOF_SECRET = "torch-practice test suite"
SEED_BITS = 62  # fits torch.manual_seed, random.Random and Hypothesis's seed


def secret() -> bytes:
    """This installation's grading secret (see the module docstring), made on first use."""
    given = os.environ.get(SECRET_ENV)
    if given:
        return given.encode()
    path = config_dir() / SECRET_FILE
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    made = secrets.token_hex(32).encode()
    try:  # O_EXCL: two first gradings at once keep the one written first
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as out:
        out.write(made)
    return made


def grading_seed(version: str, source: str, key: bytes | None = None) -> int:
    """The seed of grading `source` on the exercise version `version`, under `key` (default: `secret()`)."""
    message = version.encode() + b"\0" + source.encode("utf-8", "surrogatepass")
    digest = hmac.new(key if key is not None else secret(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def proof_seed(version: str, source: str) -> int:
    """The seed a proof of `source` draws with (under `PROOF_SECRET`, the same everywhere)."""
    return grading_seed(version, source, PROOF_SECRET.encode())


def stream(seed: int, name: str) -> int:
    """An independent seed for the part `name` of a grading drawn with `seed` (a hidden test, the examples)."""
    digest = hashlib.sha256(f"{seed}\0{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)
