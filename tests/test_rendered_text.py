"""What a learner reads, scanned in both languages: the CLI's report of real gradings (tests/reports/, made by
`python practice/judge.py graph-break-step FILE --json`), the notebook's HTML of the same reports, and the web's
exercise, playground and /me pages (FastAPI's TestClient). Nowhere outside code may there be

- a markdown backtick shown as a character (a `code` span must be drawn as code),
- an unfilled `{placeholder}` (a message formatted without its field, or PyTorch's registry text as written),
- on a Chinese page, an English run: three or more English words in a row, outside code, that are not terms
  the course keeps in English (PyTorch's names, `graph break`, `guard`, ...; see TERMS).

Code is what the page marks as code: <code>, <pre> and scripts in HTML; in the terminal, the style the CLI
draws code spans with (cli.render.CODE_STYLE) and the lines it labels as raw compiler text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from rich.console import Console

from cli.render import print_report
from judge.reports.report import Report

REPORTS = sorted((Path(__file__).parent / "reports").glob("*.json"))
PLACEHOLDER = re.compile(r"\{[A-Za-z_][\w.]*(?:\[[^\]]*\])?(?:![rsa])?(?::[^{}]*)?\}")
# Terms the Chinese text keeps in English (the book does): PyTorch's names and the compiler's vocabulary.
TERMS = {"torch", "compile", "graph", "break", "breaks", "dynamo", "inductor", "aotautograd", "triton", "cuda",
         "guard", "guards", "dtype", "dtypes", "eager", "kernel", "kernels", "python", "pytorch", "hypothesis",
         "fx", "gpu", "cpu", "aten", "api", "token", "jupyter", "notebook", "sandbox", "none", "bwrap", "docker",
         "fullgraph", "true", "false", "item", "tolist", "where", "cond", "silu", "rmsnorm", "nan", "graphs"}
ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'’]*(?:[ ,;:/]+[A-Za-z][A-Za-z'’]*){2,}")
IDS = re.compile(r"[\w'’]*[-_.:/@][\w'’-]+[\w.:/@'’-]*")  # ids, names, paths and links (graph-break-step, x.item)
RAW_LABELS = ("Dynamo 给出的原因（原文）", "详情（原文）", "PyTorch 的登记表", "Dynamo's reason (raw)",
              "details (raw)", "PyTorch's registry")


def english_runs(text: str) -> list[str]:
    """Runs of three or more English words that are not all terms the course keeps in English."""
    return [run for run in ENGLISH_RUN.findall(IDS.sub(" | ", text))
            if not all(word.lower().strip("'’") in TERMS for word in re.split(r"[ ,;:/]+", run))]


def problems(text: str, lang: str) -> list[str]:
    found = [f"backtick: {line.strip()}" for line in text.splitlines() if "`" in line]
    found += [f"placeholder {m.group(0)}" for m in PLACEHOLDER.finditer(text)]
    if lang == "zh":
        found += [f"English run: {run!r}" for run in english_runs(text)]
    return found


def html_text(html: str) -> str:
    """The text of an HTML page outside code: <code>, <pre>, <script> and <style> left out, tags removed."""
    html = re.sub(r"(?s)<(script|style|pre|code|textarea)\b.*?</\1>", " ", html)
    html = re.sub(r'(?s)<table class="tp-quote">.*?</table>', " ", html)  # the notebook's quote of the cell
    html = re.sub(r"(?s)<[^>]+>", " ", html)
    return re.sub(r"&[#\w]+;", " ", html)


def cli_text(report: Report, lang: str) -> str:
    """What `practice EXERCISE` prints, outside code: code spans (drawn in CODE_STYLE) and raw lines left out."""
    console = Console(record=True, width=120, force_terminal=True, color_system="standard")
    with console.capture() as capture:
        print_report(console, report, lang=lang)
    ansi = capture.get()
    ansi = re.sub(r"\x1b\[1;36m.*?\x1b\[0m", " ", ansi)  # bold cyan: cli.render.CODE_STYLE
    plain = re.sub(r"\x1b\[[0-9;]*m", "", ansi)
    return "\n".join(line for line in plain.splitlines() if not any(label in line for label in RAW_LABELS))


def test_the_scan_finds_what_it_is_for():
    assert problems("say `x` here", "en") and problems("got {count} items", "en")
    assert problems("文件不符合格式：the file has no block", "zh")
    assert not problems("第 6 行发生了 graph break：Dynamo 的 guard 失败", "zh")


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("path", REPORTS, ids=[p.stem for p in REPORTS])
def test_the_terminal_report_of_a_grading(path, lang):
    report = Report.model_validate(json.loads(path.read_text()))
    assert problems(cli_text(report, lang), lang) == []


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("path", REPORTS, ids=[p.stem for p in REPORTS])
def test_the_notebook_report_of_a_grading(path, lang):
    from practice.html import report_html

    report = Report.model_validate(json.loads(path.read_text()))
    from judge.parent.comments import in_language

    starter = Path(__file__).parents[1] / "exercises" / "graph-break-step" / "starter.py"
    source = in_language(starter.read_text(), lang)  # the learner's cell, started from the starter
    assert problems(html_text(report_html(report, source, lang)), lang) == []


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from tests.web.conftest import FakeGrader
    from tests.web.real_course import book_course
    from web.app import create_app
    from web.settings import Settings

    tmp = tmp_path_factory.mktemp("pages")
    settings = Settings(data_dir=tmp / "data", exercises_dir=book_course(tmp), sandbox="none",
                        allow_unsandboxed=True, workers=1, secret_key="scan", queue="embedded",
                        database_url=f"sqlite:///{tmp}/db.sqlite")
    with TestClient(create_app(settings, grade=FakeGrader()), base_url="http://testserver") as c:
        yield c


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("url", ["/exercises/graph-break-step", "/playground?exercise=graph-break-step",
                                 "/playground", "/me", "/"])
def test_the_web_pages(client, url, lang):
    page = client.get(url, params={"lang": lang})
    assert page.status_code == 200
    assert problems(html_text(page.text), lang) == []


@pytest.mark.parametrize("lang, other", [("en", re.compile(r"[\u4e00-\u9fff]")), ("zh", re.compile(r"# en:"))])
def test_the_exercise_page_serves_the_starter_in_its_language(client, lang, other):
    page = client.get("/exercises/graph-break-step", params={"lang": lang}).text
    boot = json.loads(re.search(r'<script type="application/json" id="boot">(.*?)</script>', page, re.S).group(1))
    assert "def step" in boot["starter"] and not other.search(boot["starter"])
    for params in ({"exercise": "graph-break-step"}, {}):  # the exercise's starter, the playground's example
        playground = client.get("/playground", params={"lang": lang, **params}).text
        source = json.loads(re.search(r'<script type="application/json" id="boot">(.*?)</script>', playground,
                                      re.S).group(1))["source"]
        assert "__practice__" in source and not other.search(source)
