"""judge.shared.draw: each grading's probes come from a secret and the file itself, never from a fixed seed.

The same file on the same exercise version draws the same (same seed, same inputs, same verdict); another file, or
another installation's secret, draws anew; the runner's job never carries the seed; a report's seed replays it."""

import shutil
import stat

import pytest
import torch

from judge.parent.exercise import load_exercise
from judge.parent.grading import grade
from judge.parent.job import make_jobs
from judge.remote import GradingContext, using
from judge.remote.values import example_like
from judge.shared import draw

DRAWN_TEST = '''
import torch


def test_draws(entry, record_property):
    """The hidden inputs of this grading
    zh: 这次评测的隐藏输入
    """
    x = torch.randn(4)
    record_property("draw", float(x[0]))
    entry.compile()(x)
'''


@pytest.fixture
def drawing(tmp_path, fake_course):
    """add-one with one hidden test that reports the first value it drew."""
    folder = tmp_path / "add-one"
    shutil.copytree(fake_course / "add-one", folder)
    (folder / "tests" / "test_add.py").write_text(DRAWN_TEST, encoding="utf-8")
    return load_exercise(folder)


def test_the_seed_depends_on_the_secret_the_version_and_the_file():
    seed = draw.grading_seed("v1", "def f(x):\n    return x + 1\n", b"k")
    assert seed == draw.grading_seed("v1", "def f(x):\n    return x + 1\n", b"k")
    assert 0 <= seed < 2 ** draw.SEED_BITS
    others = {draw.grading_seed("v1", "def f(x):\n    return x + 1  # \n", b"k"),
              draw.grading_seed("v2", "def f(x):\n    return x + 1\n", b"k"),
              draw.grading_seed("v1", "def f(x):\n    return x + 1\n", b"other")}
    assert seed not in others and len(others) == 3
    assert draw.stream(seed, "test_a.py::test_x") != draw.stream(seed, "test_a.py::test_y")


def test_the_secret_is_made_once_per_installation_for_its_owner_only(tmp_path, monkeypatch):
    monkeypatch.delenv(draw.SECRET_ENV, raising=False)
    monkeypatch.setenv("PRACTICE_CONFIG_DIR", str(tmp_path / "config"))
    first = draw.secret()
    path = tmp_path / "config" / draw.SECRET_FILE
    assert len(first) == 64 and draw.secret() == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    monkeypatch.setenv(draw.SECRET_ENV, "shared by every grading machine of a class")
    assert draw.secret() == b"shared by every grading machine of a class"


def test_the_runner_never_gets_the_seed(drawing):
    runner, verifier = make_jobs(drawing, "def f(x):\n    return x + 1\n", seed=12345)
    assert verifier.seed == 12345
    assert "12345" not in runner.model_dump_json() and "seed" not in runner.model_dump()


def test_examples_for_the_runner_are_a_stream_of_their_own():
    x = torch.ones(3, 5)
    torch.manual_seed(7)
    before = torch.random.get_rng_state()
    with using(GradingContext(seed=1)):
        first = example_like(x)
    with using(GradingContext(seed=1)):
        again = example_like(x)
    with using(GradingContext(seed=2)):
        other = example_like(x)
    assert torch.equal(torch.random.get_rng_state(), before)  # the test's own draws are untouched
    assert torch.equal(first, again) and not torch.equal(first, other)


def _drew(report) -> float:
    [check] = report.checks
    assert check.passed, check.message
    return check.properties["draw"]


def test_the_same_file_draws_the_same_another_file_draws_anew_and_a_seed_replays(drawing, local, monkeypatch):
    monkeypatch.setenv(draw.SECRET_ENV, "test secret")
    source = "def f(x):\n    return x + 1\n"
    first, again = grade(drawing, source, sandbox=local), grade(drawing, source, sandbox=local)
    assert first.seed is not None and first.seed == again.seed and _drew(first) == _drew(again)
    edited = grade(drawing, source + "# a comment\n", sandbox=local)
    assert edited.seed != first.seed and _drew(edited) != _drew(first)
    replayed = grade(drawing, source + "# a comment\n", sandbox=local, seed=first.seed)
    assert replayed.seed == first.seed and _drew(replayed) == _drew(first)
    monkeypatch.setenv(draw.SECRET_ENV, "another installation")
    assert grade(drawing, source, sandbox=local).seed != first.seed


def test_a_proof_draws_the_same_under_any_installations_secret(add_one, local, monkeypatch):
    from judge.parent.proving import cases, prove, seed_for

    seeds = []
    for secret in ("one installation", "another"):
        monkeypatch.setenv(draw.SECRET_ENV, secret)
        seeds.append([proof.report.seed for proof in prove(add_one, sandbox=local)])
    assert seeds[0] == seeds[1] == [seed_for(add_one, path) for _, path, _, _ in cases(add_one)]
