"""Markdown statements to HTML (markdown-it-py), with code blocks highlighted by Pygments."""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
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


def pygments_css() -> str:
    """The stylesheet for code blocks inside rendered Markdown (`.md pre`)."""
    return HtmlFormatter(style="friendly").get_style_defs(".md pre")
