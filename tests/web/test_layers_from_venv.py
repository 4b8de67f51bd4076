"""A server installed in a virtualenv (`pip install -e .` into `.venv`) grades from its compile cache layers.

Its bwrap workers used to run the base interpreter (the virtualenv's `bin/python` resolved to its target), which
imports the base installation's packages instead of the virtualenv's: another torch (every kernel of the layers,
built by this environment's torch, missed) or none (every grading failed). The exercise here has one hidden test
that passes only when Inductor's FX-graph cache served the verifier's compile, so ACCEPTED means a hit.
"""

from __future__ import annotations

import json
import shutil
import sys
import time

import pytest
from fastapi.testclient import TestClient

from sandbox.backends import unavailable_reason
from tests.conftest import FAKE_COURSE
from web.app import create_app
from web.settings import Settings

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.xdist_group("sandbox")]

HIT_TEST = '''import torch
from torch._dynamo.utils import counters

from judge import remote


def test_served_by_the_layer(entry):
    """the verifier's Inductor compile of f is served by the trusted layer
    zh: 验证端对 f 的 Inductor 编译命中可信缓存层
    """
    compiled = entry.compile(fullgraph=True, what="f", local_backend="inductor")
    compiled(torch.randn(8))
    assert counters["inductor"]["fxgraph_cache_hit"] >= 1, dict(counters["inductor"])
'''


def _course(tmp_path):
    exercise = tmp_path / "course" / "inductor-hit"
    shutil.copytree(FAKE_COURSE / "add-one", exercise)
    shutil.rmtree(exercise / "tests")
    (exercise / "tests").mkdir()
    (exercise / "tests" / "test_hit.py").write_text(HIT_TEST)
    toml = (exercise / "exercise.toml").read_text().replace('id = "add-one"', 'id = "inductor-hit"')
    (exercise / "exercise.toml").write_text(toml.split("[[wrong]]")[0])
    return exercise.parent


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="not running in a virtualenv")
@pytest.mark.skipif(bool(unavailable_reason("bwrap")), reason=f"bwrap: {unavailable_reason('bwrap')}")
def test_a_virtualenv_server_grades_from_its_layers(tmp_path, monkeypatch, layers_root):
    monkeypatch.setenv("PRACTICE_COMPILE_CACHE", "1")
    monkeypatch.setenv("PRACTICE_COMPILE_CACHE_DIR", str(layers_root))  # its course's full layer is its own
    settings = Settings(data_dir=tmp_path / "data", exercises_dir=_course(tmp_path), sandbox="bwrap", workers=1,
                        secret_key="test-secret", queue="embedded", submissions_per_minute=50)
    app = create_app(settings)
    with TestClient(app) as client:
        seen, deadline = [], time.monotonic() + 900
        while time.monotonic() < deadline:
            state = client.get("/healthz").json()["layers"]["cpu"]
            if not seen or seen[-1] != state["state"]:
                seen.append(state["state"])
            if state["state"] in ("ready", "failed"):
                break
            time.sleep(1)  # the layers' build says nothing but through /healthz
        assert seen[-1] == "ready", seen
        source = (FAKE_COURSE / "add-one" / "solutions" / "reference.py").read_text()
        created = client.post("/api/exercises/inductor-hit/submissions", json={"source": source}).json()
        with client.stream("GET", created["events_url"]) as stream:
            reports = [json.loads(t[6:]).get("report") for t in stream.iter_lines() if t.startswith("data: ")]
        report = next(r for r in reports if r and r.get("verdict"))
        assert report["verdict"] == "ACCEPTED", (report["summary"], report["checks"], report.get("stderr", "")[-2000:])
