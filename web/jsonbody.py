"""JSON request bodies read by hand (the submission and playground APIs): malformed input is a 422 that says what
is wrong, never a 500. Python's parser raises ValueError (not JSONDecodeError) for an integer of more than 4,300
digits and RecursionError for nesting deeper than its recursion limit; both become a 422 with their own message."""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException

MAX_NUMBER_DIGITS = 100  # no field of these APIs holds a number; a longer one is an attack or a mistake


def _number(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise _TooLong(len(text.lstrip("-")))
    return int(text)


class _TooLong(ValueError):
    def __init__(self, digits: int):
        super().__init__(digits)
        self.digits = digits


def nesting(text: str) -> int:
    """How deep arrays and objects nest in `text` (brackets inside strings not counted)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def parse_json(body: bytes) -> Any:
    """The JSON value of `body`; HTTPException 422 saying what to fix when it is not UTF-8 JSON within the limits."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise HTTPException(422, "the body is not UTF-8") from None
    try:
        return json.loads(text, parse_int=_number)
    except _TooLong as exc:
        raise HTTPException(422, f"the body holds a number of {exc.digits} digits; the limit is "
                                 f"{MAX_NUMBER_DIGITS}") from None
    except json.JSONDecodeError as exc:
        raise HTTPException(422, f"the body is not JSON: {exc.msg}") from None
    except RecursionError:
        pass
    raise HTTPException(422, f"the body nests arrays or objects {nesting(text)} levels deep, too deep to read: "
                             'send a flat object such as {"source": "..."}')
