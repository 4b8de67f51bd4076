"""A GPU exercise's CPU tier (judge/shared/tiers.py): a declared subset of its hidden tests, in the declared order,
graded by
the same grade() on the CPU, with no CUDA device and Triton's interpreter in both processes; its report says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judge.parent.exercise import ExerciseError, load_exercise
from judge.parent.grading import grade
from judge.parent.job import make_jobs
from judge.reports.report import Verdict
from judge.shared.paths import EXERCISES_DIR
from judge.shared.tiers import CPU, CPU_TIER_SECONDS, grade_tiers, limits_for, selected, standing, waits_for_gpu

FAKE = Path(__file__).parent.parent / "fake_course" / "add-one"
# Run in the verifier: what the CPU tier promises its hidden tests.
ENVIRONMENT_TEST = '''
import os

from judge.checks import WrongAnswer, grading_device
from judge.reports.i18n import T


def test_on_the_cpu(entry):
    """the tier's tests run on the CPU, CUDA hidden, Triton interpreted
    zh: 这一层的测试在 CPU 上运行，看不到 CUDA，Triton 解释执行
    """
    seen = (grading_device(), os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ.get("TRITON_INTERPRET"))
    if seen != ("cpu", "", "1"):
        raise WrongAnswer(T.same(f"saw {seen}"))
'''
# The learner's side sees the tier too: the runner's process has the interpreter on and no CUDA device.
SEES_THE_TIER = '''
import os

import torch


def f(x):
    interpreted = os.environ.get("TRITON_INTERPRET") == "1" and not torch.cuda.is_available()
    return x + 1 if interpreted else x + 2
'''


@pytest.fixture
def gpu_exercise(tmp_path) -> Path:
    """The fake course's add-one made a GPU exercise whose CPU tier is two of its tests, in another order."""
    folder = tmp_path / "add-one"
    shutil.copytree(FAKE, folder)
    (folder / "tests" / "test_env.py").write_text(ENVIRONMENT_TEST)
    toml = folder / "exercise.toml"
    toml.write_text(toml.read_text().replace('id = "add-one"', 'id = "add-one"\nneeds_cuda = true\n'
                                             'cpu_tier = ["test_values", "test_on_the_cpu"]', 1))
    return folder


def test_a_file_that_runs_on_holds_a_cpu_grader_no_longer_than_the_cpu_tiers_cap():
    exercise = load_exercise(EXERCISES_DIR / "triton-fused-add-rmsnorm")  # 240 s on the GPU
    capped = limits_for(exercise.limits, CPU)
    assert (capped.time_seconds, capped.cpu_limit, capped.memory_mb) == (CPU_TIER_SECONDS, CPU_TIER_SECONDS,
                                                                         exercise.limits.memory_mb)
    assert limits_for(exercise.limits, None) == exercise.limits
    assert make_jobs(exercise, "", tier=CPU)[1].runner_seconds == capped.wall_limit


def test_a_tier_selects_its_tests_in_its_order_whatever_their_parameters():
    names = ["test_a", "test_b[x]", "test_c", "test_b[y]", "test_zz_contract"]
    assert [names[i] for i in selected(names, ["test_b", "test_a"])] == ["test_b[x]", "test_b[y]", "test_a"]


# Any CPU exercise graded by a warm pool's forked children: the file sees no CUDA device (where one is visible, the
# warm worker's own compile starts CUDA and every compile of its forked children fails: "Cannot re-initialize CUDA").
NO_CUDA_HERE = '''
import os


def f(x):
    return x + 1 if os.environ.get("CUDA_VISIBLE_DEVICES") == "" else x + 2
'''


def test_a_warm_pools_forked_children_see_no_cuda_device_whatever_the_machine(local, add_one):
    report = grade(add_one, NO_CUDA_HERE, sandbox=local)
    assert report.verdict is Verdict.ACCEPTED, report.summary


def test_the_cpu_tier_runs_its_tests_only_on_the_cpu_where_the_learner_sees_it_too(gpu_exercise, local):
    exercise = load_exercise(gpu_exercise)
    report = grade(exercise, SEES_THE_TIER, sandbox=local, tier=CPU)
    assert [c.name for c in report.checks] == ["test_values", "test_on_the_cpu"], report.summary
    assert report.accepted and report.tier == CPU and waits_for_gpu(report) and standing(report) == "CPU_TIER_PASSED"
    assert "waits for a CUDA GPU" in report.summary and "GPU" in report.translations["zh"]["summary"]


def test_a_failing_cpu_tier_is_the_verdict_and_no_gpu_grading_follows(gpu_exercise, local):
    exercise = load_exercise(gpu_exercise)
    full: list[str] = []
    report, waits = grade_tiers(exercise, "def f(x):\n    return x + 2\n",
                                grade_cpu_tier=lambda text: grade(exercise, text, sandbox=local, tier=CPU),
                                grade_full=lambda text: full.append(text))
    assert (report.verdict, report.first_failure().name, waits, full) == (Verdict.WRONG_ANSWER, "test_values",
                                                                          False, [])
    assert standing(report) == "WRONG_ANSWER" and not waits_for_gpu(report)


GPU = 'id = "add-one"\nneeds_cuda = true\ncpu_tier = ["test_one_graph"]'


@pytest.mark.parametrize("edits, expected", [
    ([('id = "add-one"', 'id = "add-one"\ncpu_tier = ["test_values"]')],
     "cpu_tier: only an exercise with needs_cuda = true grades in tiers"),
    ([('id = "add-one"', GPU), ('check = "test_values"', 'check = "test_values"\ntier = "cpu"')],
     "wrong/add_two.py is pinned to the cpu tier, so its check must be one of cpu_tier's tests"),
    ([('id = "add-one"', GPU), ('check = "test_values"', 'check = "test_values"\ntier = "gpu"')],
     "wrong.0.tier: String should match pattern"),
])
def test_a_tier_declared_wrong_is_named_at_load(tmp_path, edits, expected):
    folder = tmp_path / "add-one"
    shutil.copytree(FAKE, folder)
    toml = folder / "exercise.toml"
    for old, new in edits:
        toml.write_text(toml.read_text().replace(old, new, 1))
    with pytest.raises(ExerciseError) as info:
        load_exercise(folder)
    assert expected in str(info.value)
