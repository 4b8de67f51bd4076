"""Fixtures for the web tests: an app on a small fixture course, graded by an in-process fake grader.

The fake grader runs the submitted `add_one` on two cases and reports like the real judge does
(running, one check event per case, then the report), so HTTP behaviour is tested in milliseconds;
`test_e2e_real_grader.py` goes through `judge.grade` for real.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from judge.reports.i18n import T
from judge.reports.report import CheckResult, ProgressEvent, Report, Verdict
from tests.databases import database_url, postgres  # noqa: F401 - fixtures
from web.app import create_app
from web.settings import Settings
from web.store import Submission

collect_ignore = ["fixtures"]  # the fixture course's hidden tests run only inside the judge
FIXTURE_COURSE = Path(__file__).parent / "fixtures" / "course"
CASES = [(1, 2), (-5, -4)]


class GatedGrader:
    """What the tests' graders share: `gate` holds each grading until set (for busy and restart tests), `started`
    says one began."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.started = threading.Event()

    def begin(self) -> None:
        self.started.set()
        self.gate.wait(30)


class FakeGrader(GatedGrader):
    """Grades `add_one` submissions in-process."""

    def __init__(self) -> None:
        super().__init__()
        self.graded: list[str] = []

    def __call__(self, submission: Submission, publish: Callable[[ProgressEvent], None]) -> Report:
        self.begin()
        publish(ProgressEvent(type="running", total_checks=len(CASES)))
        checks = []
        for x, want in CASES:
            check = self._case(submission.source, x, want)
            publish(ProgressEvent(type="check", check=check, total_checks=len(CASES)))
            checks.append(check)
        self.graded.append(submission.id)
        failed = next((c for c in checks if not c.passed), None)
        verdict = failed.verdict if failed else Verdict.ACCEPTED
        return Report(exercise_id=submission.exercise_id, verdict=verdict, summary=f"{verdict.value}",
                      checks=checks, stdout="<b>printed</b>", sandbox="fake")

    @staticmethod
    def _case(source: str, x: int, want: int) -> CheckResult:
        name = f"test_add_one_{x}"
        scope: dict = {}
        try:
            exec(compile(source, "solution.py", "exec"), scope)  # the fixture learner is the test itself
            got = scope["add_one"](x)
        except Exception as exc:  # noqa: BLE001 - the fixture learner's error is its verdict
            return CheckResult(name=name, passed=False, verdict=Verdict.RUNTIME_ERROR, message=repr(exc))
        if got == want:
            return CheckResult(name=name, passed=True)
        return CheckResult(name=name, title=T("add_one({x}) adds one", zh="add_one({x}) 加一", x=x), passed=False,
                           verdict=Verdict.WRONG_ANSWER,
                           message=T("add_one({x}) returned {got}, expected {want}",
                                     zh="add_one({x}) 返回了 {got}，应为 {want}", x=x, got=repr(got), want=want))


@pytest.fixture
def settings(tmp_path, database_url) -> Settings:
    """Embedded grading on each database (SQLite, then PostgreSQL); test_cluster.py covers `practice worker`."""
    return Settings(data_dir=tmp_path / "data", exercises_dir=FIXTURE_COURSE, sandbox="none",
                    allow_unsandboxed=True, workers=1, submissions_per_minute=5, secret_key="test-secret",
                    database_url=database_url, queue="embedded")


HIDDEN_TESTS = "hidden_tests"  # a module marked so is graded by the course's hidden tests, on a copy of the course


def _graded_by_hidden_tests(request) -> bool:
    return request.node.get_closest_marker(HIDDEN_TESTS) is not None


@pytest.fixture
def course(tmp_path) -> Path:
    """A copy of the fixture course that a test may change (tighten a hidden test): what `client` serves in a
    module marked `pytest.mark.hidden_tests`."""
    import shutil

    return shutil.copytree(FIXTURE_COURSE, tmp_path / "course")


@pytest.fixture
def grader(request):
    """The fake grader; in a module marked `hidden_tests`, the course copy's own hidden tests
    (tests/web/hidden_grader.py), so that changing a test there changes verdicts and the exercise's version."""
    if _graded_by_hidden_tests(request):
        from tests.web.hidden_grader import HiddenTestGrader

        return HiddenTestGrader(request.getfixturevalue("course"))
    return FakeGrader()


@pytest.fixture
def client(request, settings, grader):
    if _graded_by_hidden_tests(request):
        settings.exercises_dir = request.getfixturevalue("course")
    with TestClient(create_app(settings, grade=grader), base_url="http://testserver") as c:
        yield c


@pytest.fixture
def fake_playground(monkeypatch):
    """judge.parent.playground.run_playground replaced by one that answers at once (or when `release` is set): only
    the web's own part of a playground run is under test. (calls, release, started): the sources run, the gate, set
    on a call."""
    import judge.parent.playground

    calls, release, started = [], threading.Event(), threading.Event()
    release.set()

    def fake(source, **kwargs):
        calls.append(source)
        started.set()
        release.wait(30)
        return judge.parent.playground.PlaygroundReport(summary=T("{calls} call(s) compiled into {graphs} graph(s): "
                                                              "{breaks} graph "
                                                   "break(s), {recompiles} recompile(s).", calls=1, graphs=1,
                                                   breaks=0, recompiles=0))

    monkeypatch.setattr(judge.parent.playground, "run_playground", fake)
    return calls, release, started


CORRECT = "def add_one(x):\n    return x + 1\n"
WRONG = "def add_one(x):\n    return x\n"


def wait_done(client: TestClient, submission_id: str, timeout: float = 10.0) -> dict:
    """Poll GET /api/submissions/{id} until it is done."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(f"/api/submissions/{submission_id}").json()
        if body["status"] == "done":
            return body
        time.sleep(0.02)
    raise AssertionError(f"submission {submission_id} not done after {timeout} s")


class RunningWorker:
    """A `Worker` in a thread of this process, with a fake grader."""

    def __init__(self, settings: Settings, name: str, grader=None):
        from web.worker import Worker  # imported late: Procrastinate is for the PostgreSQL tests

        self.grader = grader or FakeGrader()
        self.worker = Worker(settings.model_copy(update={"worker_name": name}), grade=self.grader, sandbox="fake")
        self.thread = threading.Thread(target=self.worker.run, kwargs={"install_signal_handlers": False},
                                       daemon=True)

    def __enter__(self) -> RunningWorker:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.grader.gate.set()
        self.worker.stop()
        self.thread.join(20)
        assert not self.thread.is_alive(), "the worker did not stop"


@pytest.fixture(autouse=True)
def _cheap_password_hashes(cheap_passwords):
    """Every web test hashes passwords at Argon2's lowest cost (tests/conftest.py)."""


@pytest.fixture
def teacher(client):
    """An instructor signed in, in a browser of their own; a second instructor ("other") exists."""
    from tests.web.classroom import PASSWORD, browser, sign_in

    client.app.state.classes.add_instructor("teacher", PASSWORD)
    client.app.state.classes.add_instructor("other", PASSWORD)
    t = browser(client)
    assert sign_in(t, "teacher").status_code == 303
    return t


@pytest.fixture
def klass(teacher):
    """A class of `teacher`'s: (its page's path, its join path)."""
    from tests.web.classroom import new_class

    return new_class(teacher)
