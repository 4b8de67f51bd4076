"""Exercise folders and their `exercise.toml` (format_version = 2).

An exercise is a folder `exercises/<id>/`:

    exercise.toml        metadata, documented field by field below
    statement.md         the statement in Chinese (the book's language)
    statement.en.md      the statement in English
    starter.py           what the learner starts from (must fail)
    solutions/*.py       correct solutions; `reference` names the one shown after an accepted submission
    wrong/*.py           known-wrong solutions, each pinned in [[wrong]] to a verdict and a failing check
    tests/test_*.py      hidden pytest files, written against the fixtures in `judge.verifier_side.fixtures`
    public.py            optional: what the learner's code is handed (a grader's function, an operator the
                         graphs may call); the only exercise file the runner ever sees

Version 2 grades in two processes (see docs/architecture.md): hidden tests run in the verifier and reach
the learner's code only through the runner, which sends back graphs and values.

Every problem is reported as `ExerciseError("<file>: <field>: <what to fix>")`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import tomllib
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judge.costs.spec import CostSpec
from judge.parent.battery import KINDS
from judge.reports.report import Verdict
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
    break_id: str | None = Field(None, pattern=r"^GB\d{4}$", description="For a GRAPH_BREAK: the id in PyTorch's "
                                 "graph-break registry (torch/_dynamo/graph_break_registry.json) of the break its "
                                 "failing check reports, e.g. 'GB0170'; its proof fails when torch classifies the "
                                 "break otherwise (judge/compiler/break_registry.py). Required where the report "
                                 "names an id.")
    why: str = Field("", description="What is wrong with it, for instructors.")
    kind: str | None = Field(None, description="For a wrong solution that is an attack rather than a mistake: its "
                             "kind, one of judge/parent/battery.py's KINDS (the exercise's battery counts it).")
    tier: str | None = Field(None, pattern=r"^cpu$", description="'cpu': the exercise's CPU tier (cpu_tier) gives it "
                             "this verdict at this check, on any machine; its proof runs on the CPU too "
                             "(judge/shared/tiers.py). None: only the full grading on a GPU catches it.")

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str | None) -> str | None:
        if value is not None and value not in KINDS:
            raise ValueError(f"kind {value!r} is not a kind of attack; use one of {', '.join(KINDS)} "
                             "(judge/parent/battery.py)")
        return value


DTYPES = ("float16", "bfloat16", "float32", "float64")


class ContractInput(_Strict):
    """One tensor argument of the entry point, in call order ([[contract.inputs]])."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="The argument's name, for messages.")
    shape: list[str | int] = Field(description="Each dim a size (8) or a symbol of contract.dims ('N'); "
                                   "inputs sharing a symbol get the same size.")
    low: float | str | None = Field(None, description="Smallest value allowed (inclusive), a number or a symbol "
                                    "of contract.dims (its size in this call); none: any finite value.")
    high: float | str | None = Field(None, description="Largest value allowed (inclusive), as `low`.")
    dtype: str | None = Field(None, description="A fixed dtype for this input ('int64', 'int32', 'bool'); none: "
                              "the call's floating dtype, one of contract.dtypes.")


class Contract(_Strict):
    """What the statement promises about the entry point, checked by the generic contract checks.

    An exercise that declares `[contract]` gets the hidden module `judge/checks/contract_tests.py` run after its
    own tests: a search for inputs inside the contract where the compiled entry point (the graph the runner
    captured, run here) differs from the original (`compare_with`, run here), and the contract's promises.
    """

    inputs: list[ContractInput] = Field(min_length=1, description="The tensor arguments, in call order.")
    dims: dict[str, tuple[int, int]] = Field(default_factory=dict, description="Each shape symbol's "
                                             "[smallest, largest] size; the search tries a few sizes in it.")
    dtypes: list[str] = Field(["float32"], min_length=1, description="Dtypes the contract allows (all inputs "
                              "share one per call): float16, bfloat16, float32, float64.")
    keep_dtype: bool = Field(True, description="Every tensor output has the inputs' dtype (no silent promotion).")
    inputs_unchanged: bool = Field(True, description="The entry point leaves every input unmodified.")
    compare_with: str = Field("starter", pattern=r"^(starter|reference)$", description="The module whose "
                              "`entry_point` gives the expected values (run here, on copies of the inputs).")
    grads: bool = Field(False, description="Also compare every input's gradient (backward of the outputs' sum).")
    fullgraph: bool = Field(True, description="Compile with fullgraph=True in the runner.")
    dynamic: bool | None = Field(None, description="The `dynamic=` of the runner's torch.compile.")
    local_backend: str | None = Field(None, pattern=r"^(aot_eager|inductor)$", description="Compile the "
                                      "captured graph here with this backend before running it.")
    rtol: float | None = Field(None, ge=0, description="Relative tolerance; none: the dtype's default.")
    atol: float | None = Field(None, ge=0, description="Absolute tolerance; none: the dtype's default. Set 0 "
                               "when values near zero matter (sqrt(t + eps) differs from sqrt(t) by < 1e-5).")
    examples: int = Field(60, ge=1, le=500, description="Search budget: examples tried per submission.")
    shapes: int = Field(2, ge=1, le=8, description="Distinct shapes (and so runner round trips) per dtype.")
    seed: int = Field(0, description="Mixed into each grading's draw (judge/shared/draw.py), which picks the "
                                     "search's sizes and cases per file; the report shows the seed the search used.")
    thresholds: list[float] = Field([], description="Input values where the original's behaviour changes (a "
                                    "branch at `x > 1e-3`): the boundary check (judge/checks/contract.py: "
                                    "boundary_cases) tries each one and its neighbours one ulp away in every dtype, "
                                    "beside zeros of both signs, subnormals, the smallest normal and huge values.")

    @field_validator("dtypes")
    @classmethod
    def _known_dtypes(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in DTYPES:
                raise ValueError(f"unknown dtype '{name}'; use one of {', '.join(DTYPES)}")
        return value

    @model_validator(mode="after")
    def _symbols_declared(self) -> Contract:
        for spec in self.inputs:
            if spec.dtype is not None and spec.dtype not in ("int64", "int32", "bool"):
                raise ValueError(f"inputs.{spec.name}.dtype: use int64, int32 or bool (floating inputs take "
                                 "contract.dtypes)")
            bounds = [b for b in (spec.low, spec.high) if isinstance(b, str)]
            for dim in list(spec.shape) + bounds:
                if isinstance(dim, str) and dim not in self.dims:
                    raise ValueError(f"inputs.{spec.name}.shape: symbol '{dim}' is not in contract.dims "
                                     f"(add {dim} = [smallest, largest])")
        for name, (lo, hi) in self.dims.items():
            if not 0 <= lo <= hi:
                raise ValueError(f"dims.{name}: need 0 <= smallest <= largest, got [{lo}, {hi}]")
        return self


class QuestionSpec(_Strict):
    """Optional [questions]: what to ask a learner about their own accepted file (judge/parent/questions.py); each
    answer is measured by compiling their file, never read from a key."""

    kinds: list[Literal["revert", "kernels", "node_line", "resize"]] = Field(
        min_length=1, description="revert: how many graphs if their fix went back to the starter's lines; kernels: "
                                  "how many kernels Inductor makes of their function; node_line: which of their "
                                  "lines put a node into the graph; resize: how many graphs Dynamo compiles when "
                                  "the first input's first dimension becomes 1 on a second call.")
    focus: list[str] = Field(default_factory=list, description="node_line: the operators to ask about, first found "
                                                               "first (e.g. ['where']); without one, the graph's "
                                                               "last computing node.")


class Exercise(_Strict):
    """One exercise. Fields are read from `exercise.toml`; `root` is the folder."""

    format_version: int = Field(description=f"Must be {FORMAT_VERSION}.")
    id: str = Field(pattern=ID_PATTERN, description="Folder name; lowercase words joined by '-'.")
    order: int = Field(description="Position in the course (1 = first).")
    title: Text
    chapter: Text = Field(description="The book chapter the exercise comes from ({zh, en}; a plain string reads "
                                      "the same in both languages).")
    section: Text = Field(description="The chapter's section it drills ({zh, en}, or a plain string).")

    @field_validator("chapter", "section", mode="before")
    @classmethod
    def _same_in_both(cls, value):
        return {"zh": value, "en": value} if isinstance(value, str) else value
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
    starter_break_id: str | None = Field(None, pattern=r"^GB\d{4}$", description="For a GRAPH_BREAK starter: "
                                         "the registry id of its break, as `break_id` of [[wrong]].")
    solutions: list[str] = Field(default_factory=list, description="Other correct forms (must be ACCEPTED).")
    wrong: list[PinnedSolution] = Field(default_factory=list, description="Known-wrong solutions.")
    public: str | None = Field(None, description="File given to the runner too (imported as module "
                               "`exercise_public`): functions and operators the learner's code receives.")
    build_process: bool = Field(False, description="The learner's entry point is called in a build process "
                                "(judge/checks/artifact_processes.py): the runner forks the process it is forked "
                                "from before the learner's file is imported.")
    op_namespaces: list[str] = Field(default_factory=list, description="Operator namespaces (besides aten and "
                                     "prims) a graph from the runner may call, e.g. ['practice'].")
    trust: str = Field("verified", pattern=r"^(verified|self-checked)$", description="'verified': the verdict "
                       "is decided outside the learner's process. 'self-checked': part of it rests on what the "
                       "learner's process reports (say why in trust_reason and docs/security.md).")
    trust_reason: Text | None = Field(None, description="Why a self-checked exercise cannot be verified.")
    needs_cuda: bool = Field(False, description="Graded only where a CUDA GPU is present.")
    cpu_tier: list[str] = Field(default_factory=list, description="For a needs_cuda exercise: the hidden tests "
                                "(function names, in the order they run) of its CPU tier, graded first on the CPU "
                                "on any machine, with no CUDA device and Triton's interpreter; only a file that "
                                "passes them waits for a GPU (judge/shared/tiers.py).")
    contract: Contract | None = Field(None, description="Optional [contract]: input shapes, ranges and dtypes, "
                                      "what the outputs keep; checked generically (see Contract).")
    cost: CostSpec | None = Field(None, description="Optional [cost]: the inputs every report's cost figures "
                                  "(ops, bytes, kernels, time) are measured on; see judge/costs/spec.py.")
    questions: QuestionSpec | None = Field(None, description="Optional [questions] asked after ACCEPTED.")
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
    def _files_exist(self) -> Exercise:
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
        if self.cpu_tier and not self.needs_cuda:
            raise ValueError("cpu_tier: only an exercise with needs_cuda = true grades in tiers")
        for pinned in self.wrong:
            if pinned.tier and (not pinned.check or pinned.check.split("[", 1)[0] not in self.cpu_tier):
                raise ValueError(f"wrong: {pinned.path} is pinned to the cpu tier, so its check must be one of "
                                 "cpu_tier's tests")
        return self

    def path(self, rel: str) -> Path:
        return self.root / rel

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def code(self, rel: str, lang: str) -> str:
        """A code file shown to the learner (starter, reference), its comments in `lang` (judge/parent/comments.py)."""
        from judge.parent.comments import in_language

        return in_language(self.read(rel), lang)

    def test_files(self) -> list[str]:
        """Hidden test files relative to the folder, in a stable order."""
        if self.tests:
            return list(self.tests)
        return sorted(p.relative_to(self.root).as_posix() for p in (self.root / "tests").glob("test_*.py"))

    def statement_text(self, lang: str) -> str:
        return self.read(self.statement if lang == "zh" else self.statement_en)


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
            msg = "unknown field (check the spelling; fields are documented in judge/parent/exercise.py)"
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
