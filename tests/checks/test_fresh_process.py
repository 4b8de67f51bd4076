"""judge.checks.fresh_process: scripts in a new interpreter, results through a file, learner tracebacks."""

import pytest

from judge.checks import WrongAnswer
from judge.checks.fresh_process import LearnerError, learner_error, run_python
from judge.compiler.locations import register_learner_file
from judge.reports.report import Verdict

WRITE_ENV = '''
import json, os, sys
print("learner noise on stdout")
with open(sys.argv[1], "w") as f:
    json.dump({"value": os.environ["PROBE"], "arg": sys.argv[2]}, f)
'''


def test_result_comes_from_the_file_with_the_given_env(tmp_path):
    result = run_python(WRITE_ENV, [str(tmp_path / "r.json"), "x"], env={"PROBE": "42"},
                        result_file=tmp_path / "r.json", timeout=60)
    assert result == {"value": "42", "arg": "x"}


def test_a_process_that_dies_without_a_result_is_a_runtime_error(tmp_path):
    with pytest.raises(LearnerError, match=r"died \(exit code 3\)") as info:
        run_python("import sys; sys.stderr.write('boom'); sys.exit(3)", [], env={},
                   result_file=tmp_path / "r.json", timeout=60)
    assert info.value.verdict is Verdict.RUNTIME_ERROR
    assert "boom" in info.value.diagnostics[0].message


def test_a_stale_result_file_is_not_read(tmp_path):
    (tmp_path / "r.json").write_text('{"old": true}')
    with pytest.raises(LearnerError):
        run_python("pass", [], env={}, result_file=tmp_path / "r.json", timeout=60)


def test_a_timeout_is_reported(tmp_path):
    with pytest.raises(LearnerError, match="did not finish in 1 s"):
        run_python("import time; time.sleep(30)", [], env={}, result_file=tmp_path / "r.json", timeout=1)


def test_learner_error_points_at_the_learners_line(tmp_path):
    path = tmp_path / "submission.py"
    path.write_text("def build():\n    return 1 / 0\n")
    register_learner_file(str(path), "solution.py")
    text = (f'Traceback (most recent call last):\n  File "<string>", line 9, in <module>\n'
            f'  File "{path}", line 2, in build\nZeroDivisionError: division by zero\n')
    error = learner_error("build_artifacts(fn, example)", text)
    assert error.verdict is Verdict.RUNTIME_ERROR and not isinstance(error, WrongAnswer)
    assert "line 2 (`return 1 / 0`)" in str(error.message) and "ZeroDivisionError" in str(error.message)
