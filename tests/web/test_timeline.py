"""A learner's timeline: each attempt's measured facts, the diff from the attempt before, the learner's note; the
learner's own on the exercise page and the API, a member's on the class's learner page, every attempt in the class
CSV. And every way another learner or another class's instructor could read or write it, refused.

Each HTTP test runs on SQLite and on PostgreSQL (the `client` fixture), with the fake grader of conftest.py.
"""

from __future__ import annotations

import csv
import io
import json
import re
from html import unescape
from pathlib import Path

import pytest
from sqlalchemy import delete, select

from judge.reports.report import (
    CapturedGraph,
    CheckResult,
    CompiledCost,
    CompileEvent,
    CompilerView,
    CostFigures,
    CostSection,
    GraphBreakDiagnostic,
    GuardOrigin,
    RecompileDiagnostic,
    Report,
    SourceLocation,
    Verdict,
)
from tests.web.classroom import browser, new_class, sign_in
from tests.web.conftest import CORRECT, WRONG, wait_done
from web.attempt_facts import facts_of
from web.tables import FactsRow
from web.timeline import CSV_HEAD, NOTE_CHARS, clean_note, diff_of

SUBMIT = "/api/exercises/add-one/submissions"
TIMELINE = "/api/exercises/add-one/timeline"
REPORTS = Path(__file__).parents[1] / "reports"
HOSTILE = "</pre></code><script>alert(1)</script><img src=x onerror=alert(2)>"


def submit(b, source: str, **extra) -> dict:
    created = b.post(SUBMIT, json={"source": source, **extra})
    assert created.status_code == 202, created.text
    return wait_done(b, created.json()["id"])


def attempts_on_page(html: str) -> list[dict]:
    """The timeline as a page shows it: number, verdict and the diff's text, per attempt."""
    out = []
    for number, verdict, body in re.findall(r'<li class="attempt" id="attempt-\w+" data-number="(\d+)" '
                                            r'data-verdict="(\w+)">(.*?)</li>\s*(?=<li class="attempt"|</ol>)',
                                            html, re.S):
        diff = re.search(r'<pre class="code diff">(.*?)</pre>', body, re.S)
        out.append({"number": int(number), "verdict": verdict, "body": body,
                    "diff": unescape(re.sub(r"<[^>]+>", "\n", diff.group(1))) if diff else None})
    return out


# ---- facts, from stored reports ---------------------------------------------------------------------------------

def test_facts_of_the_book_exercises_starter_report():
    report = Report.model_validate_json((REPORTS / "graph_break_step_starter.json").read_text())
    facts = facts_of(report)
    assert facts.verdict == "GRAPH_BREAK"
    assert [(b.gb_id, b.line) for b in facts.breaks] == [("GB0170", 6)]  # one break, though every check saw it
    assert facts.breaks[0].text.startswith("if h.sum().item() > 0:")
    assert facts.graphs == 0 and facts.recompiles == 0 and facts.kernels is None
    assert facts.checks == len(report.checks) and facts.checks_passed == sum(c.passed for c in report.checks)


def test_facts_of_recompiles_guards_graphs_kernels_and_bytes():
    at = SourceLocation(file="mine.py", line=5, text="n = x.shape[0]")
    origin = GuardOrigin(guard="L['x'].size()[0] == 4", location=at)
    report = Report(
        exercise_id="e", verdict=Verdict.RECOMPILE, summary="", duration_s=3.14159,
        checks=[CheckResult(name="t1", passed=True),
                CheckResult(name="t2", passed=False, diagnostics=[
                    RecompileDiagnostic(compiles=3, limit=1, guard_failures=["size mismatch"], origin=origin),
                    GraphBreakDiagnostic(reason="r", gb_id="GB0124", location=at)])],
        compiler=CompilerView(graphs=[CapturedGraph(code="g1"), CapturedGraph(code="g2"), CapturedGraph(code="g1")],
                              recompiles=["a", "b"], origins=[origin],
                              timeline=[CompileEvent(test="t1", call=1, inputs="", compiled=1),
                                        CompileEvent(test="t1", call=2, inputs="", compiled=2),
                                        CompileEvent(test="t2", call=1, inputs="", compiled=1)]),
        cost=CostSection(inputs="x", torch_version="2.13.0", figures=[CostFigures(
            who="learner", compiled=CompiledCost(kernels=["k1", "k2"], bytes_estimate=4096, eager_bytes_outside=64))]))
    facts = facts_of(report)
    assert (facts.checks_passed, facts.checks, facts.recompiles) == (1, 2, 2)
    assert [(g.guard, g.line) for g in facts.guards] == [("L['x'].size()[0] == 4", 5)]
    assert [(b.gb_id, b.line) for b in facts.breaks] == [("GB0124", 5)]
    assert (facts.graphs, facts.compiles) == (1, 3)  # one graph a call; three compiled over the checks
    assert (facts.kernels, facts.bytes, facts.duration_s) == (2, 4160, 3.14)


def test_facts_are_stored_with_the_report_and_read_from_it_when_missing(client):
    first = submit(client, WRONG)
    engine = client.app.state.store.engine
    with engine.connect() as conn:
        stored = conn.scalar(select(FactsRow.facts_json).where(FactsRow.submission_id == first["id"]))
    assert json.loads(stored)["verdict"] == "WRONG_ANSWER" and json.loads(stored)["checks_passed"] == 0
    with engine.begin() as conn:  # a submission graded before facts were stored
        conn.execute(delete(FactsRow))
    [attempt] = client.get(TIMELINE).json()
    assert attempt["facts"]["verdict"] == "WRONG_ANSWER" and attempt["facts"]["checks"] == 2


# ---- the learner's own timeline ---------------------------------------------------------------------------------

def test_each_attempt_has_its_facts_the_diff_from_the_one_before_and_a_note(client):
    submit(client, WRONG, note="first try: return x")
    submit(client, WRONG)  # the same code again: an empty diff
    third = submit(client, CORRECT, note="  added\nthe +1\t ")
    attempts = client.get(TIMELINE).json()
    assert [a["number"] for a in attempts] == [1, 2, 3]
    assert [a["verdict"] for a in attempts] == ["WRONG_ANSWER", "WRONG_ANSWER", "ACCEPTED"]
    assert [(a["facts"]["checks_passed"], a["facts"]["checks"]) for a in attempts] == [(0, 2), (0, 2), (2, 2)]
    assert [a["note"] for a in attempts] == ["first try: return x", None, "added the +1"]
    assert attempts[1]["diff"] == [] and (attempts[1]["added"], attempts[1]["removed"]) == (0, 0)
    assert ["del", "-    return x"] in attempts[2]["diff"] and ["add", "+    return x + 1"] in attempts[2]["diff"]
    assert (attempts[2]["added"], attempts[2]["removed"]) == (1, 1) and attempts[2]["id"] == third["id"]

    page = attempts_on_page(client.get("/exercises/add-one?lang=en").text)
    assert [(a["number"], a["verdict"]) for a in page] == [(1, "WRONG_ANSWER"), (2, "WRONG_ANSWER"), (3, "ACCEPTED")]
    assert "checks passed: 2 of 2" in page[2]["body"] and "+    return x + 1" in page[2]["diff"]
    assert page[0]["diff"] is None and "The same code as the attempt before." in page[1]["body"]
    assert 'value="added the +1"' in page[2]["body"]
    fragment = client.get("/exercises/add-one/timeline?lang=zh").text  # what the page script swaps in
    assert [a["number"] for a in attempts_on_page(fragment)] == [1, 2, 3] and "第 3 次" in fragment


def test_the_learner_edits_and_clears_a_note(client):
    done = submit(client, WRONG)
    path = f"/api/submissions/{done['id']}/note"
    assert client.put(path, json={"note": "why\r\nnot"}).json() == {"note": "why not"}
    assert client.get(TIMELINE).json()[0]["note"] == "why not"
    form = client.post(f"/exercises/add-one/notes/{done['id']}", data={"note": "from the form"},
                       follow_redirects=False)
    assert form.status_code == 303 and form.headers["location"] == f"/exercises/add-one#attempt-{done['id']}"
    assert client.get(TIMELINE).json()[0]["note"] == "from the form"
    assert client.put(path, json={"note": "   "}).json() == {"note": None}
    assert client.get(TIMELINE).json()[0]["note"] is None


@pytest.mark.parametrize("note, status", [
    ("x" * (NOTE_CHARS + 1), 422), (["a list"], 422), ({"an": "object"}, 422), (12, 422),
])
def test_a_note_too_long_or_not_text_is_refused_and_changes_nothing(client, note, status):
    done = submit(client, WRONG, note="kept")
    assert client.put(f"/api/submissions/{done['id']}/note", json={"note": note}).status_code == status
    assert client.post(SUBMIT, json={"source": WRONG, "note": note}).status_code == status
    assert [a["note"] for a in client.get(TIMELINE).json()] == ["kept"]  # and the refused submission was not stored


def test_clean_note_keeps_one_line_of_text():
    assert clean_note("a\u2028b\u0000c\u202ed  e") == "a b c d e"  # separators, NUL, bidi override: spaces
    assert clean_note("é" * NOTE_CHARS) == "é" * NOTE_CHARS and clean_note(None) is None


def test_hostile_sources_and_notes_are_shown_as_text(client, teacher):
    class_path, join = new_class(teacher)
    learner = browser(client)
    learner.post(join, data={"display_name": "Mallory"})
    submit(learner, WRONG)
    submit(learner, f"# {HOSTILE}\n" + CORRECT, note=HOSTILE[:NOTE_CHARS])
    learner_id = re.search(r'/learners/(\w+)"', teacher.get(class_path).text).group(1)
    for html in (learner.get("/exercises/add-one").text, learner.get("/exercises/add-one/timeline").text,
                 teacher.get(f"{class_path}/learners/{learner_id}").text):
        assert "<script>alert(1)" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_long_diff_is_cut_and_counted():
    before = "\n".join(f"a{i}" for i in range(400))
    lines, added, removed, cut = diff_of(before, before.replace("a", "b"))
    assert (added, removed) == (400, 400) and len(lines) == 200 and cut == 801 - 200


# ---- as an attacker: other learners, other classes ------------------------------------------------------------

def test_another_learner_can_neither_read_nor_write_a_timeline(client):
    alice, mallory = browser(client), browser(client)
    done = submit(alice, WRONG, note="alice's secret")
    assert mallory.get(TIMELINE).json() == []
    assert "alice" not in mallory.get("/exercises/add-one").text
    assert mallory.get("/exercises/add-one/timeline").text.count('class="attempt"') == 0
    assert mallory.put(f"/api/submissions/{done['id']}/note", json={"note": "pwned"}).status_code == 404
    assert mallory.post(f"/exercises/add-one/notes/{done['id']}", data={"note": "pwned"}).status_code == 404
    assert mallory.put("/api/submissions/no-such-id/note", json={"note": "x"}).status_code == 404
    assert [a["note"] for a in alice.get(TIMELINE).json()] == ["alice's secret"]
    assert mallory.get(TIMELINE + "?learner=" + done["id"]).json() == []  # no parameter names another learner
    assert mallory.get("/api/exercises/no-such/timeline").status_code == 404


def test_a_token_reads_its_own_timeline_only_and_a_wrong_token_nothing(client):
    alice = browser(client)
    done = submit(alice, WRONG, note="mine")
    token = client.app.state.tokens.issue(client.app.state.store.get(done["id"]).learner_id, "laptop")
    cli = browser(client)
    assert [a["note"] for a in cli.get(TIMELINE, headers={"Authorization": f"Bearer {token}"}).json()] == ["mine"]
    assert cli.get(TIMELINE, headers={"Authorization": "Bearer tp_wrong"}).status_code == 401
    # a token only reads: the page routes refuse it
    assert cli.get("/exercises/add-one/timeline", headers={"Authorization": f"Bearer {token}"}).status_code == 403


def test_the_instructor_sees_a_members_timeline_and_other_instructors_and_learners_do_not(client, teacher):
    class_path, join = new_class(teacher)
    bob = browser(client)
    bob.post(join, data={"display_name": "Bob"})
    submit(bob, WRONG, note="first")
    submit(bob, CORRECT)
    learner_id = re.search(r'/learners/(\w+)"', teacher.get(class_path).text).group(1)
    page = teacher.get(f"{class_path}/learners/{learner_id}?lang=en").text
    shown = attempts_on_page(page)
    assert [(a["number"], a["verdict"]) for a in shown] == [(1, "WRONG_ANSWER"), (2, "ACCEPTED")]
    assert "<q>first</q>" in shown[0]["body"] and "+    return x + 1" in shown[1]["diff"]
    assert 'class="note-form"' not in page  # the instructor reads notes, never writes them

    other = browser(client)
    assert sign_in(other, "other").status_code == 303
    other_path, _ = new_class(other, "Class B")
    for path in (f"{class_path}/learners/{learner_id}", f"{class_path}/timeline.csv"):
        assert other.get(path).status_code == 403  # another class's instructor
        assert bob.get(path).status_code == 403  # the learner themself
        assert browser(client).get(path).status_code == 403  # anyone
    assert other.get(f"{other_path}/learners/{learner_id}").status_code == 404  # not a member of B
    assert "first" not in other.get(f"{other_path}/timeline.csv").content.decode("utf-8-sig")


def test_the_class_csv_has_every_attempt_with_its_facts_and_note(client, teacher):
    class_path, join = new_class(teacher)
    for name, note in (("=cmd|' /C calc'!A0", "+1 fixes it"), ("Ann", "=HYPERLINK(\"http://evil\")")):
        b = browser(client)
        b.post(join, data={"display_name": name})
        submit(b, WRONG)
        submit(b, CORRECT, note=note)
    outsider = browser(client)
    submit(outsider, WRONG, note="not in the class")
    response = teacher.get(f"{class_path}/timeline.csv")
    assert response.headers["content-type"].startswith("text/csv") and response.content.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert list(rows[0]) == CSV_HEAD
    assert [(r["learner"], r["attempt"], r["verdict"], r["checks passed"], r["lines added"], r["note"])
            for r in rows] == [
        ("'=cmd|' /C calc'!A0", "1", "WRONG_ANSWER", "0", "0", ""),
        ("'=cmd|' /C calc'!A0", "2", "ACCEPTED", "2", "1", "'+1 fixes it"),
        ("Ann", "1", "WRONG_ANSWER", "0", "0", ""),
        ("Ann", "2", "ACCEPTED", "2", "1", "'=HYPERLINK(\"http://evil\")"),
    ]
    assert 'id="timeline-csv"' in teacher.get(class_path).text


def test_an_attempt_a_regrade_changed_shows_both_verdicts(client, teacher):
    class_path, join = new_class(teacher)
    ann = browser(client)
    ann.post(join, data={"display_name": "Ann"})
    done = submit(ann, WRONG)
    regrades = client.app.state.regrades
    [regrade] = regrades.request("add-one", "a-newer-version")
    assert regrades.mark_running(regrade.id) is not None
    regrades.finish(regrade.id, Report(exercise_id="add-one", verdict=Verdict.ACCEPTED, summary="", checks=[]))
    [attempt] = attempts_on_page(ann.get("/exercises/add-one?lang=en").text)
    assert attempt["verdict"] == "WRONG_ANSWER"  # what it was graded as, with the regrade's verdict beside it
    assert re.search(r'class="verdict-tag v-ACCEPTED regraded"', attempt["body"])
    [row] = csv.DictReader(io.StringIO(teacher.get(f"{class_path}/timeline.csv").content.decode("utf-8-sig")))
    assert (row["verdict"], row["verdict after regrade"]) == ("WRONG_ANSWER", "ACCEPTED")
    assert done["id"] == regrade.submission_id
