"""Display names: one normal form for comparing (NFKC + casefold), and the names that are refused.

A name is stored as typed (NFC, runs of spaces made one) and compared by its key: NFKC, casefolded, NFKC
again (Unicode's "compatibility caseless match"), so `Ｂｏｂ`, `BOB` and a `José` typed with a combining
accent all sign in as the same member. Refused, each with a message that says what to change:

- letters with more than three combining marks stacked on them (text that spills over the rows around it);
- invisible, control, format and bidi characters (zero-width spaces and joiners, RLO/LRI, soft hyphen,
  Hangul fillers, private-use and unassigned code points): a name that reads the same as another;
- letters of several scripts that are not a usual mix (UTS #39 "highly restrictive": one script, or Latin
  with Han, kana, Bopomofo or Hangul), such as a Cyrillic `о` in `Bоb`;
- a name whose skeleton (each character replaced by a representative of its look-alikes, after Unicode's
  confusables table as packaged by confusable-homoglyphs) equals that of another member's name: `B0b`
  beside `Bob`.
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from importlib.resources import files

from confusable_homoglyphs import categories

from web.errors import InputError
from web.i18n import N_

MAX_DISPLAY_NAME = 40
# Combining marks in a row on one letter, after NFC: Vietnamese needs two, Thai and Devanagari up to three; more is
# text stacked to spill over the rows above and below it in every table that shows the name.
MAX_MARKS_PER_LETTER = 3
# Invisible or blank-looking characters whose general category is a letter or a symbol.
INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5\u180e")
REFUSED_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
NEUTRAL_SCRIPTS = {"COMMON", "INHERITED"}
CJK = {"HAN", "HIRAGANA", "KATAKANA", "BOPOMOFO", "HANGUL"}
USUAL_MIXES = [{"LATIN", "HAN", "HIRAGANA", "KATAKANA"}, {"LATIN", "HAN", "BOPOMOFO"}, {"LATIN", "HAN", "HANGUL"}]


def display_name_of(text: str) -> str:
    """The name as stored: NFC, runs of spaces made one; `InputError` saying what to fix when it is refused."""
    name = " ".join(unicodedata.normalize("NFC", text).split())
    if not name:
        raise InputError(N_("Enter a display name: the name your instructor will see."))
    if len(name) > MAX_DISPLAY_NAME:
        raise InputError(N_("The display name is too long: use at most {n} characters."), n=MAX_DISPLAY_NAME)
    if any(_invisible(ch) for ch in name):
        raise InputError(N_("The display name contains invisible or control characters (such as zero-width "
                            "spaces or text-direction marks): type it again with letters, digits and spaces."))
    if _most_marks_in_a_row(name) > MAX_MARKS_PER_LETTER:
        raise InputError(N_("The display name stacks accents or other marks on a letter: type it with at most "
                            "{n} marks on each letter."), n=MAX_MARKS_PER_LETTER)
    if not _usual_scripts(name):
        raise InputError(N_("The display name mixes letters of different scripts that look alike (such as Latin "
                            "and Cyrillic): type it in one script."))
    return name


def name_key(text: str) -> str:
    """What two names are compared by: NFKC + casefold, spaces made one (so any typed form of a name matches)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(folded.split())


def skeleton(text: str) -> str:
    """The name with every character replaced by one representative of its look-alikes, before and after folding
    case (`BOB` and `B0B` read alike; `Bob` and `B0b` are left to the eye, as in UTS #39's case-sensitive skeleton)."""
    table = _look_alikes()
    mapped = "".join(table.get(ch, ch) for ch in unicodedata.normalize("NFKC", text))
    return "".join(table.get(ch, ch) for ch in name_key(mapped).replace(" ", ""))


def look_alike(name: str, others: list[str]) -> str | None:
    """The first of `others` that reads like `name` without being the same name, or None."""
    key, shape = name_key(name), skeleton(name)
    return next((o for o in others if name_key(o) != key and skeleton(o) == shape), None)


def _invisible(ch: str) -> bool:
    return ch in INVISIBLE or unicodedata.category(ch) in REFUSED_CATEGORIES or (
        unicodedata.category(ch) == "Zs" and ch != " ")


def _most_marks_in_a_row(name: str) -> int:
    most = run = 0
    for ch in name:
        run = run + 1 if unicodedata.category(ch).startswith("M") else 0
        most = max(most, run)
    return most


def _usual_scripts(name: str) -> bool:
    scripts = {categories.aliases_categories(ch)[0] for ch in name} - NEUTRAL_SCRIPTS
    return len(scripts) <= 1 or any(scripts <= mix for mix in USUAL_MIXES)


@lru_cache(maxsize=1)
def _look_alikes() -> dict[str, str]:
    """character -> the smallest character of its class of look-alikes (the table's pairs, joined transitively)."""
    data = json.loads(files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8"))
    parent: dict[str, str] = {}

    def root(ch: str) -> str:
        while parent.setdefault(ch, ch) != ch:
            parent[ch] = parent[parent[ch]]
            ch = parent[ch]
        return ch

    for ch, glyphs in data.items():
        for glyph in (g["c"].strip("\u200e") for g in glyphs):
            if len(ch) == 1 and len(glyph) == 1:
                a, b = root(ch), root(glyph)
                parent[max(a, b)] = min(a, b)
    return {ch: root(ch) for ch in parent}
