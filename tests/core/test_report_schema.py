"""The report schema: versioned, round-trips through JSON, diagnostics keep their kind."""

import json
from pathlib import Path

from judge.reports.report import (
    REPORT_SCHEMA_VERSION,
    CheckResult,
    GraphBreakDiagnostic,
    Mismatch,
    MismatchDiagnostic,
    Report,
    SourceLocation,
    Verdict,
)

SCHEMA_FILE = Path(__file__).parent.parent.parent / "docs" / "report-schema.json"


def sample() -> Report:
    loc = SourceLocation(file="solution.py", line=6, text="if h.sum().item() > 0:")
    return Report(exercise_id="graph-break-step", verdict=Verdict.GRAPH_BREAK, summary="graph break at line 6",
                  checks=[
                      CheckResult(name="test_one_graph", passed=False, verdict=Verdict.GRAPH_BREAK, message="m",
                                  diagnostics=[GraphBreakDiagnostic(reason="item", location=loc, user_stack=[loc])]),
                      CheckResult(name="test_values", passed=False, verdict=Verdict.WRONG_ANSWER, message="m",
                                  diagnostics=[MismatchDiagnostic(case="x [2] float32", max_abs_error=1.0,
                                                                  first_mismatches=[Mismatch(index=[0], expected=1.0,
                                                                                             actual=2.0)])]),
                  ])


def test_round_trip_keeps_diagnostic_kinds():
    report = sample()
    again = Report.model_validate_json(report.model_dump_json())
    assert again == report
    assert isinstance(again.checks[0].diagnostics[0], GraphBreakDiagnostic)
    assert isinstance(again.checks[1].diagnostics[0], MismatchDiagnostic)
    assert again.schema_version == REPORT_SCHEMA_VERSION == 2
    assert again.first_failure().name == "test_one_graph"
    assert not again.accepted


def test_published_schema_is_current():
    """docs/report-schema.json is what the code generates (regenerate it when the report changes)."""
    assert json.loads(SCHEMA_FILE.read_text()) == Report.model_json_schema()


def test_every_verdict_is_in_the_schema():
    schema = Report.model_json_schema()
    assert set(schema["$defs"]["Verdict"]["enum"]) == {v.value for v in Verdict}
    assert {"ACCEPTED", "WRONG_ANSWER", "GRAPH_BREAK", "RECOMPILE", "COMPILE_ERROR", "RUNTIME_ERROR", "LOAD_ERROR",
            "TIME_LIMIT", "MEMORY_LIMIT", "OUTPUT_LIMIT", "INTERNAL_ERROR"} <= {v.value for v in Verdict}
