"""Prove an exercise: the reference passes, the starter fails as pinned, each wrong solution fails as pinned,
and every proof's report reads entirely in Chinese and entirely in English."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from judge.parent.exercise import Exercise
from judge.parent.grading import grade
from judge.reports.i18n import OTHER_LANGS, SOURCE_LANG
from judge.reports.report import GraphBreakDiagnostic, Localized, Report, Verdict, localized
from judge.shared.tiers import CPU, grade_tiers, has_cpu_tier

CODE_SPAN = re.compile(r"`[^`]*`")
CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")
WORD = re.compile(r"^[A-Za-z][a-z]*(?:'[a-z]+)?[,.;:!?]?$")
ENGLISH_RUN = 4  # this many plain words in a row read as an English sentence (terms like "graph break" do not)


@dataclass
class Proof:
    """One solution graded against its expectation."""

    kind: str  # "reference", "solution", "starter" or "wrong"
    path: str
    expected: Verdict
    expected_check: str | None
    report: Report
    expected_break: str | None = None
    break_pin_required: bool = True  # False where no id was proven yet (a GPU exercise proven on a CPU machine)

    @property
    def break_ids(self) -> list[str]:
        """The graph-break registry ids the first failing check reports (judge/compiler/break_registry.py)."""
        failure = self.report.first_failure()
        return [d.gb_id for d in (failure.diagnostics if failure else [])
                if isinstance(d, GraphBreakDiagnostic) and d.gb_id]

    def break_problem(self) -> str:
        """Why the failing check's graph-break id is not the pinned one ('' when it is, or nothing is pinned)."""
        if self.report.verdict is not Verdict.GRAPH_BREAK:
            return ""
        found = self.break_ids
        if self.expected_break is None:
            if found and self.break_pin_required:
                return f"{self.path}: reports {found[0]}; pin it with break_id = \"{found[0]}\""
            return ""
        if self.expected_break not in found:
            return (f"{self.path}: expected graph-break id {self.expected_break}, the report names "
                    f"{', '.join(found) or 'none'} (torch classifies this break otherwise now)")
        return ""

    @property
    def failing_check(self) -> str | None:
        failure = self.report.first_failure()
        return failure.name if failure else None

    @property
    def verdict_ok(self) -> bool:
        """The verdict (and failing check) it is pinned to."""
        if self.report.verdict is not self.expected:
            return False
        if self.break_problem():
            return False
        return self.expected_check is None or self.failing_check == self.expected_check

    @property
    def ok(self) -> bool:
        """The pinned verdict, and a report a learner reads entirely in either language."""
        return self.verdict_ok and not self.language_problems()

    def language_problems(self) -> list[str]:
        """Learner-visible text of this proof's report that lacks a language or reads in the wrong one."""
        return language_problems(self.report)

    def problem(self) -> str:
        """Why the proof failed, in one line ('' when it holds)."""
        if self.ok:
            return ""
        if self.verdict_ok:
            problems = self.language_problems()
            return f"{self.path}: {len(problems)} text(s) in the wrong language: " + "; ".join(problems[:3])
        if self.report.verdict is self.expected and self.break_problem():
            return self.break_problem()
        got = f"{self.report.verdict.value}" + (f" at {self.failing_check}" if self.failing_check else "")
        want = f"{self.expected.value}" + (f" at {self.expected_check}" if self.expected_check else "")
        return f"{self.path}: expected {want}, got {got}: {self.report.summary[:300]}"


def learner_texts(model: Localized, where: str = "report"):
    """(where, text) of every text field a learner reads, here and in nested models."""
    for name in model.TEXT_FIELDS:
        if getattr(model, name):
            yield f"{where}.{name}", str(getattr(model, name))
    for name, value in model:
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            if isinstance(item, Localized):
                label = getattr(item, "name", None) or (f"{name}[{i}]" if isinstance(value, list) else name)
                yield from learner_texts(item, f"{where}.{label}")


def reads_as_english(text: str) -> bool:
    """A run of plain English words outside `code` spans (a sentence, not a term or an identifier)."""
    run = 0
    for token in CODE_SPAN.sub(" ", text).split():
        run = run + 1 if WORD.match(token) else 0
        if run >= ENGLISH_RUN:
            return True
    return False


def language_problems(report: Report) -> list[str]:
    """Text a learner would read in the wrong language: a field without its Chinese, English left in the
    Chinese report, Chinese in the English one (code spans, which may quote the learner's line, aside)."""
    problems = []
    for lang in OTHER_LANGS:
        problems += [f"no {lang} text for {field}" for field in report.missing_texts(lang)]
        for where, text in learner_texts(localized(report, lang)):
            if lang == "zh" and reads_as_english(text):
                problems.append(f"English in the Chinese {where}: {text[:160]!r}")
    for where, text in learner_texts(localized(report, SOURCE_LANG)):
        if CJK.search(CODE_SPAN.sub(" ", text)):
            problems.append(f"Chinese in the English {where}: {text[:160]!r}")
    return problems


def cases(exercise: Exercise) -> list[tuple[str, str, Verdict, str | None]]:
    """(kind, path, expected verdict, expected failing check) for everything an exercise pins."""
    found = [("reference", exercise.reference, Verdict.ACCEPTED, None)]
    found += [("solution", path, Verdict.ACCEPTED, None) for path in exercise.solutions]
    found.append(("starter", exercise.starter, exercise.starter_verdict, None))
    found += [("wrong", w.path, w.verdict, w.check) for w in exercise.wrong]
    return found


def expected_break(exercise: Exercise, path: str) -> str | None:
    """The graph-break registry id pinned for `path` (the starter's or a wrong solution's), if any."""
    if path == exercise.starter:
        return exercise.starter_break_id
    return next((w.break_id for w in exercise.wrong if w.path == path), None)



def seed_for(exercise: Exercise, path: str) -> int:
    """The draw of a proof of `path` (judge/shared/draw.py's PROOF_SECRET): the same on every machine."""
    from judge.parent.fingerprint import exercise_content
    from judge.shared.draw import proof_seed

    return proof_seed(exercise_content(exercise), exercise.read(path))


def proven_here(exercise: Exercise, kind: str, path: str, gpu_here: bool) -> bool:
    """Whether this machine proves `path`: everything where a GPU grades (or the exercise needs none); without one,
    what the CPU tier decides: the correct solutions pass it, the wrong ones pinned with tier = "cpu" fail it."""
    if gpu_here or not exercise.needs_cuda:
        return True
    if not has_cpu_tier(exercise):
        return False
    return kind in ("reference", "solution") or any(w.path == path and w.tier == CPU for w in exercise.wrong)


def graded(exercise: Exercise, kind: str, path: str, *, sandbox=None, cpu_sandbox=None, gpu_here: bool = True):
    """The report a proof of `path` judges, graded as a learner's file is: tier by tier (judge/shared/tiers.py), the CPU
    tier on `cpu_sandbox` (default `sandbox`), the full grading on `sandbox` where a GPU grades here."""
    name, source, seed = path.rsplit("/", 1)[-1], exercise.read(path), seed_for(exercise, path)
    # A failing proof needs only its first failing check (the verdict and the pinned check are that one's).
    stop = kind in ("starter", "wrong")

    def full(text: str) -> Report:
        return grade(exercise, text, sandbox=sandbox, filename=name, stop_after_first_failure=stop, seed=seed)

    def cpu(text: str) -> Report:
        return grade(exercise, text, sandbox=cpu_sandbox or sandbox, filename=name, seed=seed, tier=CPU)

    if not has_cpu_tier(exercise):
        return full(source)
    return grade_tiers(exercise, source, grade_cpu_tier=cpu, grade_full=full if gpu_here else None)[0]


def prove(exercise: Exercise, *, sandbox=None, cpu_sandbox=None, gpu_here: bool = True,
          on_proof: Callable[[Proof], None] | None = None) -> list[Proof]:
    """Grade every pinned solution of `exercise` this machine proves (`proven_here`); each Proof says whether it got
    what it was pinned to."""
    proofs = []
    for kind, path, expected, check in cases(exercise):
        if not proven_here(exercise, kind, path, gpu_here):
            continue
        report = graded(exercise, kind, path, sandbox=sandbox, cpu_sandbox=cpu_sandbox, gpu_here=gpu_here)
        proof = Proof(kind, path, expected, check, report, expected_break(exercise, path), not exercise.needs_cuda)
        proofs.append(proof)
        if on_proof:
            on_proof(proof)
    return proofs
