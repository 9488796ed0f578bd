"""Sanitizing agent-visible text (docs/investigate.md §1.2): whitespace folding, invisible-character removal, a byte cap."""

from __future__ import annotations

import json
import re
import unicodedata

MAX_FIELD_BYTES = 1024
TRUNCATION_MARKER = " [truncated]"
_KEEP_BYTES = MAX_FIELD_BYTES - len(TRUNCATION_MARKER.encode("utf-8"))

# Line and paragraph separators count as newlines, so they fold to a space like \n does.
WS: frozenset[str] = frozenset("\t\n\r\u2028\u2029")


# Cf and Cs ranges per Unicode database version, so start-up skips the 1.1M-code-point scan
# (about 100 ms) on known interpreters; a test checks each table against a fresh scan.
_FORMAT_RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "14.0.0": (
        (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
        (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
        (0x2060, 0x2064), (0x2066, 0x206F), (0xD800, 0xDFFF), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB),
        (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
        (0xE0001, 0xE0001), (0xE0020, 0xE007F),
    ),
}


def format_code_points(version: str | None = None) -> list[int]:
    """Code points of category Cf or Cs in the running interpreter's Unicode database."""
    table = _FORMAT_RANGES.get(unicodedata.unidata_version if version is None else version)
    if table is not None:
        return [cp for lo, hi in table for cp in range(lo, hi + 1)]
    categories = map(unicodedata.category, map(chr, range(0x110000)))
    return [cp for cp, category in enumerate(categories) if category in ("Cf", "Cs")]


def _invisible_code_points() -> list[int]:
    controls = [cp for cp in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)) if chr(cp) not in WS]
    return sorted(set(controls) | set(format_code_points()))


def _char_class(code_points: list[int]) -> str:
    ranges: list[tuple[int, int]] = []
    for cp in code_points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    parts = (re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in ranges)
    return "".join(parts)


_INVISIBLE_CPS = _invisible_code_points()
INVISIBLE: frozenset[str] = frozenset(map(chr, _INVISIBLE_CPS))

_INVISIBLE_CLASS = _char_class(_INVISIBLE_CPS)
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE_CLASS}]")
_MULTILINE_ALLOWED = frozenset("\t\n")
_UNCLEAN_RE = re.compile(f"[{_INVISIBLE_CLASS}{_char_class(sorted(map(ord, WS)))}]")
_UNCLEAN_MULTILINE_RE = re.compile(f"[{_INVISIBLE_CLASS}{_char_class(sorted(map(ord, WS - _MULTILINE_ALLOWED)))}]")

_SANITIZE_TABLE: dict[int, str | None] = {cp: None for cp in _INVISIBLE_CPS}
_SANITIZE_TABLE.update({ord(ch): " " for ch in WS})


def _cap(s: str) -> str:
    encoded = s.encode("utf-8")
    if len(encoded) <= MAX_FIELD_BYTES:
        return s
    # "ignore" only drops the code point cut in half at the end: the rest is valid UTF-8.
    return encoded[:_KEEP_BYTES].decode("utf-8", "ignore") + TRUNCATION_MARKER


def sanitize_field(s: str) -> str:
    """Fold each WS to a space, drop INVISIBLE, strip, and cap at 1,024 UTF-8 bytes with a visible marker."""
    if not (s.isascii() and s.isprintable()) and _UNCLEAN_RE.search(s):
        s = s.translate(_SANITIZE_TABLE)
    s = s.strip()
    # A code point is at most 4 UTF-8 bytes, so a short string needs no encode to know it fits.
    return s if len(s) * 4 <= MAX_FIELD_BYTES else _cap(s)


def strip_invisible(s: str) -> str:
    """Drop INVISIBLE code points only (WS kept, no trim, no cap); used for raw payloads."""
    if s.isascii() and s.isprintable():
        return s
    return _INVISIBLE_RE.sub("", s)


def is_clean(s: str, multiline: bool = False) -> bool:
    """True when `s` has no INVISIBLE and no WS (with `multiline`, \\n and \\t are allowed)."""
    if s.isascii() and s.isprintable():
        return True
    pattern = _UNCLEAN_MULTILINE_RE if multiline else _UNCLEAN_RE
    return pattern.search(s) is None


def echo(s: str) -> str:
    """The form in which input is quoted in messages and notes: the JSON string of its sanitized text."""
    return json.dumps(sanitize_field(s), ensure_ascii=False)
