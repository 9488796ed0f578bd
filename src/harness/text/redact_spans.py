"""Spans found by both redaction layers: filtering, merging by class then length then number, rebuilding."""

from __future__ import annotations

import bisect
from typing import NamedTuple

from harness.text.redact_text import PLACEHOLDER_PREFIX, PLACEHOLDER_RE, placeholder

EXACT = 0
TOKEN = 1
CONTEXT = 2
CLASS_NAMES = ("exact", "token", "context")


class Span(NamedTuple):
    """Bytes [start, end) of the body to replace; `rank` is the class (exact < token < context)."""

    start: int
    end: int
    rank: int
    number: int
    rule_id: str


class Merged(NamedTuple):
    """One union of overlapping or touching spans and the id its placeholder shows."""

    start: int
    end: int
    rule_id: str


def _widen(buf: bytes, span: Span) -> Span:
    start, end = span.start, span.end
    while start > 0 and buf[start] & 0xC0 == 0x80:
        start -= 1
    while end < len(buf) and buf[end] & 0xC0 == 0x80:
        end += 1
    if start == span.start and end == span.end:
        return span
    return span._replace(start=start, end=end)


def _placeholder_ranges(buf: bytes) -> tuple[list[int], list[int]]:
    if PLACEHOLDER_PREFIX not in buf:
        return [], []
    starts: list[int] = []
    ends: list[int] = []
    for match in PLACEHOLDER_RE.finditer(buf):
        starts.append(match.start())
        ends.append(match.end())
    return starts, ends


def usable(buf: bytes, spans: list[Span]) -> list[Span]:
    """Widen spans to code points; drop empty ones and those starting at or inside an existing placeholder."""
    starts, ends = _placeholder_ranges(buf)
    kept: list[Span] = []
    for span in spans:
        if span.end <= span.start or buf.startswith(PLACEHOLDER_PREFIX, span.start):
            continue
        if starts:
            index = bisect.bisect_right(starts, span.start) - 1
            if index >= 0 and span.start < ends[index]:
                continue
        kept.append(_widen(buf, span))
    return kept


def _better(a: Span, b: Span) -> bool:
    """Whether `a` names a merged span before `b`: best class, then longest, then lowest catalogue number."""
    return (a.rank, b.end - b.start, a.number) < (b.rank, a.end - a.start, b.number)


def merge(spans: list[Span]) -> list[Merged]:
    """Union of overlapping and touching spans, in body order, each named after its best contributor."""
    out: list[Merged] = []
    if not spans:
        return out
    ordered = sorted(spans)
    best = ordered[0]
    start, end = best.start, best.end
    for span in ordered[1:]:
        if span.start <= end:
            end = max(end, span.end)
            if _better(span, best):
                best = span
            continue
        out.append(Merged(start, end, best.rule_id))
        best = span
        start, end = span.start, span.end
    out.append(Merged(start, end, best.rule_id))
    return out


def rebuild(buf: bytes, merged: list[Merged]) -> bytes:
    """The body with each merged span replaced by its placeholder, built in one pass."""
    parts: list[bytes] = []
    pos = 0
    for item in merged:
        parts.append(buf[pos : item.start])
        parts.append(placeholder(item.rule_id))
        pos = item.end
    parts.append(buf[pos:])
    return b"".join(parts)
