"""`%%practice EXERCISE --submit --note "..."`: the note travels with the submission (docs/timeline.md)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from practice.magic import _parse


@pytest.mark.parametrize("line, note", [
    ('graph-break-step --submit --note "torch.where, not .item()"', "torch.where, not .item()"),
    ("graph-break-step --note=first --submit", "first"),
    ("graph-break-step --submit", None),
])
def test_the_note_is_read_from_the_magic_line(line, note):
    args, options = _parse(line)
    assert args == ["graph-break-step"] and options["submit"] and options["note"] == note


@pytest.mark.parametrize("line", ["graph-break-step --note alone", "graph-break-step --submit --note"])
def test_a_note_needs_a_submission_and_a_text(line):
    with pytest.raises(UsageError, match="--note"):
        _parse(line)
