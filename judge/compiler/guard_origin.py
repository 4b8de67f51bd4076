"""Where a guard came from: the learner's line that made Dynamo add the guard that failed on a recompile.

Dynamo records, for every guard, the user frame that installed it: its `recompiles` log artifact words each
failed guard as `- 0/1: L['n'] == 2   # h = x * n  # ch/submission.py:5 in step` and adds the guard's
"User stack trace" where it has one; its `guards` artifact words each installed guard the same way (a tensor's
size guard, `TENSOR_MATCH`, names the line that first used the tensor). The runner reads both (`origins`) and
sends the learner's line of each recompile's first failing guard; the verifier (`classify`, `enrich`) says what
kind of specialisation that guard is (a Python value, a static size, the 0/1 specialisation, duck sizing, a
branch on a size) in both languages. Shown only: no verdict depends on it.
"""

from __future__ import annotations

import linecache
import os
import re

from judge.reports.i18n import T
from judge.reports.report import GuardOrigin, RecompileDiagnostic, SourceLocation

MAX_ORIGINS = 20
_FAILURE = re.compile(r"^\s*-\s*(\d+/\d+):\s*(.+)$")
_STACK_FILE = re.compile(r'^\s*-?\s*File "(.+)", line (\d+), in (.+)$')
_COMMENT = re.compile(r"#\s*(.*?)\s*#\s*(\S+):(\d+) in (\S+)")
_SIZE_MISMATCH = re.compile(r"tensor '(.+?)' size mismatch at index (\d+)\. expected (\d+), actual (\d+)")
_TENSOR_MATCH = re.compile(r"TENSOR_MATCH: check_tensor\((L\[.+?\]|[^,]+),")
_DUCK = re.compile(r"(\S+\.size\(\)\[\d+\])\s*==\s*(\S+\.size\(\)\[\d+\])")
_ZERO_ONE = re.compile(r"\b2 <= \S*size\(\)\[\d+\]|size\(\)\[\d+\] (?:!=|>=) (?:1|2)\b|Ne\(.*, 1\)")
_SIZE = re.compile(r"size\(\)\[\d+\]|stride\(\)\[\d+\]")
_VALUE = re.compile(r"^\S+ == (?:-?\d+(?:\.\d+)?(?:e-?\d+)?|True|False|None|'.*'|\".*\")$")
_TYPE = re.compile(r"type mismatch|___check_type_id|___check_obj_id|ID_MATCH|TYPE_MATCH")


# ------------------------------------------------------------------------------------------- runner side


def _learner_file(shown: str, learner_files: dict[str, str]) -> str | None:
    """The learner's file a frame name stands for: Dynamo shortens it (`ch/submission.py`)."""
    for path in learner_files:
        if shown == path or (os.path.basename(shown) == os.path.basename(path) and path.endswith(shown)):
            return path
    return None


def _where(path: str, line: int, function: str, learner_files: dict[str, str]) -> dict:
    return {"file": learner_files.get(path, path), "line": line, "function": function,
            "text": linecache.getline(path, line).strip()}


def _comment_location(text: str, learner_files: dict[str, str]) -> dict | None:
    found = _COMMENT.search(text)
    if not found:
        return None
    path = _learner_file(found.group(2), learner_files)
    return _where(path, int(found.group(3)), found.group(4), learner_files) if path else None


def tensor_lines(guard_texts: list[str], learner_files: dict[str, str]) -> dict[str, dict]:
    """{source: the learner's line that first used that tensor} from `guards` records (its TENSOR_MATCH)."""
    found: dict[str, dict] = {}
    for text in guard_texts:
        for line in text.splitlines():
            match = _TENSOR_MATCH.search(line)
            where = _comment_location(line, learner_files) if match else None
            if where:
                found.setdefault(_plain_source(match.group(1)), where)
    return found


def _plain_source(source: str) -> str:
    """`L['x']` -> `x`, `L['self'].w` -> `self.w`: how recompile reasons name a source."""
    return re.sub(r"L\['([^']+)'\]", r"\1", source.strip())


def origins(recompile_texts: list[str], tensors: dict[str, dict], learner_files: dict[str, str]) -> list[dict]:
    """For each recompile record, its first failing guard with the learner's line that added it (runner side)."""
    found = []
    for text in recompile_texts:
        failures: list[dict] = []
        for line in text.splitlines():
            failure = _FAILURE.match(line)
            frame = _STACK_FILE.match(line)
            if failure:
                guard = failure.group(2).split("  #")[0].strip()
                failures.append({"compile_id": failure.group(1), "guard": guard[:300],
                                 "location": _comment_location(failure.group(2), learner_files)})
            elif frame and failures and _learner_file(frame.group(1), learner_files):
                failures[-1]["location"] = _where(frame.group(1), int(frame.group(2)), frame.group(3).strip(),
                                                  learner_files)
        if not failures:
            continue
        first = failures[0]
        size = _SIZE_MISMATCH.search(first["guard"])
        if first["location"] is None and size:
            first["location"] = tensors.get(size.group(1))
        found.append(first)
    return found[:MAX_ORIGINS]


# ------------------------------------------------------------------------------------------- verifier side

EXPLANATIONS = {
    "value": T("a Python number or flag is a constant of the graph: Dynamo specialised on its value here, so "
               "every new value compiles again. Pass it as a tensor, or keep it out of the compiled code."),
    "static_size": T("the first compile takes every size as fixed: this size was guarded here, and a new size "
                     "compiles again (then with the size dynamic, unless `dynamic=False`). Mark the dimension "
                     "dynamic with `torch._dynamo.mark_dynamic` before the first call to compile once."),
    "zero_one": T("0/1 specialisation: sizes 0 and 1 are always specialised, so a dynamic size is assumed to be "
                  "at least 2 and a size of 1 (or 0) compiles a graph of its own."),
    "duck": T("duck sizing: two sizes that were equal at the first compile share one symbol, so the graph assumes "
              "they stay equal and inputs where they differ compile again."),
    "size_branch": T("a Python decision on a size (a branch, a loop bound, a slice) guards that size here; sizes "
                     "on the other side of it compile again."),
    "type": T("the type of an argument (or which object it is) changed, so the graph compiled for the old one "
              "does not apply."),
    "other": T("a guard of the compiled graph failed: the graph assumed this and the call broke it."),
}


def classify(guard: str) -> str:
    """The kind of specialisation a failed guard is (a key of EXPLANATIONS)."""
    size = _SIZE_MISMATCH.search(guard)
    if size:
        return "zero_one" if {int(size.group(3)), int(size.group(4))} & {0, 1} else "static_size"
    if _DUCK.search(guard):
        return "duck"
    if _ZERO_ONE.search(guard):
        return "zero_one"
    if _SIZE.search(guard):
        return "size_branch"
    if _TYPE.search(guard):
        return "type"
    if _VALUE.match(guard.strip()):
        return "value"
    return "other"


def from_runner(items) -> list[GuardOrigin]:
    """The runner's origins as GuardOrigins, classified and explained here; malformed ones are left out."""
    found = []
    for item in items[:MAX_ORIGINS] if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("guard"), str):
            continue
        try:
            loc = SourceLocation.model_validate(item["location"]) if item.get("location") else None
        except (ValueError, TypeError):
            loc = None
        guard = item["guard"][:300]
        kind = classify(guard)
        found.append(GuardOrigin(guard=guard, compile_id=str(item.get("compile_id", ""))[:20], kind=kind,
                                 location=loc, explanation=EXPLANATIONS[kind]))
    return found


def _norm(guard: str) -> str:
    return re.sub(r"\s+", "", _plain_source(guard.split("  #")[0]))


def best_match(failure: str, candidates: list[GuardOrigin]) -> GuardOrigin | None:
    """The origin of the guard a diagnostic names (its text, or one containing it); else the first one."""
    want = _norm(failure)
    for origin in candidates:
        have = _norm(origin.guard)
        if want and (have == want or want in have or have in want):
            return origin
    return candidates[0] if candidates else None


def enrich(diagnostics: list, view) -> list:
    """The diagnostics with the origin of each RECOMPILE's first failing guard, from this test's compiles (`view`,
    the grading's judge.verifier_side.compiler_view.ViewBuilder, or None)."""
    candidates = getattr(view, "test_origins", []) if view is not None else []
    for diag in diagnostics:
        if isinstance(diag, RecompileDiagnostic) and diag.origin is None and candidates:
            diag.origin = best_match(diag.guard_failures[0] if diag.guard_failures else "", candidates)
    return diagnostics
