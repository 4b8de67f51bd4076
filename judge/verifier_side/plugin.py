"""The pytest plugin object that turns each hidden test into a CheckResult and sends it on.

Modelled on a test runner that records every test through a plugin: pytest runs the hidden tests,
this object classifies each failure into a verdict with diagnostics written for a learner.
"""

from __future__ import annotations

import io
import traceback
from collections.abc import Callable

import pytest

from judge.checks.failures import CheckFailure
from judge.checks.trust import reason_of
from judge.compiler.breaks import explain_learner_error, graph_break_from_exception, graph_break_message
from judge.compiler.locations import learner_location_from_traceback
from judge.reports.i18n import T, in_code
from judge.reports.report import CheckResult, ErrorDiagnostic, Verdict
from judge.shared import phases
from judge.shared.learner_errors import kind_of
from judge.shared.protocol import ErrorKind, RunnerEnd

MAX_TRACEBACK = 4000
MAX_PROPERTIES = 10


def classify(exc: BaseException, tb) -> tuple[Verdict, T | str, list]:
    """(verdict, learner message, diagnostics) for an exception raised by a hidden test."""
    if isinstance(exc, CheckFailure):
        return exc.verdict, exc.message, exc.diagnostics
    if isinstance(exc, ImportError):  # the verifier runs no learner code: its own environment is incomplete
        return Verdict.INTERNAL_ERROR, missing_module_message(exc), [_error_diagnostic(exc, tb)]
    if isinstance(exc, AssertionError):
        first = _first_lines(str(exc))
        return Verdict.WRONG_ANSWER, T("a check failed: `{detail}`", detail=in_code(first)) if first else \
            T("a check failed"), []
    kind = kind_of(exc)  # the runner's classifier: a test's own compile fails as the runner's would
    if kind is ErrorKind.GRAPH_BREAK:
        diag = graph_break_from_exception(exc)  # a hidden test's own compile of the code it was given
        return Verdict.GRAPH_BREAK, graph_break_message(diag, T.same("`torch.compile`")), [diag]
    error = _error_diagnostic(exc, tb)
    if kind is ErrorKind.MEMORY:
        return Verdict.MEMORY_LIMIT, T("your code ran out of memory"), [error]
    if kind is ErrorKind.COMPILE_ERROR:
        explanation = explain_learner_error(error.message)
        if explanation is not None:
            return Verdict.COMPILE_ERROR, T("torch.compile failed: {explanation}", explanation=explanation), [error]
        return Verdict.COMPILE_ERROR, T("torch.compile failed: `{error}: {detail}`", error=error.exc_type,
                                        detail=in_code(_first_lines(error.message))), [error]
    if error.location:
        return Verdict.RUNTIME_ERROR, T("`{error}` at line {line} (`{code}`): `{detail}`", error=error.exc_type,
                                        line=error.location.line, code=in_code(error.location.text),
                                        detail=in_code(_first_lines(error.message))), [error]
    return Verdict.RUNTIME_ERROR, T("`{error}: {detail}`", error=error.exc_type,
                                    detail=in_code(_first_lines(error.message))), [error]


def explained(diagnostics: list) -> list:
    """A failure's diagnostics with PyTorch's words for each graph break and the origin of each failed guard."""
    from judge import remote
    from judge.compiler import break_registry, guard_origin

    return guard_origin.enrich(break_registry.enrich(list(diagnostics)), remote.current().view)


def with_stage(exc: BaseException | None, diagnostics: list) -> None:
    """A mismatch of a compiled graph's result: the compiler stage that first changes it (your code or the compiler?),
    set on its MismatchDiagnostic. Only a failed comparison asks: a passing grading runs none of it."""
    from judge.remote.stages import explain
    from judge.reports.report import MismatchDiagnostic

    mismatch = next((d for d in diagnostics if isinstance(d, MismatchDiagnostic)), None)
    if mismatch is None or getattr(exc, "compared", None) is None:
        return
    mismatch.stage = explain(exc)


def with_guard_origin(message, diagnostics: list):
    """A RECOMPILE's message, followed by the learner's line that added its failing guard where that is known."""
    from judge.reports.report import RecompileDiagnostic

    origin = next((d.origin for d in diagnostics if isinstance(d, RecompileDiagnostic) and d.origin), None)
    if origin is None or origin.location is None:
        return message
    return T.join([message, T("The guard that failed was added at line {line} (`{code}`): {explanation}",
                              line=origin.location.line, code=in_code(origin.location.text, 200),
                              explanation=origin.text("explanation"))])


def missing_module_message(exc: ImportError) -> T:
    """The judge's words for a module of its own (or a dependency) that its process cannot import."""
    return T("the judge is broken here, not your code: the verifier cannot import `{module}` (`{detail}`); the "
             "judge's environment lacks one of its declared dependencies", module=in_code(exc.name or "?"),
             detail=in_code(_first_lines(str(exc))))


def _error_diagnostic(exc: BaseException, tb) -> ErrorDiagnostic:
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    if len(text) > MAX_TRACEBACK:
        text = "...\n" + text[-MAX_TRACEBACK:]
    return ErrorDiagnostic(exc_type=type(exc).__name__, message=str(exc)[:2000],
                           location=learner_location_from_traceback(tb), traceback=text)


def _first_lines(text: str, n: int = 4) -> str:
    return "\n".join(text.strip().splitlines()[:n])[:800]


def title_of(function) -> T | str:
    """A hidden test's title from its docstring: its first paragraph in English (up to a blank line or the
    `zh:` line, its lines joined: a title wrapped over two lines is one title), the `zh: ...` paragraph in
    Chinese."""
    lines = [line.strip() for line in (getattr(function, "__doc__", None) or "").strip().splitlines()]
    if not lines or not lines[0]:
        return ""

    def paragraph(start: int) -> str:
        taken = []
        for line in lines[start:]:
            if not line or (taken and line.startswith("zh:")):
                break
            taken.append(line)
        return " ".join(taken)

    en = paragraph(0)
    at = next((i for i, line in enumerate(lines) if i and line.startswith("zh:")), None)
    zh = paragraph(at)[3:].strip() if at is not None else None
    return T(en, zh=zh) if zh else en


class SilentTerminal:
    """Keeps pytest's terminal reporter registered but writing nowhere.

    Assertion rewriting explains a failed comparison through the reporter's writer: pytest 9.0 raises an
    empty AssertionError in its place when the reporter is missing (`-p no:terminal`), and pytest 8 cannot
    even parse its own options, so a hidden test's `assert x == y, "message"` would lose its message. The
    verifier prints nothing, so the reporter it keeps writes to a buffer nobody reads.
    """

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config):
        from _pytest.terminal import TerminalReporter

        manager = config.pluginmanager
        loud = manager.get_plugin("terminalreporter")
        if loud is not None:
            manager.unregister(loud)
        manager.register(TerminalReporter(config, io.StringIO()), "terminalreporter")


class Collector:
    """Records one CheckResult per test and hands it to `send` as soon as the test ends.

    `after_collection(items)` runs once the tests are collected (the harness loads the learner's
    module there); `after_test()` returns a list of problems (tampering) that fail the test.
    """

    def __init__(self, send: Callable[[CheckResult, RunnerEnd | None], None], after_collection, after_test):
        self.send = send
        self.after_collection = after_collection
        self.after_test = after_test
        self.results: dict[str, CheckResult] = {}
        self.runner_ends: dict[str, RunnerEnd] = {}  # a failure the runner's end caused: why it ended

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        with phases.span(f"check {item.name}"):
            yield

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        if not self.after_collection([item.name for item in items]):
            items[:] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        title = title_of(getattr(item, "function", None))
        result = self.results.setdefault(item.nodeid, CheckResult(name=item.name, title=title, passed=True))
        reason = reason_of(getattr(item, "function", None))
        if reason is not None and not result.learner_process:
            result.set_text("learner_process", reason)
        result.duration_s += call.duration
        for key, value in list(getattr(item, "user_properties", []))[:MAX_PROPERTIES]:
            if isinstance(value, (int, float, str)) and not isinstance(value, bool):
                result.properties[str(key)[:40]] = value if not isinstance(value, str) else value[:200]
        if report.skipped and call.when in ("setup", "call"):
            result.passed, result.verdict = False, Verdict.INTERNAL_ERROR
            result.set_text("message", T("this check was skipped, so it proves nothing"))
        elif report.failed and result.passed:
            exc = call.excinfo.value if call.excinfo else None
            verdict, message, diagnostics = classify(exc, call.excinfo.tb) if exc else (
                Verdict.INTERNAL_ERROR, T("the check failed without an exception"), [])
            if call.when == "teardown" and verdict is Verdict.WRONG_ANSWER:
                verdict = Verdict.RUNTIME_ERROR
            if verdict is Verdict.WRONG_ANSWER:
                with_stage(exc, diagnostics)
            result.passed, result.verdict, result.diagnostics = False, verdict, explained(diagnostics)
            result.set_text("message", with_guard_origin(message, result.diagnostics))
            if isinstance(exc, CheckFailure) and exc.runner_end is not None:
                self.runner_ends[item.nodeid] = exc.runner_end

    def pytest_runtest_logfinish(self, nodeid, location):
        result = self.results.get(nodeid)
        if result is None:
            return
        problems = self.after_test()
        if problems and result.passed:
            result.passed, result.verdict = False, Verdict.FORBIDDEN
            result.set_text("message", T("your code changed global state (compiler settings, grad mode, default "
                                         "dtype, ...) or replaced a function: {changes}",
                                         changes=T.join(problems, "; ")))
        self.send(result, self.runner_ends.get(nodeid))
