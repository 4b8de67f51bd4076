"""What the trusted side sends into the sandbox to grade one submission.

A job carries every file the run needs as text, so the sandboxed process needs no access to the
exercises folder: the hidden tests are written to its private scratch folder, collected, and
deleted before the learner's code is imported.
"""

from __future__ import annotations

import secrets

from pydantic import BaseModel, Field

from judge.exercise import Exercise, Limits

SUBMISSION_MODULE = "submission"


class Job(BaseModel):
    exercise_id: str
    entry_point: str
    source: str = Field(description="The learner's source text.")
    filename: str = Field("solution.py", description="How the learner's file is named in messages.")
    files: dict[str, str] = Field(description="Exercise files by relative path: tests/*, solutions/*, starter.py.")
    tests: list[str]
    reference: str = Field("solutions/reference.py", description="Key of the reference solution in `files`.")
    starter: str = Field("starter.py", description="Key of the starter in `files`.")
    limits: Limits
    nonce: str = Field(default_factory=lambda: secrets.token_hex(16))


def make_job(exercise: Exercise, source: str, filename: str = "solution.py") -> Job:
    """Bundle an exercise's hidden files and a submission into a job."""
    rels = set(exercise.test_files()) | {exercise.reference, exercise.starter}
    # Helper modules beside the tests (tests/_*.py) travel too.
    rels |= {p.relative_to(exercise.root).as_posix() for p in (exercise.root / "tests").glob("*.py")}
    return Job(
        exercise_id=exercise.id,
        entry_point=exercise.entry_point,
        source=source,
        filename=filename,
        files={rel: exercise.read(rel) for rel in sorted(rels)},
        tests=exercise.test_files(),
        reference=exercise.reference,
        starter=exercise.starter,
        limits=exercise.limits,
    )
