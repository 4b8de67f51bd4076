"""What the server says about its graders: the compile cache layers still being built (/healthz, the exercise
page), and a GPU exercise's submission on a server without GPU graders (it waits in the gpu queue, visibly).
"""

from __future__ import annotations

import json
import shutil

import pytest
from fastapi.testclient import TestClient

from judge.parent.cache_layers import LayerProgress
from tests.web.conftest import FIXTURE_COURSE
from web.app import create_app
from web.settings import Settings


def _settings(tmp_path, course) -> Settings:
    return Settings(data_dir=tmp_path / "data", exercises_dir=course, sandbox="none", allow_unsandboxed=True,
                    workers=1, submissions_per_minute=50, secret_key="test-secret", queue="embedded")


def test_healthz_and_the_page_say_which_layers_are_still_being_built(tmp_path, grader):
    app = create_app(_settings(tmp_path, FIXTURE_COURSE), grade=grader)
    progress = LayerProgress(state="building", layer="full", pending=["add-one"])
    app.state.layers = {"cpu": progress}
    with TestClient(app) as client:
        assert client.get("/healthz").json()["layers"] == {
            "cpu": {"state": "building", "layer": "full", "pending": ["add-one"]}}
        page = client.get("/exercises/add-one?lang=en").text
        assert 'id="warming"' in page and "(1 exercises to go)" in page
        progress.update(state="ready", layer=None, pending=[])
        assert client.get("/healthz").json()["layers"]["cpu"] == {"state": "ready", "layer": None, "pending": []}
        assert 'id="warming"' not in client.get("/exercises/add-one").text


def _course_with_a_gpu_exercise(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(FIXTURE_COURSE / "add-one", course / "add-one")
    gpu = course / "gpu-add-one"
    shutil.copytree(FIXTURE_COURSE / "add-one", gpu)
    toml = (gpu / "exercise.toml").read_text().replace('id = "add-one"', 'id = "gpu-add-one"')
    (gpu / "exercise.toml").write_text(toml.replace("order = 1", "order = 2\nneeds_cuda = true"))
    return course


def _verdict(client, created) -> str | None:
    with client.stream("GET", created["events_url"]) as stream:
        for text in stream.iter_lines():
            if text.startswith("data: "):
                report = json.loads(text[6:]).get("report") or {}
                if report.get("verdict"):
                    return report["verdict"]
    return None


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a CUDA device: it grades GPU "
                                                                     "exercises itself")
def test_a_gpu_submission_waits_in_the_gpu_queue_where_no_gpu_grader_is(tmp_path):
    app = create_app(_settings(tmp_path, _course_with_a_gpu_exercise(tmp_path)))  # the real grader
    with TestClient(app) as client:
        assert 'id="no-gpu-grader"' in client.get("/exercises/gpu-add-one?lang=en").text
        assert 'id="no-gpu-grader"' not in client.get("/exercises/add-one?lang=en").text
        source = "def add_one(x):\n    return x + 1\n"
        waiting = client.post("/api/exercises/gpu-add-one/submissions", json={"source": source}).json()
        health = client.get("/healthz").json()
        assert health["queues"] == {"embedded": 0, "gpu": 1}
        assert health["workers"][0]["queues"] == ["cpu"]
        # Another learner's CPU submission sent after it is graded: the queue goes past the one that waits.
        first_learner = dict(client.cookies)
        client.cookies.clear()
        graded = client.post("/api/exercises/add-one/submissions", json={"source": source}).json()
        assert _verdict(client, graded) is not None  # graded (its verdict depends on the machine's load)
        client.cookies.clear()
        client.cookies.update(first_learner)
        assert client.get(f"/api/submissions/{waiting['id']}").json()["status"] == "queued"
        assert client.get("/healthz").json()["queues"]["gpu"] == 1


def test_healthz_says_the_server_is_warming_up_until_its_pools_have_started(tmp_path, monkeypatch):
    """The warm-up thread of a first start (web.graders's warm()) blocks here until the test releases it."""
    import threading

    import web.app
    from web.graders import Grading, WarmPools

    release, warmed, pools = threading.Event(), threading.Event(), WarmPools()

    def warm():
        release.wait(60)
        pools.state = "ready"
        warmed.set()

    def make_grade_fn(course, sandbox_name, gpu_pool_size):
        return Grading(lambda submission, publish: None, warm, lambda: None,
                       {"cpu": LayerProgress(state="ready", layer=None)}, False, pools)

    monkeypatch.setattr(web.app, "make_grade_fn", make_grade_fn)
    with TestClient(create_app(_settings(tmp_path, FIXTURE_COURSE))) as client:
        health = client.get("/healthz").json()
        assert (health["pools"], health["warming_up"]) == ("starting", True)
        release.set()
        assert warmed.wait(60)
        health = client.get("/healthz").json()
        assert (health["pools"], health["warming_up"]) == ("ready", False)
        client.app.state.layers = {"cpu": LayerProgress(state="building", layer="base", pending=["add-one"])}
        assert client.get("/healthz").json()["warming_up"] is True  # a base layer being built: every run needs it
        client.app.state.layers = {"cpu": LayerProgress(state="building", layer="full", pending=["add-one"])}
        health = client.get("/healthz").json()  # the references' kernels: only a reference-like graph waits for them
        assert health["warming_up"] is False and health["layers"]["cpu"]["pending"] == ["add-one"]


def test_a_test_grade_function_warms_nothing(tmp_path, grader):
    with TestClient(create_app(_settings(tmp_path, FIXTURE_COURSE), grade=grader)) as client:
        health = client.get("/healthz").json()
    assert (health["pools"], health["warming_up"]) == ("off", False)


def test_warm_says_when_the_local_pools_are_ready(tmp_path):
    from web.course import Course
    from web.graders import make_grade_fn

    course = Course(FIXTURE_COURSE)
    grading = make_grade_fn(course, "local")
    try:
        assert grading.pools.state == "starting"
        grading.warm()  # blocks until a worker of each pool is ready
        assert grading.pools.state == "ready"
    finally:
        grading.close()
        course.close()


def test_healthz_says_failing_with_503_while_the_warm_graders_cannot_start(tmp_path, grader):
    """A worker that could not start left /healthz at "ok": a load balancer kept sending work to a server whose
    gradings all ended INTERNAL_ERROR. A grading that is not the grader's own failure shows they start after all."""
    from judge.reports.report import Verdict

    app = create_app(_settings(tmp_path, FIXTURE_COURSE), grade=grader)
    with TestClient(app) as client:
        pools = app.state.warm_pools
        pools.state = "failed"
        health = client.get("/healthz")
        assert health.status_code == 503 and health.json()["status"] == "failing"
        assert health.json()["pools"] == "failed"
        pools.graded(Verdict.INTERNAL_ERROR)
        assert client.get("/healthz").status_code == 503
        pools.graded(Verdict.WRONG_ANSWER)
        health = client.get("/healthz")
        assert health.status_code == 200 and health.json()["status"] == "ok" and health.json()["pools"] == "ready"


def test_a_cpu_queue_worker_leaves_the_gpu_to_the_gpu_queue(monkeypatch):
    """On a machine with CUDA, `practice worker --queue cpu` graded every GPU submission in full (their CPU tier enters
    the cpu queue first), past the gpu queue and its GPU slots: seen on the H200."""
    from judge.parent import requirements
    from judge.shared.paths import EXERCISES_DIR
    from web.course import Course
    from web.graders import make_grade_fn

    monkeypatch.setattr(requirements, "cuda_missing", lambda: None)  # as on a machine with a CUDA device
    course = Course(EXERCISES_DIR)  # the course has GPU exercises
    grading = make_grade_fn(course, "none", use_gpu=False)
    try:
        assert grading.serves_gpu is False and "gpu" not in grading.layers
    finally:
        grading.close()
        course.close()
