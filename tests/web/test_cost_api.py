"""On-demand cost figures (web/cost_api.py): offered only where a grading has none to give, the learner's own."""

from __future__ import annotations

from fastapi.testclient import TestClient

from judge.parent.exercise import load_exercise
from judge.reports.report import CompiledCost, CostFigures, CostSection, EagerCost, Report
from judge.shared.paths import EXERCISES_DIR
from tests.web.conftest import CORRECT, FakeGrader, wait_done
from web.app import create_app
from web.cost_api import offered


def test_offered_where_a_contract_gives_inputs_and_no_cost_section_is_made():
    with_cost = load_exercise(EXERCISES_DIR / "fuse-rmsnorm-silu")  # its own [cost]: every report has one
    assert not offered(with_cost, "embedded")
    bare = with_cost.model_copy(update={"cost": None})
    assert offered(bare, "embedded") and not offered(bare, "procrastinate")  # its graders are other processes
    assert not offered(bare.model_copy(update={"contract": None}), "embedded")  # no inputs to take
    assert not offered(bare.model_copy(update={"needs_cuda": True}), "embedded")


def test_an_exercise_without_inputs_refuses(client):
    created = client.post("/api/exercises/add-one/submissions", json={"source": CORRECT}).json()
    wait_done(client, created["id"])
    assert client.get(f"/api/submissions/{created['id']}/cost").json() == {
        "status": "none", "cost": None, "message": "", "phase": "", "ahead": 0, "checks_done": 0}
    refused = client.post(f"/api/submissions/{created['id']}/cost")
    assert refused.status_code == 409 and "offers no on-demand cost figures" in refused.json()["detail"]


class CostGrader(FakeGrader):
    def __call__(self, submission, publish) -> Report:
        report = super().__call__(submission, publish)
        report.cost = CostSection(inputs="x: float32[2]", torch_version="2.13.0", figures=[CostFigures(
            who="learner", eager=EagerCost(ops=1, bytes_read=8, bytes_written=8),
            compiled=CompiledCost(kernels=["cpp_fused_add_0"], bytes_estimate=16))])
        return report


def test_a_report_with_its_section_answers_at_once_and_only_its_learner(settings):
    with TestClient(create_app(settings, grade=CostGrader()), base_url="http://testserver") as client:
        created = client.post("/api/exercises/add-one/submissions", json={"source": CORRECT}).json()
        wait_done(client, created["id"])
        asked = client.post(f"/api/submissions/{created['id']}/cost?lang=zh")
        assert asked.status_code == 202 and asked.json()["status"] == "done"
        assert asked.json()["cost"]["figures"][0]["compiled"]["kernels"] == ["cpp_fused_add_0"]
        client.cookies.clear()  # another learner
        assert client.get(f"/api/submissions/{created['id']}/cost").status_code == 404


def test_a_measurement_is_admitted_as_every_run_of_learner_code(settings, monkeypatch):
    """A measurement ran in a thread of its own, past every limit but "one at a time"; it is now admitted as a
    submission or a playground run is (the same per-address budget), waits for a slot, and its result is polled."""
    import time
    from types import SimpleNamespace

    import judge
    import judge.parent.grading

    measured = []

    def fake_grade(exercise, source, **kwargs):  # judge.grade with the cost section: CostGrader's report
        measured.append(source)
        return CostGrader()(SimpleNamespace(id="cost", source=source, exercise_id=exercise.id), lambda event: None)

    monkeypatch.setattr("web.cost_api.offered", lambda exercise, kind: True)
    monkeypatch.setattr(judge, "grade", fake_grade)
    monkeypatch.setattr(judge.parent.grading, "make_sandbox", lambda name: None)
    settings.submissions_per_minute_per_address = 2
    with TestClient(create_app(settings, grade=FakeGrader()), client=("10.0.0.1", 5000)) as client:
        created = client.post("/api/exercises/add-one/submissions", json={"source": CORRECT}).json()
        wait_done(client, created["id"])
        asked = client.post(f"/api/submissions/{created['id']}/cost")
        assert asked.status_code == 202 and asked.json()["status"] in ("running", "done")
        deadline = time.monotonic() + 10
        while client.get(f"/api/submissions/{created['id']}/cost").json()["status"] != "done":
            assert time.monotonic() < deadline, "the measurement never finished"
            time.sleep(0.02)
        assert client.get(f"/api/submissions/{created['id']}/cost").json()["cost"]["figures"]
        assert measured == [CORRECT]
        client.cookies.clear()  # another learner, the same address: its budget (2 a minute) is spent
        refused = client.post("/api/playground", json={"source": CORRECT})
        assert refused.status_code == 429 and "from one address (10.0.0.1)" in refused.json()["detail"]


def test_a_running_measurement_says_how_far_it_is(settings, monkeypatch):
    """Under load a measurement took minutes with nothing on the page: it now says it is grading and how many
    checks are done, as the grading's events come."""
    import threading
    import time
    from types import SimpleNamespace

    import judge
    import judge.parent.grading
    from judge.reports.report import ProgressEvent

    halfway, finish = threading.Event(), threading.Event()

    def fake_grade(exercise, source, on_event=None, **kwargs):
        for _ in range(2):
            on_event(ProgressEvent(type="check"))
        halfway.set()
        assert finish.wait(20)
        return CostGrader()(SimpleNamespace(id="cost", source=source, exercise_id=exercise.id), lambda event: None)

    monkeypatch.setattr("web.cost_api.offered", lambda exercise, kind: True)
    monkeypatch.setattr(judge, "grade", fake_grade)
    monkeypatch.setattr(judge.parent.grading, "make_sandbox", lambda name: None)
    with TestClient(create_app(settings, grade=FakeGrader())) as client:
        created = client.post("/api/exercises/add-one/submissions", json={"source": CORRECT}).json()
        wait_done(client, created["id"])
        url = f"/api/submissions/{created['id']}/cost"
        assert client.post(url).json()["status"] == "running"
        assert halfway.wait(20)
        said = client.get(url).json()
        assert (said["status"], said["phase"], said["checks_done"]) == ("running", "grading", 2)
        finish.set()
        deadline = time.monotonic() + 20
        while (said := client.get(url).json())["status"] != "done":
            assert time.monotonic() < deadline, "the measurement never finished"
            time.sleep(0.02)
        assert said["cost"]["figures"] and said["phase"] == ""
