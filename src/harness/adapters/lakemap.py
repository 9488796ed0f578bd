"""CloudTrail Lake's text rendering of nested columns (`{type=IAMUser, sessioncontext={...}, invokedby=null}`).

Lake query results carry every column as a string; a nested column (userIdentity, responseElements, ...) is
rendered as `{key=value, ...}` rather than JSON. This reads that rendering back into objects. A value that
itself contains `, ` or an unbalanced brace cannot be told apart from the syntax: such a column stays the
string it was (the record is still mapped from its other columns).
"""

from __future__ import annotations

from typing import Any


class _Unreadable(ValueError):
    pass


def _value(text: str, at: int) -> tuple[Any, int]:
    if text.startswith("{", at):
        return _object(text, at)
    if text.startswith("[", at):
        depth, end = 0, at
        while end < len(text):
            depth += {"[": 1, "]": -1}.get(text[end], 0)
            end += 1
            if depth == 0:
                return text[at:end], end
        raise _Unreadable(text)
    end = at
    while end < len(text) and text[end] not in ",}":
        end += 1
    word = text[at:end]
    return (None if word == "null" else word), end


def _object(text: str, at: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    at += 1
    if text.startswith("}", at):
        return out, at + 1
    while True:
        equals = text.find("=", at)
        if equals < 0:
            raise _Unreadable(text)
        key = text[at:equals]
        if not key or any(ch in key for ch in "{}[],") or key in out:
            raise _Unreadable(text)
        out[key], at = _value(text, equals + 1)
        if text.startswith(", ", at):
            at += 2
        elif text.startswith("}", at):
            return out, at + 1
        else:
            raise _Unreadable(text)


def read_lake_map(text: str) -> Any:
    """The object a Lake `{k=v, ...}` string renders, or the string itself when it is not that syntax."""
    if not text.startswith("{"):
        return text
    try:
        value, end = _object(text, 0)
    except _Unreadable:
        return text
    return value if end == len(text) else text
