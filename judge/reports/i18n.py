"""Learner-facing text in Chinese (the book's language) and English, through gettext catalogs.

The grading core writes each message in English where it arises, with named fields filled in late:
`T("the graph has {count} nodes", count=3)`. Babel extracts every `T("...")` of `judge/` and `cli/`
(`scripts/i18n.sh`) into a catalog per domain (`DOMAINS`), `judge/locale/<domain>.pot`, and
`judge/locale/zh/LC_MESSAGES/<domain>.po` translates it; the compiled `.mo` files are committed.
A hidden test gives its Chinese inline, beside the English (an exercise is a folder of its own, like its
statements): `T("step was compiled {n} times", zh="step 被编译了 {n} 次", n=n)`.

A `T` is rendered when a report is built: a report field holds the English text and the model's
`translations` holds the others (judge/reports/report.py: Localized). A field value that is itself a `T` is
rendered in the same language; any other value is inserted as it is (code, numbers, shapes).
"""

from __future__ import annotations

import gettext
from functools import cache
from pathlib import Path

LANGS = ("zh", "en")
SOURCE_LANG = "en"
OTHER_LANGS = tuple(lang for lang in LANGS if lang != SOURCE_LANG)
LOCALE_DIR = Path(__file__).parents[1] / "locale"
# core: judge/*.py and judge/remote/; checks: judge/checks/ (what hidden tests call); cli: cli/
DOMAINS = ("core", "checks", "cli")


class _Missing(gettext.NullTranslations):
    """The fallback behind a catalog: a message it lacks comes back as None, not as the English."""

    def gettext(self, message):  # gettext's own name
        return None


@cache
def catalog(lang: str) -> gettext.NullTranslations:
    """Every domain's compiled catalog of `lang`, merged; a message none of them has translates to None."""
    merged = None
    for domain in DOMAINS:
        path = LOCALE_DIR / lang / "LC_MESSAGES" / f"{domain}.mo"
        if not path.is_file():
            continue
        with path.open("rb") as handle:
            found = gettext.GNUTranslations(handle)
        if merged is None:
            merged = found
        else:
            merged.add_fallback(found)
    if merged is None:
        return _Missing()
    merged.add_fallback(_Missing())
    return merged


class T:
    """A learner-facing message: English, optionally its Chinese (`zh=`), and named fields for `str.format`.

    Without `zh`, the Chinese comes from the catalogs (the English is the msgid). A field that is a `T`
    is rendered in the same language; anything else is inserted as it is."""

    __slots__ = ("en", "zh", "fields")

    def __init__(self, en: str, /, zh: str | None = None, **fields):
        self.en, self.zh, self.fields = en, zh, fields

    @classmethod
    def same(cls, text: str) -> T:
        """Text that reads the same in every language (code, a shape, a number)."""
        return cls("{text}", zh="{text}", text=text)

    @classmethod
    def join(cls, parts, sep: str = " ") -> T:
        """Several messages (or plain strings) one after another."""
        parts = [p for p in parts if p]
        names = {f"p{i}": p if isinstance(p, T) else T.same(str(p)) for i, p in enumerate(parts)}
        template = sep.join("{" + name + "}" for name in names)
        return cls(template, zh=template, **names)

    @classmethod
    def of(cls, model, field: str) -> T:
        """The text of `field` of a Localized model (judge/reports/report.py), in every language it has."""
        return _FromModel(model, field)

    def template(self, lang: str) -> str | None:
        if lang == SOURCE_LANG:
            return self.en
        if self.zh is not None and lang == "zh":
            return self.zh
        return catalog(lang).gettext(self.en)

    def render(self, lang: str) -> str | None:
        """The text in `lang`, or None if it (or a field's text) has no translation into `lang`."""
        template = self.template(lang)
        if template is None:
            return None
        values = {}
        for name, value in self.fields.items():
            if isinstance(value, T):
                value = value.render(lang)
                if value is None:
                    return None
            values[name] = value
        try:
            return template.format(**values)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"message {self.en!r} in {lang}: {exc}") from None

    def __str__(self) -> str:
        return self.render(SOURCE_LANG) or ""

    def __repr__(self) -> str:
        return f"T({self.en!r}, {self.zh!r}, **{self.fields!r})"

    def __bool__(self) -> bool:
        return bool(self.en)


class _FromModel(T):
    __slots__ = ("model", "field")

    def __init__(self, model, field: str):
        super().__init__(str(getattr(model, field, "") or ""))
        self.model, self.field = model, field

    def render(self, lang: str) -> str | None:
        if lang == SOURCE_LANG:
            return self.en
        return (getattr(self.model, "translations", {}) or {}).get(lang, {}).get(self.field)


def in_code(text, limit: int | None = None) -> str:
    """Raw text (Python's or torch's words, a line of code) made safe to go inside a `code` span of a message:
    its backticks become quotes; `limit`: at most this many characters of it."""
    return str(text)[:limit].replace("`", "'")


def text(value, lang: str) -> str:
    """`value` in `lang`: a T rendered (its English where it lacks `lang`), anything else as a string."""
    if isinstance(value, T):
        rendered = value.render(lang)
        return rendered if rendered is not None else str(value)
    return "" if value is None else str(value)


def pick_lang(value: str | None, default: str = "zh") -> str:
    return value if value in LANGS else default
