"""Comments of an exercise's code (starter, reference) in the learner's language.

A comment written in both languages puts the English after an `en:` marker on the same line:

    if h.sum().item() > 0:  # 依赖数据的 Python 控制流  # en: Python control flow that depends on data

`in_language(source, "zh")` keeps the Chinese (`# 依赖数据的 Python 控制流`), `in_language(source, "en")` the
English (`# Python control flow that depends on data`); every other line is left as it is, so line numbers, and
the code that is graded, are the same in both. A comment without the marker reads the same in both languages.
"""

from __future__ import annotations

import io
import re
import tokenize

MARKER = re.compile(r"\s*#\s*en:\s*")


def in_language(source: str, lang: str) -> str:
    """`source` with each two-language comment in `lang` (the source as it is where it does not tokenize)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    lines = source.splitlines(keepends=True)
    for token in reversed(tokens):  # from the end: a line's earlier columns stay where they were
        if token.type != tokenize.COMMENT:
            continue
        found = MARKER.search(token.string, 1)
        if found is None:
            continue
        zh, en = token.string[:found.start()].rstrip(), token.string[found.end():].strip()
        said = f"# {en}" if lang == "en" else zh
        row, start = token.start
        end = token.end[1]
        line = lines[row - 1]
        lines[row - 1] = line[:start] + said + line[end:]
    return "".join(lines)
