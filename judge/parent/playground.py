"""The playground: what torch.compile does with *your* function on *your* inputs, with no exercise and no verdict.

The user's file declares what to compile and on what, in a `__practice__` block (read here without running
the file: it must be a literal):

    import torch

    def step(x, n):
        for i in range(n):
            x = x * 2 if x.sum() > 0 else x
        return x

    def example_calls():                  # returns the calls: a list of argument tuples, in order
        return [(torch.randn(8), 2), (torch.randn(8), 3)]

    __practice__ = {
        "function": "step",               # what to compile: a function (or an nn.Module instance) of this file
        "calls": "example_calls",         # a function of this file that returns the example calls
        "dynamic": None,                  # optional: torch.compile's `dynamic=` (None, True or False)
        "inductor": True,                 # optional: show the code Inductor generates for each graph
    }

`practice playground FILE --call "step(torch.randn(8), 2)"` writes that block for a file that has none
(`with_calls`). `run_playground()` runs the same two sandboxed processes as a grading
(`judge.parent.grading.run_jobs`) with the same limits: the runner imports the file and answers requests; the
verifier runs one generated check (`judge.verifier_side.playground.run`) instead of hidden tests. The
`PlaygroundReport` shows the graph breaks (lines, PyTorch's registry ids and words), each recompile with the guard
that failed and the line that added it, and the compiler's view (graphs, guards, the compiles' timeline, Inductor's
code). Nothing in it is a verdict.
"""

from __future__ import annotations

import ast
import json
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import ClassVar, Literal

from pydantic import Field, ValidationError

from judge.parent.job import source_too_large
from judge.parent.outcome import build_report
from judge.reports.i18n import T
from judge.reports.report import (
    CompilerView,
    CostSection,
    ErrorDiagnostic,
    GraphBreakDiagnostic,
    GuardOrigin,
    Localized,
    Report,
    StageFinding,
    Verdict,
)
from judge.shared.installed import torch_version
from judge.shared.jobs import RunnerJob, VerifierJob
from sandbox.base import SandboxError
from sandbox.limits import Limits

PLAYGROUND_ID = "_playground"  # not an exercise id (those have no "_"): what the web stores a run under
DOCTOR_SCHEMA_VERSION = 1
LIMITS = Limits()  # the limits of a grading of an exercise that declares none
# stage findings shown (one per graph Inductor compiled: judge.verifier_side.playground.MAX_INDUCTOR_GRAPHS)
MAX_STAGES = 4
FORM_KEYS = {"function", "calls", "dynamic", "inductor"}
CHECK = '''"""The playground's one check (judge/verifier_side/playground.py); written by judge/parent/playground.py."""
import json

from judge.verifier_side import playground as doctor_checks

CONFIG = json.loads({config!r})


def test_what_torch_compile_does():
    """What torch.compile does with your function on your inputs
    zh: torch.compile 对你的函数和输入做了什么
    """
    doctor_checks.run(CONFIG)
'''


class FormError(ValueError):
    """The file's `__practice__` block (or a --call expression) is not of the declared form; `message` (a T, in
    every language) says what to write."""

    def __init__(self, message: T):
        super().__init__(str(message))
        self.message = message


class PlaygroundReport(Localized):
    """What a playground run found. Shown by `practice playground` and the web playground; it holds no verdict."""

    TEXT_FIELDS: ClassVar[tuple[str, ...]] = ("summary",)
    schema_version: int = DOCTOR_SCHEMA_VERSION
    kind: Literal["doctor"] = "doctor"
    function: str = ""
    calls: int = Field(0, description="How many example calls were compiled and run.")
    summary: str = Field(description="One sentence: what was found.")
    complete: bool = Field(False, description="Whether every example call ran to the end: only then does an empty "
                                              "`breaks` or `recompiles` mean there was none (a run that stopped "
                                              "early lists what it found before it stopped).")
    breaks: list[GraphBreakDiagnostic] = Field([], description="Every graph break, with the line and the id.")
    recompiles: list[GuardOrigin] = Field([], description="Each recompile's failing guard and the line behind it.")
    problem: ErrorDiagnostic | None = Field(None, description="Why the run stopped early (a load error, an error "
                                                              "in the code, a limit), if it did.")
    compiler: CompilerView | None = None
    notes: list[str] = []
    stages: list[StageFinding] = Field([], description="Where Inductor's result of a graph differs from the same graph "
                                                       "run op by op: the compiler stage that first changes it "
                                                       "(judge/verifier_side/stages.py), one per such graph.")
    cost: dict | None = Field(None, description="The first example call's cost section "
                                                "(judge.reports.report.CostSection: "
                                                "eager ops and bytes against Inductor's kernels and estimate, measured "
                                                "by the verifier), where Inductor compiled its graphs.")
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    torch_version: str = ""
    sandbox: str = ""


def has_form(source: str) -> bool:
    """Whether `source` assigns a `__practice__` block at its top level (of any form)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__practice__"
                                                    for t in node.targets) for node in tree.body)


def read_form(source: str) -> dict:
    """The `__practice__` block of `source`, checked; FormError says what to fix."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise FormError(T("line {line}: syntax error: {error}", line=exc.lineno, error=exc.msg)) from None
    found = [node for node in tree.body if isinstance(node, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == "__practice__" for t in node.targets)]
    if not found:
        raise FormError(T("the file has no `__practice__` block: add one at its end, e.g. `__practice__ = "
                          "{{\"function\": \"NAME\", \"calls\": \"FUNCTION_RETURNING_CALLS\"}}`"))
    line = found[-1].lineno
    try:
        form = ast.literal_eval(found[-1].value)
    except ValueError:
        raise FormError(T("line {line}: `__practice__` must be a literal dict (strings, None, True/False), not "
                          "computed", line=line)) from None
    if not isinstance(form, dict) or not {"function", "calls"} <= set(form):
        raise FormError(T("line {line}: `__practice__` needs \"function\" and \"calls\" (names of this file)",
                          line=line))
    unknown = set(form) - FORM_KEYS
    if unknown:
        raise FormError(T("`__practice__`: unknown key {key}; known: {known}", key=repr(sorted(unknown)[0]),
                          known=", ".join(sorted(FORM_KEYS))))
    for key in ("function", "calls"):
        if not isinstance(form[key], str) or not form[key].isidentifier() or form[key].startswith("_"):
            raise FormError(T("`__practice__[{key}]` must name a function of this file (not starting with _)",
                              key=repr(key)))
    if form.get("dynamic") not in (None, True, False):
        raise FormError(T("`__practice__['dynamic']` must be None, True or False"))
    if not isinstance(form.get("inductor", True), bool):
        raise FormError(T("`__practice__['inductor']` must be True or False"))
    return {"function": form["function"], "calls": form["calls"], "dynamic": form.get("dynamic"),
            "inductor": form.get("inductor", True)}


def with_calls(source: str, calls: list[str], *, inductor: bool = True) -> str:
    """`source` with a `__practice__` block for the calls `NAME(arg, ...)` (`practice playground --call`)."""
    names, tuples = set(), []
    for text in calls:
        try:
            node = ast.parse(text, mode="eval").body
        except SyntaxError as exc:
            raise FormError(T("--call {call}: not a Python expression ({error})", call=repr(text), error=exc.msg)) \
                from None
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise FormError(T("--call {call}: write a call of a function of the file, e.g. "
                              "`step(torch.randn(8), 2)`", call=repr(text)))
        if node.keywords:
            raise FormError(T("--call {call}: pass the arguments by position (keywords are not supported)",
                              call=repr(text)))
        names.add(node.func.id)
        tuples.append("(" + "".join(ast.unparse(a) + ", " for a in node.args) + ")")
    if len(names) != 1:
        raise FormError(T("--call: every call must call the same function"))
    name = names.pop()
    return (source.rstrip("\n") + "\n\n\ndef practice_calls():  # written by `practice playground --call`\n"
            "    import torch  # noqa: F401\n\n    return [" + ", ".join(tuples) + "]\n\n\n"
            f"__practice__ = {{\"function\": {name!r}, \"calls\": \"practice_calls\", \"inductor\": {inductor}}}\n")


def make_jobs(source: str, form: dict, filename: str, limits: Limits = LIMITS) -> tuple[RunnerJob, VerifierJob]:
    """The playground's two jobs: the user's file for the runner, one generated check for the verifier."""
    runner = RunnerJob(entry_point=form["function"], source=source, filename=filename)
    check = CHECK.format(config=json.dumps(form))
    verifier = VerifierJob(exercise_id=PLAYGROUND_ID, entry_point=form["function"], filename=filename,
                           files={"tests/test_playground.py": check, "starter.py": "", "solutions/reference.py": ""},
                           tests=["tests/test_playground.py"], runner_seconds=limits.wall_limit)
    return runner, verifier


def run_playground(source: str, *, sandbox=None, filename: str = "playground.py", limits: Limits = LIMITS,
           on_event: Callable | None = None) -> PlaygroundReport:
    """Compile the file's function on its example calls in `sandbox` (a grading's sandbox, limits and isolation)
    and describe what Dynamo did. A file not of the form gets a report that says what to write."""
    from judge.parent.grading import make_sandbox, run_jobs

    started = time.monotonic()
    too_large = source_too_large(source)
    if too_large is not None:
        return _stopped(too_large)
    try:
        form = read_form(source)
    except FormError as exc:
        return _stopped(T("The file is not of the playground's form: {error}", error=exc.message))
    sandbox = sandbox or make_sandbox("none")
    runner_job, verifier_job = make_jobs(source, form, filename, limits)
    emit = on_event or (lambda event: None)
    try:
        try:
            runner, (job, verifier) = run_jobs(runner_job, verifier_job, limits, sandbox, emit)
        except SandboxError:  # before any code ran (a stale warm worker): safe to run once more
            runner, (job, verifier) = run_jobs(runner_job, verifier_job, limits, sandbox, emit)
    except SandboxError as exc:
        return _stopped(T("Internal error: the sandbox failed before your code ran; please run it again."),
                        ErrorDiagnostic(exc_type="SandboxError", message=str(exc)[:2000]))
    graded = build_report(SimpleNamespace(trust="verified", limits=limits), job, verifier, runner, sandbox.describe())
    report = _from_findings(form, graded, _findings(job.nonce, verifier.messages))
    report.duration_s = round(time.monotonic() - started, 3)
    report.torch_version, report.sandbox = torch_version(), sandbox.describe()
    return report


def _findings(nonce: str, messages: list[dict]) -> dict:
    found = next((m.get("findings") for m in messages if m.get("nonce") == nonce and m.get("type") == "doctor"), None)
    return found if isinstance(found, dict) else {}


def _from_findings(form: dict, graded: Report, findings: dict) -> PlaygroundReport:
    """The playground's report from the run's Report (its limits and load errors) and the verifier's findings."""
    def valid(model, items):
        out = []
        for item in items[:50] if isinstance(items, list) else []:
            try:
                out.append(model.model_validate(item))
            except ValidationError:
                pass
        return out

    report = PlaygroundReport(function=form["function"], summary="", compiler=graded.compiler,
                          breaks=valid(GraphBreakDiagnostic, findings.get("breaks")),
                          recompiles=once(valid(GuardOrigin, findings.get("origins"))),
                          calls=findings.get("calls") if isinstance(findings.get("calls"), int) else 0,
                          notes=[str(n)[:300] for n in findings.get("notes", [])[:10]]
                          if isinstance(findings.get("notes"), list) else [],
                          stages=valid(StageFinding, findings.get("stages"))[:MAX_STAGES],
                          stdout=graded.stdout, stderr=graded.stderr)
    try:  # the verifier's figures of the first call's graphs (judge.verifier_side.playground), checked for form
        cost = CostSection.model_validate(findings["cost"]) if isinstance(findings.get("cost"), dict) else None
    except ValidationError:
        cost = None
    if cost is not None:
        report.cost = cost.model_dump(mode="json")
    error = findings.get("error")
    if graded.verdict is not Verdict.ACCEPTED:  # the run itself stopped: a load error, a limit, a crash
        report.problem = graded.diagnostics[0] if graded.diagnostics else ErrorDiagnostic(
            exc_type=graded.verdict.value, message=graded.text("summary"))
        report.set_text("summary", graded.text("summary"))
        return report
    if isinstance(error, dict):
        zh = error.get("message_zh")
        message = T("{en}", zh="{said}", en=str(error.get("message", ""))[:2000], said=str(zh)[:2000]) \
            if isinstance(zh, str) and zh else str(error.get("message", ""))[:2000]
        try:
            diag = ErrorDiagnostic.model_validate(error.get("diagnostic")) if error.get("diagnostic") else None
        except ValidationError:
            diag = None
        report.problem = diag or ErrorDiagnostic(exc_type="Error", message=message)
        report.set_text("summary", T("Your code stopped the run: {message}", message=message))
        return report
    compiles = len(report.compiler.graphs) if report.compiler else 0
    report.set_text("summary", T("{calls} call(s) compiled into {graphs} graph(s): {breaks} graph break(s), "
                                 "{recompiles} recompile(s).", calls=report.calls, graphs=compiles,
                                 breaks=len(report.breaks), recompiles=recompiled_calls(report)))
    report.complete = True
    return report


def once(origins: list[GuardOrigin]) -> list[GuardOrigin]:
    """Each failing guard once, with how many times it failed from its line (`count`): later calls report the
    guards of every cached compile again, which are the same findings. The same guard failing at another line is
    the same finding in a piece after a graph break (a frame of its own that checks it again): its line goes to
    `also`, not to the count."""
    found: dict[str, GuardOrigin] = {}
    for origin in origins:
        first = found.get(origin.guard)
        if first is None:
            found[origin.guard] = origin.model_copy(update={"also": []})
        elif _line(first.location) == _line(origin.location):
            first.count += origin.count
        elif origin.location is not None and all(_line(seen) != _line(origin.location) for seen in first.also):
            first.also.append(origin.location)
    return list(found.values())


def _line(location) -> tuple | None:
    return (location.file, location.line) if location is not None else None


def recompiled_calls(report: PlaygroundReport) -> int:
    """How many calls compiled again: one call recompiles every piece after its graph breaks, each a frame with its
    own failing guard, and is still one recompile. Without the call-by-call record, the distinct guards."""
    timeline = report.compiler.timeline if report.compiler else []
    if timeline:
        return sum(1 for event in timeline if event.guard)
    return len(report.recompiles)


def _stopped(message: T, diagnostic: ErrorDiagnostic | None = None) -> PlaygroundReport:
    report = PlaygroundReport(summary=message, problem=diagnostic or ErrorDiagnostic(exc_type="FormError",
                                                                                message=message))
    report.torch_version = torch_version()
    return report


__all__ = ["PlaygroundReport", "FormError", "PLAYGROUND_ID", "has_form", "read_form", "run_playground", "with_calls"]
