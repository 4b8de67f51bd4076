"""Questions about the learner's own accepted file, answered by compiling it (never from an answer key).

An exercise's [questions] table (judge/parent/exercise.py: QuestionSpec) names the kinds to ask. `make_questions` runs
the playground (judge/parent/playground.py: the same sandboxed runner and trusted verifier as a grading) on the
learner's file, called on seeded example inputs made from the exercise's contract, and on a variant of it, and
writes each question with the answer those runs measured:

- revert: "if your lines N-M went back to the starter's lines, how many graphs would Dynamo capture?" (a number):
  the file with its first changed block put back as the starter has it, compiled; the graphs the verifier rebuilt
  are counted.
- kernels: "how many kernels does Inductor generate for your function?" (a number): Inductor's kernels, compiled in
  the verifier from the graphs it rebuilt (judge.costs.measure).
- node_line: "which of your lines put this node into the graph?" (one of the lines): the graph's source
  annotations (`# File: ...:LINE`), as Dynamo wrote them in the runner.
- resize: "called again with a batch of 1, how many graphs does Dynamo compile in all?" (a number): the file
  compiled on the example call, then on the same inputs with the first one's first dimension 1 (0/1
  specialisation, guards); the graphs the verifier rebuilt over both calls are counted.

The graphs and their annotations come from the runner's process: what it can forge there it could also answer
itself, so a question is a prompt to explain, never part of a verdict. A question whose run did not finish (the
variant does not load, nothing compiled) is left out. `check` compares an answer with the measured one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from pydantic import BaseModel, Field

from judge.parent.exercise import Exercise
from judge.reports.i18n import LANGS, SOURCE_LANG, T

FILENAME = "solution.py"
LINE_CHARS = 80
MAX_CHOICES = 4
ANSWER_CHARS = 32
ANNOTATION = re.compile(r"^\s*# File: (?P<file>[^:]+):(?P<line>\d+) in (?P<function>\w+), code: (?P<code>.*)$")
NODE = re.compile(r"^\s*(?P<name>\w+) = (?P<expr>[^;]+)")


class Choice(BaseModel):
    value: str
    label: dict[str, str] = Field(description="The choice's text per language.")


class Question(BaseModel):
    """One question, with the answer measured for this file (kept on the trusted side until answered)."""

    kind: str
    prompt: dict[str, str] = Field(description="The question per language.")
    choices: list[Choice] = Field([], description="Empty: the answer is a whole number.")
    answer: str
    explanation: dict[str, str] = Field({}, description="What the measurement showed, said after a right answer.")


def texts(message: T) -> dict[str, str]:
    """A message in every language (English where a catalog lacks it)."""
    english = message.render(SOURCE_LANG) or ""
    return {lang: message.render(lang) or english for lang in LANGS}


def normalized(answer: str, question: Question) -> str | None:
    """An answer as compared and stored: a choice's value, or a whole number written plainly; None when it is
    neither (an answer not of the question's form is refused, never counted)."""
    answer = answer.strip()[:ANSWER_CHARS]
    if question.choices:
        return answer if any(c.value == answer for c in question.choices) else None
    return str(int(answer)) if re.fullmatch(r"\+?[0-9]{1,9}", answer) else None


def check(question: Question, answer: str) -> bool:
    return normalized(answer, question) == question.answer


class ExampleInput(BaseModel):
    name: str
    shape: list[int]
    dtype: str
    low: int = 0  # integer inputs: their range, inclusive
    high: int = 1


INTEGER = ("int64", "int32")


def example_inputs(exercise: Exercise, batch_one: bool = False) -> list[ExampleInput]:
    """The entry point's arguments: from the [contract] (each dim at its smallest size from 4 up, the first dtype,
    an integer input's declared range), else from the [cost] table's inputs. `batch_one`: the first input's first
    dimension is 1 (and every input that shares its size)."""
    if exercise.contract is not None:
        contract = exercise.contract
        sizes = {name: max(lo, min(hi, 4)) for name, (lo, hi) in contract.dims.items()}
        first = contract.inputs[0].shape[0]
        if batch_one and isinstance(first, str):
            sizes[first] = 1

        def bound(value, default: int) -> int:
            return sizes[value] if isinstance(value, str) else int(value) if value is not None else default
        inputs = []
        for i, spec in enumerate(contract.inputs):
            shape = [sizes[d] if isinstance(d, str) else d for d in spec.shape]
            if batch_one and i == 0 and not isinstance(first, str):
                shape[0] = 1
            inputs.append(ExampleInput(name=spec.name, shape=shape, dtype=spec.dtype or contract.dtypes[0],
                                       low=bound(spec.low, 0), high=bound(spec.high, 1)))
        return inputs
    if exercise.cost is not None:
        return [ExampleInput(name=i.name, shape=[1, *i.shape[1:]] if batch_one and n == 0 else list(i.shape),
                             dtype=i.dtype or exercise.cost.dtype, low=int(i.low), high=int(i.high))
                for n, i in enumerate(exercise.cost.inputs)]
    raise ValueError(f"{exercise.id}: [questions] needs a [contract] or a [cost] table to make example inputs from")


def _tensor(spec: ExampleInput) -> str:
    shape = tuple(spec.shape)
    if spec.dtype in INTEGER:
        return f"torch.randint({spec.low}, {spec.high + 1}, {shape!r}, generator=g, dtype=torch.{spec.dtype})"
    if spec.dtype == "bool":
        return f"torch.rand({shape!r}, generator=g) > 0.5"
    return f"torch.randn({shape!r}, generator=g, dtype=torch.{spec.dtype})"


def example_calls(exercise: Exercise, batch_one: bool = False) -> str:
    """Python for a playground's `practice_calls`: one call on those inputs drawn with a fixed seed, so that the
    same file always gets the same answers; with `batch_one`, a second call with a batch of 1."""
    calls = [example_inputs(exercise)] + ([example_inputs(exercise, batch_one=True)] if batch_one else [])
    text = ", ".join("(" + "".join(_tensor(spec) + ", " for spec in call) + ")" for call in calls)
    return ("\n\n\ndef practice_calls():  # written by judge/parent/questions.py\n    import torch\n\n"
            "    g = torch.Generator().manual_seed(0)\n    return [" + text + "]\n\n\n"
            f"__practice__ = {{\"function\": {exercise.entry_point!r}, \"calls\": \"practice_calls\", "
            "\"inductor\": True}\n")


def inputs_text(exercise: Exercise) -> str:
    """e.g. 'x: float32[4, 4], w: float32[4, 4]'."""
    return ", ".join(f"{spec.name}: {spec.dtype}[{', '.join(map(str, spec.shape))}]"
                     for spec in example_inputs(exercise))


def _code(line: str) -> str:
    return line.split("#", 1)[0].rstrip()


def first_change(starter: str, source: str) -> tuple[int, int, list[str]] | None:
    """The learner's first block of lines (1-based, first..last) that replaces starter lines, and those starter
    lines; comments and blank lines are not changes."""
    old, new = starter.splitlines(), source.splitlines()
    matcher = difflib.SequenceMatcher(None, [_code(x) for x in old], [_code(x) for x in new], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "replace" and any(_code(x).strip() for x in new[j1:j2]):
            return j1 + 1, j2, old[i1:i2]
    return None


def reverted(source: str, first: int, last: int, starter_lines: list[str]) -> str:
    lines = source.splitlines()
    return "\n".join(lines[:first - 1] + starter_lines + lines[last:]) + "\n"


def graph_nodes(compiler) -> list[tuple[int, str]]:
    """(learner's line, node) for each node the learner's file put into the captured graphs, in order."""
    found, line = [], None
    for graph in compiler.graphs if compiler else []:
        for text in graph.code.splitlines():
            note = ANNOTATION.match(text)
            if note:
                line = int(note["line"]) if note["file"] == FILENAME else None  # the learner's file, any function
                continue
            node = NODE.match(text)
            if node and line is not None and re.search(r"[()\-+*/@<>]", node["expr"]):  # not an input's alias
                found.append((line, f"{node['name']} = {node['expr'].strip()}"))
    return found


def _line_text(source: str, line: int) -> str:
    lines = source.splitlines()
    return _code(lines[line - 1]).strip()[:LINE_CHARS] if 0 < line <= len(lines) else ""


PlaygroundRun = Callable[[str], object]  # source -> judge.parent.playground.PlaygroundReport


def make_questions(exercise: Exercise, source: str, playground: PlaygroundRun) -> list[Question]:
    """The exercise's questions about `source`, each answered by a playground run (`playground(file)`:
    judge.parent.playground.run_playground with the grading's sandbox); [] when the exercise has none."""
    spec = exercise.questions
    if spec is None:
        return []
    calls, inputs = example_calls(exercise), inputs_text(exercise)
    mine = playground(source.rstrip("\n") + calls)
    questions = []
    for kind in spec.kinds:
        made = {"revert": _revert, "kernels": _kernels, "node_line": _node_line, "resize": _resize}[kind](
            exercise, source, mine, playground, calls, inputs)
        if made is not None:
            questions.append(made)
    return questions


def _revert(exercise, source, mine, playground, calls, inputs) -> Question | None:
    change = first_change(exercise.read(exercise.starter), source)
    if change is None:
        return None
    first, last, starter_lines = change
    variant = playground(reverted(source, first, last, starter_lines).rstrip("\n") + calls)
    if not variant.complete or variant.compiler is None:
        return None
    graphs, breaks = len(variant.compiler.graphs), len(variant.breaks)
    lines = f"{first}" if first == last else f"{first}-{last}"
    before = " / ".join(_code(x).strip() for x in starter_lines if _code(x).strip())[:2 * LINE_CHARS]
    return Question(
        kind="revert", answer=str(graphs),
        prompt=texts(T("If your line(s) {lines} went back to the starter's `{before}`, how many graphs would Dynamo "
                       "capture when `{function}` is called on {inputs}?", lines=lines, before=before,
                       function=exercise.entry_point, inputs=inputs)),
        explanation=texts(T("Compiled that way, Dynamo captured {graphs} graph(s) with {breaks} graph break(s).",
                            graphs=graphs, breaks=breaks)))


def _kernels(exercise, source, mine, playground, calls, inputs) -> Question | None:
    figures = next((f for f in (mine.cost or {}).get("figures", []) if f.get("who") == "learner"), None)
    compiled = (figures or {}).get("compiled") or None
    if not mine.complete or compiled is None:
        return None
    kernels = compiled.get("kernels", [])
    return Question(
        kind="kernels", answer=str(len(kernels)),
        prompt=texts(T("How many kernels does Inductor generate for your `{function}` on {inputs}? (A matmul "
                       "handed to a library is not a generated kernel.)", function=exercise.entry_point,
                       inputs=inputs)),
        explanation=texts(T("Inductor generated: {kernels}.", kernels=", ".join(kernels) or "-")))


def _node_line(exercise, source, mine, playground, calls, inputs) -> Question | None:
    nodes = graph_nodes(mine.compiler) if mine.complete else []
    if not nodes:
        return None
    focus = exercise.questions.focus
    pick = next((n for name in focus for n in nodes if re.search(rf"\b{re.escape(name)}\b", n[1])), nodes[-1])
    line, node = pick
    lines = sorted({n[0] for n in nodes} | {line})
    others = sorted((x for x in lines if x != line), key=lambda x: abs(x - line))[:MAX_CHOICES - 1]
    choices = [Choice(value=str(x), label=texts(T("line {line}: {code}", line=x, code=_line_text(source, x))))
               for x in sorted([line, *others])]
    if len(choices) < 2:
        return None
    return Question(
        kind="node_line", answer=str(line), choices=choices,
        prompt=texts(T("Which of your lines put the node `{node}` into the graph Dynamo captured?", node=node)),
        explanation=texts(T("Dynamo wrote line {line} above that node in the graph.", line=line)))


def _resize(exercise, source, mine, playground, calls, inputs) -> Question | None:
    report = playground(source.rstrip("\n") + example_calls(exercise, batch_one=True))
    if not report.complete or report.compiler is None or report.calls != 2:
        return None
    graphs = len(report.compiler.graphs)
    guards = "; ".join(dict.fromkeys(o.guard for o in report.recompiles)) or "-"
    first = example_inputs(exercise)[0].name
    return Question(
        kind="resize", answer=str(graphs),
        prompt=texts(T("`{function}` is called on {inputs}, then once more with `{first}` of size 1 in its first "
                       "dimension. How many graphs does Dynamo compile over both calls?",
                       function=exercise.entry_point, inputs=inputs, first=first)),
        explanation=texts(T("Dynamo compiled {graphs} graph(s) over the two calls; the guards that failed: {guards}.",
                            graphs=graphs, guards=guards)))
