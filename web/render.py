"""Markdown statements to HTML (markdown-it-py), with code blocks highlighted by Pygments."""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

_FORMATTER = HtmlFormatter(cssclass="highlight", nowrap=True)


def _highlight(code: str, lang: str, _attrs: str) -> str:
    try:
        lexer = get_lexer_by_name(lang or "python")
    except ClassNotFound:
        return ""  # markdown-it escapes and shows the block as plain text
    return highlight(code, lexer, _FORMATTER)


# html=False: raw HTML in a statement is shown as text, never injected.
_MD = MarkdownIt("commonmark", {"html": False, "highlight": _highlight, "linkify": False}).enable("table")


@lru_cache(maxsize=256)
def markdown_html(text: str) -> str:
    """A statement as HTML; code fences are highlighted (python when no language is given)."""
    return _MD.render(text)


def inline_code(text) -> Markup:
    """A judge message or a UI sentence as HTML: each `code` span a <code>, the rest escaped. Text whose backticks
    do not pair (cut short, say) is shown as written."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:
        return escape(str(text))
    return Markup("").join(Markup("<code>{}</code>").format(p) if i % 2 else escape(p) for i, p in enumerate(parts))


def pygments_css() -> str:
    """The stylesheet for code blocks inside rendered Markdown (`.md pre`)."""
    return HtmlFormatter(style="friendly").get_style_defs(".md pre")
