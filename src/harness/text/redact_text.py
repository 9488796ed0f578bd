"""Byte-level text helpers for the redactor: sanitizing, code-point cuts, placeholder and marker forms."""

from __future__ import annotations

import re

PLACEHOLDER_FORMAT = "[REDACTED:{rule_id}]"
PLACEHOLDER_PREFIX = b"[REDACTED:"
CAP_MARKER = b"...[capped]"
# Any placeholder text already present in a body (ours, or copied by a caller): spans starting in it are dropped.
PLACEHOLDER_RE = re.compile(rb"\[REDACTED:[a-z0-9_]{1,24}\]")

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def placeholder(rule_id: str) -> bytes:
    """The UTF-8 placeholder that replaces one merged span."""
    return PLACEHOLDER_FORMAT.format(rule_id=rule_id).encode("ascii")


def sanitize(s: str) -> str:
    """NUL becomes the text `[NUL]` and each lone surrogate U+FFFD, so the text encodes and stores anywhere."""
    if "\x00" in s:
        s = s.replace("\x00", "[NUL]")
    if not s.isascii():
        s = _LONE_SURROGATE.sub("\ufffd", s)
    return s


def utf8_size(s: str) -> int:
    """Size in UTF-8 bytes of text as received, lone surrogates counted as encoded by surrogatepass."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-8", "surrogatepass"))


def boundary_at_or_before(buf: bytes, limit: int) -> int:
    """The largest code-point boundary of valid UTF-8 `buf` that is at most `limit`."""
    if limit >= len(buf):
        return len(buf)
    pos = max(limit, 0)
    while pos > 0 and buf[pos] & 0xC0 == 0x80:
        pos -= 1
    return pos


def cut_outside_placeholders(buf: bytes, limit: int) -> int:
    """A cut point at most `limit` on a code-point boundary, moved before any placeholder it would split."""
    pos = boundary_at_or_before(buf, limit)
    start = buf.rfind(PLACEHOLDER_PREFIX, 0, pos + len(PLACEHOLDER_PREFIX) - 1)
    if 0 <= start < pos:
        match = PLACEHOLDER_RE.match(buf, start)
        if match is not None and match.end() > pos:
            return start
    return pos
