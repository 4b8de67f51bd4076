"""`%%practice EXERCISE --submit`: the cell goes to the class's server, whose grader decides; the notebook shows
the server's report and the submission is stored with origin 'notebook'. The server's grader is the web tests'
fake (the real one is tests/cli/test_submit.py's); a revoked token is a usage error in the notebook."""

from __future__ import annotations

import pytest

from judge.reports.report import Report
from practice.magic import REPORT_MIME
from tests.notebook.conftest import execute
from tests.web.conftest import CORRECT, FIXTURE_COURSE, WRONG, FakeGrader
from tests.web.live import LiveServer
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.usefixtures("cheap_passwords")  # Argon2 at its lowest cost (tests/conftest.py)


def test_submit_from_a_notebook_counts_with_its_origin(kernel_name, tmp_path, monkeypatch):
    settings = Settings(data_dir=tmp_path / "data", exercises_dir=FIXTURE_COURSE, sandbox="none",
                        allow_unsandboxed=True, workers=1, secret_key="nb", queue="embedded",
                        database_url=f"sqlite:///{tmp_path / 'practice.db'}")
    grader = FakeGrader()
    app = create_app(settings, grade=grader)
    teacher = app.state.classes.add_instructor("teacher", "correct horse")
    klass = app.state.classes.create_class(teacher.id, "Class A")
    app.state.classes.join(klass.id, "learner-nb", "Nina")
    token = app.state.tokens.issue("learner-nb", "notebook test")
    monkeypatch.setenv("PRACTICE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("PRACTICE_EXERCISES_DIR", str(FIXTURE_COURSE))
    with LiveServer(app) as server:
        from cli.submitting import Credentials, save_credentials

        save_credentials(Credentials(server.url, token))
        cells = ["%load_ext practice", f"%%practice add-one --submit --lang en\n{WRONG}",
                 f"%%practice add-one --submit --lang en\n{CORRECT}"]
        nb = execute(cells, kernel_name, tmp_path)
        wrong, right = (c.outputs[-1]["data"] for c in nb.cells[1:3])
        assert Report.model_validate(wrong[REPORT_MIME]).verdict.value == "WRONG_ANSWER"
        assert Report.model_validate(right[REPORT_MIME]).verdict.value == "ACCEPTED"
        assert f"Graded by {server.url}: this submission counts in your class." in right["text/html"]
        history = app.state.store.history("learner-nb", "add-one")
        assert [s.origin for s in history] == ["notebook", "notebook"]
        assert [s.verdict for s in history] == ["ACCEPTED", "WRONG_ANSWER"] and len(grader.graded) == 2

        app.state.tokens.revoke_all("learner-nb")
        nb = execute(["%load_ext practice", f"%%practice add-one --submit --lang en\n{CORRECT}"], kernel_name,
                     tmp_path)
        said = "".join(o.text for o in nb.cells[1].outputs if o.output_type == "stream" and o.name == "stderr")
        assert "UsageError" in said and "refused your token" in said
        assert len(app.state.store.history("learner-nb", "add-one")) == 2
