"""Escaped views (issue 8 item 3): the same text with its JSON string escapes and percent-encoding undone.

A secret inside a JSON string inside a JSON string, or URL-encoded, has its key and quotes escaped, so the
shape rules cannot see its syntax in the stored text. The redactor scans these decoded views and then
removes each value found there from the original text in every form an encoding level gives it.
"""

from __future__ import annotations

import json
from urllib.parse import quote_from_bytes, unquote_to_bytes

from harness.text.redact_pattern import Regex

# A JSON-encoded string nests at most this deep in what agents and tools send; each level is one view.
MAX_LEVELS = 4
# Shorter values are too likely to occur elsewhere in the text by chance.
MIN_VALUE_BYTES = 6

_JSON_ESCAPE = Regex(rb'\\["\\/nrt]')
_UNESCAPED = {b'"': b'"', b"\\": b"\\", b"/": b"/", b"n": b"\n", b"r": b"\r", b"t": b"\t"}
_PERCENT = Regex(rb"%[0-9A-Fa-f]{2}")


def _one_level(buf: bytes) -> bytes:
    if _PERCENT.search(buf):
        return unquote_to_bytes(buf.replace(b"+", b" "))
    parts: list[bytes] = []
    last = 0
    for spans in _JSON_ESCAPE.finditer(buf):
        start, stop = spans[0]
        parts.append(buf[last:start])
        parts.append(_UNESCAPED[buf[stop - 1 : stop]])
        last = stop
    parts.append(buf[last:])
    return b"".join(parts)


def views(buf: bytes) -> list[bytes]:
    """Each decoded level of `buf` that differs from the one before, outermost first (none for plain text)."""
    out: list[bytes] = []
    if b"\\" not in buf and b"%" not in buf:
        return out
    current = buf
    for _ in range(MAX_LEVELS):
        decoded = _one_level(current)
        if decoded == current:
            break
        out.append(decoded)
        current = decoded
    return out


def encoded_forms(value: bytes) -> list[bytes]:
    """`value` as it appears after 0 to MAX_LEVELS JSON string encodings, and percent-encoded; longest first."""
    forms = {value, quote_from_bytes(value, safe=b"").encode("ascii"), quote_from_bytes(value).encode("ascii")}
    text = value.decode("utf-8", "replace")
    for _ in range(MAX_LEVELS):
        text = json.dumps(text)[1:-1]
        forms.add(text.encode("utf-8"))
    return sorted(forms, key=len, reverse=True)
