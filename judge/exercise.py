"""Exercise folders and their `exercise.toml` (format_version = 2).

An exercise is a folder `exercises/<id>/`:

    exercise.toml        metadata, documented field by field below
    statement.md         the statement in Chinese (the book's language)
    statement.en.md      the statement in English
    starter.py           what the learner starts from (must fail)
    solutions/*.py       correct solutions; `reference` names the one shown after an accepted submission
    wrong/*.py           known-wrong solutions, each pinned in [[wrong]] to a verdict and a failing check
    tests/test_*.py      hidden pytest files, written against the fixtures in `judge.fixtures`
    public.py            optional: what the learner's code is handed (a grader's function, an operator the
                         graphs may call); the only exercise file the runner ever sees

Version 2 grades in two processes (see docs/architecture.md): hidden tests run in the verifier and reach
the learner's code only through the runner, which sends back graphs and values.

Every problem is reported as `ExerciseError("<file>: <field>: <what to fix>")`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judge.report import Verdict
from sandbox.limits import Limits  # the [limits] table of the format

FORMAT_VERSION = 2
ID_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"


class ExerciseError(Exception):
    """An exercise folder is malformed; the message names the file, the field and the fix."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Text(_Strict):
    """A text in both languages of the course."""

    zh: str = Field(min_length=1, description="Chinese, in the voice of the book.")
    en: str = Field(min_length=1, description="English.")

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


class PinnedSolution(_Strict):
    """A known solution and the verdict it must get from the hidden tests."""

    path: str = Field(description="File relative to the exercise folder.")
    verdict: Verdict = Field(description="The verdict the hidden tests must give it.")
    check: str | None = Field(None, description="The first check it must fail (a hidden test's name).")
    why: str = Field("", description="What is wrong with it, for instructors.")


class Exercise(_Strict):
    """One exercise. Fields are read from `exercise.toml`; `root` is the folder."""

    format_version: int = Field(description=f"Must be {FORMAT_VERSION}.")
    id: str = Field(pattern=ID_PATTERN, description="Folder name; lowercase words joined by '-'.")
    order: int = Field(description="Position in the course (1 = first).")
    title: Text
    chapter: str = Field(description="The book chapter the exercise comes from.")
    section: str = Field(description="The chapter's section it drills.")
    difficulty: int = Field(ge=1, le=5, description="1 (warm-up) .. 5 (hard).")
    tags: list[str] = []
    entry_point: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="The name the learner must define.")
    learn: Text | None = Field(None, description="What the learner should take away.")
    hints: list[Text] = Field(default_factory=list, description="In order, gentle to explicit.")
    limits: Limits = Limits()
    verified_torch: list[str] = Field(min_length=1, description="torch versions the exercise was proven on.")
    statement: str = "statement.md"
    statement_en: str = "statement.en.md"
    starter: str = "starter.py"
    reference: str = Field("solutions/reference.py", description="Shown after an accepted submission.")
    tests: list[str] = Field(default_factory=list, description="Hidden test files; default: tests/test_*.py.")
    starter_verdict: Verdict = Field(description="The verdict the unchanged starter must get.")
    solutions: list[str] = Field(default_factory=list, description="Other correct forms (must be ACCEPTED).")
    wrong: list[PinnedSolution] = Field(default_factory=list, description="Known-wrong solutions.")
    public: str | None = Field(None, description="File given to the runner too (imported as module "
                               "`exercise_public`): functions and operators the learner's code receives.")
    op_namespaces: list[str] = Field(default_factory=list, description="Operator namespaces (besides aten and "
                                     "prims) a graph from the runner may call, e.g. ['practice'].")
    trust: str = Field("verified", pattern=r"^(verified|self-checked)$", description="'verified': the verdict "
                       "is decided outside the learner's process. 'self-checked': part of it rests on what the "
                       "learner's process reports (say why in trust_reason and docs/security.md).")
    trust_reason: Text | None = Field(None, description="Why a self-checked exercise cannot be verified.")
    needs_cuda: bool = Field(False, description="Graded only where a CUDA GPU is present.")
    root: Path = Field(exclude=True)

    @field_validator("format_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != FORMAT_VERSION:
            raise ValueError(f"this judge reads format_version = {FORMAT_VERSION}, got {value}")
        return value

    @field_validator("wrong")
    @classmethod
    def _wrong_is_wrong(cls, value: list[PinnedSolution]) -> list[PinnedSolution]:
        for pinned in value:
            if pinned.verdict is Verdict.ACCEPTED:
                raise ValueError(f"{pinned.path} is listed as wrong but pinned to ACCEPTED")
        return value

    @model_validator(mode="after")
    def _files_exist(self) -> "Exercise":
        if self.id != self.root.name:
            raise ValueError(f"id '{self.id}' must equal the folder name '{self.root.name}'")
        named = {"statement": self.statement, "statement_en": self.statement_en, "starter": self.starter,
                 "reference": self.reference}
        if self.public:
            named["public"] = self.public
        if self.trust == "self-checked" and self.trust_reason is None:
            raise ValueError("trust: a self-checked exercise needs trust_reason (zh and en) saying why")
        named.update({f"solutions[{i}]": p for i, p in enumerate(self.solutions)})
        named.update({f"wrong[{i}].path": w.path for i, w in enumerate(self.wrong)})
        named.update({f"tests[{i}]": p for i, p in enumerate(self.tests)})
        for field, rel in named.items():
            if not (self.root / rel).is_file():
                raise ValueError(f"{field}: {rel} does not exist in {self.root}")
        if not self.test_files():
            raise ValueError("no hidden tests: add tests/test_*.py or list them in 'tests'")
        return self

    def path(self, rel: str) -> Path:
        return self.root / rel

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def test_files(self) -> list[str]:
        """Hidden test files relative to the folder, in a stable order."""
        if self.tests:
            return list(self.tests)
        return sorted(p.relative_to(self.root).as_posix() for p in (self.root / "tests").glob("test_*.py"))

    def statement_text(self, lang: str) -> str:
        return self.read(self.statement if lang == "zh" else self.statement_en)

    @property
    def cpu_seconds(self) -> float:
        return self.limits.cpu_limit


def load_exercise(folder: Path | str) -> Exercise:
    """Read and validate one exercise folder."""
    folder = Path(folder)
    toml_path = folder / "exercise.toml"
    if not toml_path.is_file():
        raise ExerciseError(f"{toml_path}: missing; every exercise folder needs an exercise.toml")
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ExerciseError(f"{toml_path}: not valid TOML: {exc}") from None
    if "root" in data:
        raise ExerciseError(f"{toml_path}: root: reserved, remove it")
    try:
        return Exercise(**data, root=folder.resolve())
    except ValidationError as exc:
        raise ExerciseError(f"{toml_path}: {_describe(exc)}") from None


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err["loc"]) or "(file)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            msg = "required field is missing"
        elif err["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling; fields are documented in judge/exercise.py)"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts)


def load_course(root: Path | str) -> list[Exercise]:
    """Every exercise under `root`, in course order. A malformed one raises ExerciseError."""
    root = Path(root)
    if not root.is_dir():
        raise ExerciseError(f"{root}: exercises folder not found")
    exercises = [load_exercise(p) for p in sorted(root.iterdir()) if p.is_dir() and not p.name.startswith((".", "_"))]
    return sorted(exercises, key=lambda e: (e.order, e.id))


def find_exercise(root: Path | str, exercise_id: str) -> Exercise:
    """One exercise by id; ExerciseError listing the known ids when it does not exist."""
    folder = Path(root) / exercise_id
    if not (folder / "exercise.toml").is_file():
        known = sorted(p.name for p in Path(root).iterdir() if (p / "exercise.toml").is_file())
        raise ExerciseError(f"unknown exercise '{exercise_id}'; known: {', '.join(known) or 'none'}")
    return load_exercise(folder)
