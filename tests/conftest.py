"""Shared fixtures: the fake course and a grader for it."""

import os
from pathlib import Path

import pytest

# FastAPI's TestClient sends `Host: testserver`; the web app answers only the names it is configured with.
os.environ.setdefault("PRACTICE_ALLOWED_HOSTS", '["testserver"]')
# One grading secret for every run of the suite (judge/shared/draw.py): a pinned proof draws the same inputs on every
# machine, so a proof that fails, fails everywhere; tests of the draw itself set their own.
os.environ.setdefault("PRACTICE_GRADING_SECRET", "torch-practice test suite")  # judge.shared.draw.PROOF_SECRET
# The CLI's one-shot gradings start a background judge (cli/daemon.py) unless told not to: the suite's own gradings
# stay in the test processes; tests/cli/test_daemon.py turns it on, each test with a folder of its own.
os.environ["PRACTICE_DAEMON"] = "0"
FAKE_COURSE = Path(__file__).parent / "fake_course"
# The fake course's hidden tests run inside the judge, never directly.
collect_ignore = ["fake_course"]


@pytest.fixture(scope="session")
def fake_course() -> Path:
    return FAKE_COURSE


LAYERS_ENV = "PRACTICE_TEST_LAYERS_DIR"  # scripts/test.sh: one folder for the whole run, every worker


@pytest.fixture(scope="session")
def layers_root(tmp_path_factory) -> Path:
    """Where the tests that build compile cache layers (sandbox.compile_cache) build them: one folder per test run
    (`PRACTICE_TEST_LAYERS_DIR`, which scripts/test.sh makes), never the machine's, so that a layer's base (~21 CPU-s
    of Inductor's headers and ISA probes) is built once a run; a build another worker has started is waited for.
    Without it, one folder per test process."""
    given = os.environ.get(LAYERS_ENV)
    return Path(given) / "compile-cache" if given else tmp_path_factory.mktemp("layers") / "compile-cache"


@pytest.fixture(scope="session")
def add_one():
    from judge.parent.exercise import load_exercise

    return load_exercise(FAKE_COURSE / "add-one")


@pytest.fixture(scope="session")
def local():
    """The warm local backend (forks of one warm runner and one warm verifier), shared by every grading of this test
    process that needs no pool of its own: a warm worker costs ~4 s of CPU to start, a worn-out one is replaced."""
    from judge.parent.grading import make_sandbox

    sandbox = make_sandbox("local")
    yield sandbox
    sandbox.close()


@pytest.fixture
def cheap_passwords(monkeypatch):
    """Argon2 at its lowest cost: the default spends most of a second per hash on a 2-core machine (every web test
    has it, tests/web/conftest.py; elsewhere a module asks for it)."""
    from argon2 import PasswordHasher

    from web import passwords

    monkeypatch.setattr(passwords, "_HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    passwords._dummy_hash.cache_clear()
    yield
    passwords._dummy_hash.cache_clear()
