"""PyTorch's own words for a graph break: the registry id Dynamo classifies it with, and what the registry says.

Since torch 2.7 every graph break Dynamo raises has a type (`Unsupported.gb_type`) listed with an id, an
explanation and hints in `torch/_dynamo/graph_break_registry.json`, which ships in the wheel; Dynamo's message
links the page of that id. `classify` finds the id of a break (from the exception's `gb_type`, the link in the
message, a line of the message that is a registered type, or an older wording such as `torch._dynamo.explain`'s
"generic_jump TensorVariable()"), and `words` gives what the registry says of it in both languages: Chinese from
the judge's catalogue `judge/compiler/break_registry_zh.toml`, English from the registry.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path

import tomllib

from judge.reports.i18n import T
from judge.reports.report import GraphBreakDiagnostic, PyTorchWords

CATALOGUE = Path(__file__).parent / "break_registry_zh.toml"
SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/"  # torch._dynamo.exc.get_gbid_documentation_link
_LINK = re.compile(r"compile-graph-break-site/gb/gb(\d+)\.html")
_ID = re.compile(r"^GB\d{4}$")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_WORD = re.compile(r"^[A-Za-z][a-z]*[,.;:]?$")

# Older wordings (torch._dynamo.explain, pre-registry messages) -> the registry id of what they describe.
LEGACY = [
    (re.compile(r"generic_jump\s+TensorVariable|jump with TensorVariable"), "GB0170"),
    (re.compile(r"call_method\s+TensorVariable\(\)\s+item\b|Tensor\.item\(\)"), "GB0124"),
    (re.compile(r"call_method\s+TensorVariable\(\)\s+tolist\b"), "GB0109"),
    (re.compile(r"call_method\s+TensorVariable\(\)\s+numpy\b"), "GB0105"),
    (re.compile(r"builtin:?\s*print\b|builtin operator `print`"), "GB0059"),
    (re.compile(r"torch\._dynamo\.graph_break\(\)"), "GB0025"),
    (re.compile(r"skip function .*disable|torch\.compiler\.disable"), "GB0098"),
    # With fullgraph=True, torch 2.13 captures `.item()` and then raises a UserError (no registry type) where
    # the graph would decide on the value: filed under what they are.
    (re.compile(r"Could not guard on data-dependent expression"), "GB0170"),
    (re.compile(r"Could not extract specialized integer from data-dependent expression"), "GB0033"),
    (re.compile(r"data-dependent size u\d+"), "GB0036"),
    # The judge's own host-sync check (judge.checks.graphs.assert_no_host_sync): what Dynamo breaks on by default.
    (re.compile(r"^host sync: (?:item|_local_scalar_dense)\(\)"), "GB0124"),
    (re.compile(r"^host sync: tolist\(\)"), "GB0109"),
    (re.compile(r"^host sync: numpy\(\)"), "GB0105"),
]


def registry_path() -> Path | None:
    """The installed torch's graph_break_registry.json (found without importing torch), or None."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "_dynamo" / "graph_break_registry.json"
    return path if path.is_file() else None


@functools.cache
def registry() -> dict[str, list[dict]]:
    """{id: [entry, ...]} of the installed torch (newest wording first; empty without the file)."""
    path = registry_path()
    if path is None:
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


@functools.cache
def _by_type() -> dict[str, str]:
    found: dict[str, str] = {}
    for gb_id, entries in registry().items():
        for entry in entries:
            found.setdefault(entry.get("Gb_type", ""), gb_id)
    return found


@functools.cache
def catalogue() -> dict[str, dict]:
    """The Chinese catalogue: {id: {"title", "explanation", "hints"}}."""
    return tomllib.loads(CATALOGUE.read_text(encoding="utf-8"))


def classify(text: str, gb_type: str | None = None) -> str | None:
    """The registry id of a graph break from Dynamo's `gb_type` or its message `text`; None if unclassified."""
    if gb_type and gb_type in _by_type():
        return _by_type()[gb_type]
    found = _LINK.search(text or "")
    if found:
        return f"GB{int(found.group(1)):04d}"
    for line in (text or "").splitlines():
        line = line.strip().removeprefix("Graph Break Reason:").strip()
        if line in _by_type():
            return _by_type()[line]
    for pattern, gb_id in LEGACY:
        if pattern.search(text or ""):
            return gb_id
    return None


def url(gb_id: str) -> str:
    """The page of `gb_id` on PyTorch's graph-break site (the one Dynamo's own messages link)."""
    return f"{SITE}gb{gb_id.removeprefix('GB')}.html"


def _entry(gb_id: str) -> dict:
    """The registry's clearest entry for `gb_id`: a literal explanation (not a variable name), hints if any."""
    entries = registry().get(gb_id, [])

    def score(entry) -> tuple:
        explanation = entry.get("Explanation", "")
        literal = not explanation.startswith(("_", '"')) and not explanation.isidentifier()
        return (literal, bool(entry.get("Hints")), -len(_PLACEHOLDER.findall(explanation)))

    return max(entries, key=score) if entries else {}


def _prose(text: str) -> bool:
    return sum(1 for token in text.split() if _WORD.match(token)) >= 3


def _hint_lines(fragments: list[str], values: dict[str, str] | None = None) -> str:
    """The registry's hints, one per line: it lists the string pieces of torch's source, where one hint may be
    split over several (a piece that ends in a space goes on with the next)."""
    lines, current = [], ""
    for piece in fragments:
        head = piece.strip()
        if not current and (head.isidentifier() or head[:1] == "{" or head[:1].islower()):  # not a hint's start
            continue
        current += piece
        if not piece.endswith(" "):
            lines.append(_plain(current, values))
            current = ""
    if current.strip():
        lines.append(_plain(current, values))
    return "\n".join(line for line in lines if line)


def _plain(text: str, values: dict[str, str] | None = None) -> str:
    """A registry text with its `{placeholders}` filled from `values` (what this break's message said), the
    others shown as "…": never a `{name}` of torch's source."""
    found = values or {}
    return _PLACEHOLDER.sub(lambda m: found.get(m.group(0), "…"), text).strip().strip('"').strip()


def values_said(template: str, said: str) -> dict[str, str]:
    """{placeholder: value} read from Dynamo's own message of a break (`said`), which is the registry's
    `template` with its placeholders filled; empty where the message does not follow the template."""
    names = _PLACEHOLDER.findall(template)
    if not names or not said:
        return {}
    parts = _PLACEHOLDER.split(template)
    pattern = "".join(re.escape(part) + (r"([^\n]{1,300}?)" if i < len(names) else "")
                      for i, part in enumerate(parts))
    match = re.search(pattern + r"[ \t]*(?:\n|$)", said)
    if match is None:
        return {}
    found: dict[str, str] = {}
    for name, value in zip(names, match.groups()):
        found.setdefault(name, value.strip())
    return found


def words(gb_id: str, said: str = "") -> PyTorchWords | None:
    """What the registry says of `gb_id`, Chinese where the catalogue has it; None for an id it does not list.
    `said`: Dynamo's message of this break, which fills the registry's placeholders (the builtin's name, the
    argument types)."""
    entry = _entry(gb_id)
    if not entry:
        return None
    title = entry.get("Gb_type", gb_id)
    values = values_said(entry.get("Explanation", ""), said)
    explanation = _plain(entry.get("Explanation", ""), values)
    explanation = explanation if _prose(explanation) else ""  # else an expression of torch's source
    hints = _hint_lines(entry.get("Hints", []), values)
    zh = catalogue().get(gb_id)
    if zh is None:
        return PyTorchWords(gb_id=gb_id, title=title, explanation=explanation, hints=hints, url=url(gb_id))
    return PyTorchWords(gb_id=gb_id, title=_both(title, zh["title"]),
                        explanation=_both(explanation or title, zh["explanation"]),
                        hints=_both(hints, "\n".join(zh.get("hints", []))) if hints else "", url=url(gb_id))


def _both(en: str, zh: str) -> T:
    return T("{en}", zh="{said}", en=en, said=zh)


def enrich(diagnostics: list) -> list:
    """The diagnostics with PyTorch's words set on each graph break the runner classified (the id is the runner's
    word; what it means is read here, from this side's registry)."""
    for diag in diagnostics:
        if isinstance(diag, GraphBreakDiagnostic) and diag.gb_id and diag.pytorch is None:
            if _ID.match(diag.gb_id):
                diag.pytorch = words(diag.gb_id, diag.reason)
    return diagnostics
