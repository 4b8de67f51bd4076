"""What the catalog tests (tests/core/test_i18n.py, tests/web/test_i18n.py) share."""

from __future__ import annotations

import io
from pathlib import Path

from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po


def assert_mo_is_po_compiled(po_path: Path, mo_path: Path, locale: str = "zh") -> None:
    """The committed .mo holds exactly what compiling the .po gives (scripts/i18n.sh compile makes it so)."""
    with open(mo_path, "rb") as f:
        committed = {repr(m.id): repr(m.string) for m in read_mo(f) if m.id}
    with open(po_path, "rb") as f:
        catalog = read_po(f, locale=locale)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    assert committed == {repr(m.id): repr(m.string) for m in read_mo(compiled) if m.id}, "run scripts/i18n.sh compile"
