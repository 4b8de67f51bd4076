"""Map stack frames to the learner's own file and line."""

from __future__ import annotations

import linecache
import re
import traceback
from types import TracebackType

from judge.reports.report import SourceLocation

# scratch path of the learner's module -> the name shown to the learner; set by the child harness.
LEARNER_FILES: dict[str, str] = {}


def register_learner_file(path: str, display_name: str) -> None:
    LEARNER_FILES[str(path)] = display_name


def location(filename: str, lineno: int, function: str | None = None, column: int | None = None,
             text: str | None = None) -> SourceLocation:
    """A SourceLocation, naming the learner's file as the learner knows it."""
    text = text if text is not None else linecache.getline(filename, lineno).strip()
    return SourceLocation(file=LEARNER_FILES.get(filename, filename), line=lineno, column=column,
                          text=text, function=function)


def is_learner_file(filename: str) -> bool:
    return filename in LEARNER_FILES


def learner_frames(frames) -> list[SourceLocation]:
    """The learner's frames among `frames` (FrameSummary objects), outermost first."""
    return [location(f.filename, f.lineno, f.name, getattr(f, "colno", None))
            for f in frames if is_learner_file(f.filename)]


def learner_location_from_traceback(tb: TracebackType | None) -> SourceLocation | None:
    """The innermost frame of the learner's file in a traceback."""
    found = learner_frames(traceback.extract_tb(tb))
    return found[-1] if found else None


_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([^\n]+))?\n?(?:[ \t]+(?![ \t]*File ")([^\n]*))?')


def stack_locations(text: str) -> list[SourceLocation]:
    """The learner's frames in a printed stack (an FX node's stack trace), with the line's text when printed."""
    found = []
    for filename, lineno, function, code in _FRAME.findall(text or ""):
        if is_learner_file(filename):
            loc = location(filename, int(lineno), function or None)
            if not loc.text and code.strip() and not code.strip().startswith("File "):
                loc = loc.model_copy(update={"text": code.strip()})
            found.append(loc)
    return found


def to_display_names(text: str) -> str:
    """`text` with every registered learner path replaced by the name the learner knows the file by."""
    for path, shown in LEARNER_FILES.items():
        if path != shown:
            text = text.replace(path, shown)
    return text
