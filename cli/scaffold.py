"""`practice new ID`: a new exercise folder with every file, ready to fill in and prove."""

from __future__ import annotations

import re
from pathlib import Path

from judge.parent.exercise import ID_PATTERN, ExerciseError

EXERCISE_TOML = '''# Exercise format: every field is documented in judge/parent/exercise.py.
format_version = 2
id = "{id}"
order = {order}   # position in the course: before the GPU exercises (ties sort by id)
chapter = {{ zh = "torch.compile：Dynamo、AOTAutograd 与 Inductor", en = "torch.compile: Dynamo, AOTAutograd and Inductor" }}
section = {{ zh = "TODO: 这道题练的小节", en = "TODO: the section this drills" }}
difficulty = 2
tags = []
entry_point = "f"
verified_torch = ["{torch}"]
starter_verdict = "WRONG_ANSWER"   # the verdict the unchanged starter must get

[title]
zh = "TODO 中文标题"
en = "TODO English title"

[learn]
zh = "TODO 学到什么"
en = "TODO what the learner takes away"

[limits]
time_seconds = 60
memory_mb = 2048

[[hints]]
zh = "TODO 温和的提示"
en = "TODO a gentle hint"

[[hints]]
zh = "TODO 直接的提示"
en = "TODO an explicit hint"

[[wrong]]
path = "wrong/plausible.py"
verdict = "WRONG_ANSWER"
check = "test_todo"
why = "TODO: what is wrong with it"
'''

STARTER = '''import torch


def f(x):
    return x  # TODO: the code the learner starts from
'''

REFERENCE = '''import torch


def f(x):
    return x  # TODO: the reference solution
'''

WRONG = '''import torch


def f(x):
    return x  # TODO: a wrong but plausible solution
'''

TEST = '''"""Hidden tests for {id}. Fixtures: submission, entry, reference, starter (see judge/verifier_side/fixtures.py)."""

import torch

from judge.checks import WrongAnswer, assert_same_result, describe_tensor
from judge.reports.i18n import T


def test_todo(entry, reference):
    """TODO: the first check the learner sees, in English
    zh: TODO：学习者看到的第一项检查（中文）
    """
    x = torch.randn(4, 8)  # TODO: inputs on which the starter and each wrong solution fail
    assert_same_result(entry.compile(fullgraph=True), reference.f, x, case=T.same(describe_tensor("x", x)))
    # TODO: delete this line once the checks above and below decide the verdict
    raise WrongAnswer(T("TODO: write the hidden tests for {id}", zh="TODO：为 {id} 写隐藏测试"))
'''


def next_order(root: Path) -> int:
    """A new exercise's place: after the last exercise that runs on a CPU, before the GPU exercises."""
    from judge.parent.exercise import load_course

    try:
        course = load_course(root) if root.is_dir() else []
    except ExerciseError:
        course = []
    gpu = [e.order for e in course if e.needs_cuda]
    cpu = [e.order for e in course if not e.needs_cuda and (not gpu or e.order < min(gpu))]
    return max(cpu, default=0) + 1


def scaffold(root: Path, exercise_id: str) -> Path:
    """Create `root/exercise_id` from templates; ExerciseError if the id is invalid or taken."""
    import torch

    if not re.match(ID_PATTERN, exercise_id):
        raise ExerciseError(f"'{exercise_id}' is not a valid id: use lowercase words joined by '-'")
    folder = Path(root) / exercise_id
    if folder.exists():
        raise ExerciseError(f"{folder} already exists")
    order = next_order(Path(root))
    files = {
        "exercise.toml": EXERCISE_TOML.format(id=exercise_id, order=order, torch=torch.__version__.split("+")[0]),
        "statement.md": "# TODO 标题\n\nTODO：用本章的语气写题目。\n",
        "statement.en.md": "# TODO title\n\nTODO: the statement in English.\n",
        "starter.py": STARTER,
        "solutions/reference.py": REFERENCE,
        "wrong/plausible.py": WRONG,
        "tests/test_hidden.py": TEST.format(id=exercise_id),
    }
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder
