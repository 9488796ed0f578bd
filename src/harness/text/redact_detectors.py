"""Detectors: how one catalogue rule finds its spans once the gate pass let it run (docs/ledger.md §6.5).

Every detector is anchored on one literal, and names the RE2 patterns the gate (redact_engine.py) runs
for it: a detector runs only on text where one of them matches. It then searches its literal-first
pattern left to right; where the left check or a stop-list refuses a match the search resumes one byte
later, after a span it resumes at the span's end. A token or value cut by the end of input counts
when its prefix pattern matches up to the end (redact_pattern.py).
"""

from __future__ import annotations

import binascii
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from functools import cache
from typing import Any, Protocol

from harness.text.redact_pattern import (
    Item,
    Lit,
    Regex,
    Run,
    Seq,
    Spans,
    byte_set,
    describe_seq,
    escape,
    item_source,
    prefix_pattern,
    seq_max_len,
    seq_source,
)
from harness.text.redact_spans import Span
from harness.text.redact_text import PLACEHOLDER_PREFIX

WHITESPACE = b" \t\n\r\x0b\x0c"
# A block body's match is clamped to this many bytes.
BODY_MAX = 65536

# VAL: what a bare value may hold; it ends at whitespace, a quote, a backtick, &, comma, semicolon or \.
VAL_CLASS = rb"^\s\"'`&,;\\"
VAL = Run(VAL_CLASS, 1, 4096)
# QVAL after a kept opening quote: `"` runs to the next unescaped `"`; `\"` (JSON in JSON) and `\\\"` (that
# JSON echoed inside another JSON string, as in an error document) to the next `\`; `'` to the next `'`.
# Each is clamped to QVAL_MAX bytes.
QVAL_SOURCES = {
    b'"': rb'(?:[^"\\]|\\[\x00-\xff])*',
    b'\\"': rb"[^\\]*",
    b'\\\\\\"': rb"[^\\]*",
    b"\\'": rb"[^\\]*",
    b"'": rb"[^']*",
}
QVAL_MAX = 8192
_QVAL = {quote: Regex(source) for quote, source in QVAL_SOURCES.items()}

STOP_WORDS = (b"null", b"none", b"nil", b"true", b"false", b"undefined")
KEY_STOP_SUFFIXES = (
    b"type", b"url", b"uri", b"endpoint", b"count", b"len", b"length", b"limit", b"file", b"path", b"dir",
    b"name", b"id", b"format", b"policy", b"expiry", b"expires_in", b"ttl", b"usage", b"hint", b"field", b"izer",
    b"arn", b"scope", b"scopes", b"last_eight", b"changed",
)
_LETTERS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


class RuleRef(Protocol):
    """What a detector needs to know about its rule."""

    number: int
    rule_id: str
    rank: int


class Detector(Protocol):
    """Finds spans for one rule, anchored on one literal."""

    literal: bytes

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """Every regex used: first the literal-first pattern matched at hits, then continuations."""
        ...

    def gates(self) -> list[tuple[bool, bytes]]:
        """The gate patterns, each with whether it runs on the lowered copy: one must match for `scan` to run."""
        ...

    def scan(self, buf: bytes, lo: bytes, rule: RuleRef, out: list[Span]) -> None: ...

    def describe(self) -> dict[str, Any]: ...


def literal_hits(text: bytes, literal: bytes, start: int = 0) -> list[int]:
    """Every position at or after `start` where `literal` occurs (overlapping)."""
    out = []
    pos = text.find(literal, start)
    while pos >= 0:
        out.append(pos)
        pos = text.find(literal, pos + 1)
    return out


def key_stopped(suffix: bytes) -> bool:
    """Key stop-list: the key's suffix after the keyword names metadata (`token_type`, `password_file`)."""
    return suffix.lower().endswith(KEY_STOP_SUFFIXES)


def value_stopped_early(text: bytes, start: int, keyword: bytes) -> bool:
    """The value stop-list checks decided by the value's first bytes (references, placeholders, pwd paths)."""
    head = text[start : start + 2]
    if not head or text.startswith(PLACEHOLDER_PREFIX, start):
        return True
    if head in (b"${", b"{{"):
        return True
    if len(head) == 2 and head[0] in b"$%" and head[1] in _LETTERS:
        return True
    return keyword.lower() == b"pwd" and head[0] in b"/~"


def value_stopped(value: bytes, keyword: bytes) -> bool:
    """Value stop-list on a whole value: empty, a placeholder word, masks, references, counts, paths."""
    if not value or value_stopped_early(value, 0, keyword):
        return True
    if value.lower() in STOP_WORDS:
        return True
    if not value.strip(b"*") or not value.strip(b"xX"):
        return True
    return keyword.lower().endswith(b"token") and value.isdigit()


def trim_block(buf: bytes, start: int, end: int) -> tuple[int, int]:
    """Block bodies keep their surrounding line breaks (real or JSON-escaped) outside the placeholder."""
    while start < end:
        if buf[start] in WHITESPACE:
            start += 1
        elif buf[start : start + 2] in (b"\\n", b"\\r"):
            start += 2
        else:
            break
    while end > start:
        if buf[end - 1] in WHITESPACE:
            end -= 1
        elif end - 2 >= start and buf[end - 2 : end] in (b"\\n", b"\\r"):
            end -= 2
        else:
            break
    return start, end


@dataclass(frozen=True)
class Check:
    """A post-filter in code that is part of a rule: `test(original, start, end, at_end_of_input)`. `tail`, when
    given, says what a run-shaped value (its items) opens with whenever the check passes it, as a gate pattern
    (b"" when it cannot say), so the gate skips prose the check would refuse. The pattern holds on either copy of
    the text, or with `exact_case` only on the original bytes, which the check reads."""

    name: str
    test: Callable[[bytes, int, int, bool], bool]
    tail: Callable[[Seq], bytes] | None = None
    exact_case: bool = False


_DIGITS_AND_MARKS = b"0123456789._~+/=-"
_DIGITS_AND_MARKS_SET = frozenset(_DIGITS_AND_MARKS)


def _has_digit_or_mark(buf: bytes, start: int, end: int, at_end: bool) -> bool:
    # Deleting the bytes in C shortens the value exactly when one of them is there (a per-byte loop in Python
    # was a tenth of the redactor's time on tool output, where prose says "Bearer authentication").
    value = buf[start:end]
    return len(value.translate(None, _DIGITS_AND_MARKS)) != len(value)


def _digit_or_mark_tail(items: Seq) -> bytes:
    """One run holding a digit or mark: its other bytes, then one of those."""
    if len(items) != 1 or not isinstance(items[0], Run):
        return b""
    run = byte_set(items[0].cls)
    wanted = run & _DIGITS_AND_MARKS_SET
    if not wanted:
        return b""
    rest = run - wanted
    return (b"[" + _class_of(rest) + b"]*" if rest else b"") + b"[" + _class_of(wanted) + b"]"


_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
# Base64 text decodes to a ':' (0x3a) exactly when, counting 4-character groups from its start, a group opens
# with O then one of g-v (':' first in its 3 bytes), or has one of D T j z then one of o-r second and third
# (':' second), or one of A E I M Q U Y c g k o s w 0 4 8 then 6 third and fourth (':' third). Case matters, so it
# is only said of the original bytes: lowered, "authentication" would pass (its "on").
_COLON_IN_BASE64 = rb"(?:[A-Za-z0-9+/]{4})*(?:O[g-v]|[A-Za-z0-9+/][DTjz][o-r]|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]6)"


def _colon_tail(items: Seq) -> bytes:
    """On the original bytes: a base64 run decoding to text with ':', or any value reaching the end of input (which
    the check passes). The value's classes are given for the lowered copy, so both cases of each letter count."""
    if not items or not isinstance(items[0], Run) or not byte_set(items[0].cls) <= _BASE64:
        return b""
    value_bytes: set[int] = set()
    for item in items:
        if isinstance(item, Run):
            value_bytes |= byte_set(item.cls)
        elif isinstance(item, Lit):
            value_bytes |= set(item.text)
        else:
            return b""
    value_bytes |= set(bytes(value_bytes).upper())
    return b"(?:" + _COLON_IN_BASE64 + b"|[" + _class_of(frozenset(value_bytes)) + rb"]*\z)"


def _decodes_with_colon(buf: bytes, start: int, end: int, at_end: bool) -> bool:
    if at_end:
        return True
    value = buf[start:end]
    try:
        # What base64.b64decode does without `validate`, minus its argument handling.
        decoded = binascii.a2b_base64(value + b"=" * (-len(value) % 4), strict_mode=False)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _not_a_flag(buf: bytes, start: int, end: int, at_end: bool) -> bool:
    return buf[start : start + 1] != b"-"


# The named checks a rule file may give a key rule (`check = "<name>"`): what a pattern cannot say.
CHECKS = {
    "digit_or_mark": Check("contains a digit or one of ._~+/=-", _has_digit_or_mark, _digit_or_mark_tail),
    "decodes_with_colon": Check("decodes to text containing ':' (always at end of input)", _decodes_with_colon,
                                _colon_tail, exact_case=True),
    "not_a_flag": Check("does not start with '-'", _not_a_flag),
}


@cache
def _left_table(reject: bytes | None, accept: bytes | None) -> bytes:
    # Most rules share a handful of left checks: each table is built once.
    rejected = byte_set(reject) if reject else frozenset()
    accepted = byte_set(accept) if accept else frozenset(range(256))
    return bytes(int(b in accepted and b not in rejected) for b in range(256))


@dataclass(frozen=True)
class Left:
    """Left check: the byte before a hit must not be in `reject` / must be in `accept`; start of input passes.

    `table[b]` is 1 when byte `b` may precede a hit.
    """

    reject: bytes | None = None
    accept: bytes | None = None
    table: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "table", _left_table(self.reject, self.accept))

    def describe(self) -> dict[str, str]:
        """Canonical form for the fingerprint."""
        out = {}
        if self.reject:
            out["reject"] = self.reject.decode("latin-1")
        if self.accept:
            out["accept"] = self.accept.decode("latin-1")
        return out


NO_LEFT = Left()


def ends_inside(prefix: Regex | None, buf: bytes, pos: int, longest: int) -> bool:
    """Whether input ends inside a pattern whose prefix pattern is `prefix`, from `pos` (at least one byte there)."""
    end = len(buf)
    return prefix is not None and pos < end and end - pos <= longest and prefix.fullmatch(buf, pos)


def cut_gate(literal: bytes, prefix: Regex | None) -> list[tuple[bool, bytes]]:
    """The gate pattern of a token cut by the end of input: its literal, then its prefix pattern up to the end."""
    return [(False, escape(literal) + prefix.source + rb"\z")] if prefix is not None else []


def cut_hits(buf: bytes, literal: bytes, low: int, high: int, longest: int) -> list[int]:
    """The hits of `literal` in [low, high) that are close enough to the end of input to start a cut token."""
    start = max(low, len(buf) - longest)
    if start >= high:
        return []
    hits = literal_hits(buf, literal, start)
    return hits[: bisect_left(hits, high)]


def group(text: bytes, spans: Spans, index: int) -> bytes:
    """The text of one group of a match (empty when the group took no part)."""
    start, stop = spans[index]
    return text[start:stop] if start >= 0 else b""


def detector_regexes(obj: Any) -> Iterator[Regex]:
    """Every Regex a detector holds, its value's included (prefix patterns too, which `patterns` leaves out)."""
    for item in fields(obj):
        value = getattr(obj, item.name)
        if isinstance(value, Regex):
            yield value
        elif is_dataclass(value):
            yield from detector_regexes(value)


# --- values -----------------------------------------------------------------------------------------


def _class_of(values: frozenset[int]) -> bytes:
    """A class body (no brackets) accepting exactly the byte values `values`, as ranges of hex escapes."""
    out, ordered, index = [], sorted(values), 0
    while index < len(ordered):
        last = index
        while last + 1 < len(ordered) and ordered[last + 1] == ordered[last] + 1:
            last += 1
        first = b"\\x%02x" % ordered[index]
        out.append(first if last == index else first + b"-\\x%02x" % ordered[last])
        index = last + 1
    return b"".join(out)


def _loose(item: Item) -> bytes:
    """An item's source with the upper bound of a run dropped: it accepts all the item does, and a Set compiles it
    small (a counted run is as many states as its bound)."""
    if isinstance(item, Run):
        return b"[" + item.cls + b"]" + (b"*" if item.lo == 0 else b"+")
    return item_source(item)


class Value(Protocol):
    """Where the replaced value of a context rule starts and ends, given its start and kept quote."""

    @property
    def patterns(self) -> tuple[Regex, ...]: ...

    def bounds(self, text: bytes, start: int, quote: bytes) -> tuple[int, int] | None: ...

    def describe(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Segs:
    """A run-shaped value; `follow` lists bytes one of which must come next unless input ends."""

    items: Seq
    partial_from: int = 0
    follow: bytes | None = None
    _re: Regex = field(init=False, repr=False, compare=False)
    _max: int = field(init=False, repr=False, compare=False)
    _prefix: Regex | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_re", Regex(seq_source(self.items), deferred=True))
        object.__setattr__(self, "_max", seq_max_len(self.items))
        object.__setattr__(self, "_prefix", prefix_pattern(self.items, self.partial_from))

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The value run."""
        return (self._re,)

    def gate_tail(self) -> bytes:
        """A pattern every value `bounds` accepts (a cut one included) opens with, looser where a bound would make
        the gate's DFA large; b"" when nothing short can be said."""
        if self.partial_from:
            # A cut value still holds its first `partial_from` items whole (prefix_pattern).
            return b"".join(_loose(item) for item in self.items[: self.partial_from])
        first = self.items[0]
        if isinstance(first, Run) and first.lo >= 1:
            return b"[" + first.cls + b"]"
        return escape(first.text[:1]) if isinstance(first, Lit) and first.text else b""

    def bounds(self, text: bytes, start: int, quote: bytes) -> tuple[int, int] | None:
        """The value run at `start`, or the rest of the input when input ends inside it."""
        match = self._re.match(text, start, start + self._max)
        if match is not None:
            stop = match[0][1]
            if self.follow is None or stop == len(text) or text[stop] in self.follow:
                return start, stop
            return None
        if ends_inside(self._prefix, text, start, self._max):
            return start, len(text)
        return None

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        out: dict[str, Any] = {"run": describe_seq(self.items)}
        if self.partial_from:
            out["partial_from"] = self.partial_from
        if self.follow is not None:
            out["follow"] = self.follow.decode("latin-1")
        return out


@dataclass(frozen=True)
class Quoted:
    """QVAL after a kept opening quote, else the `bare` value (none: a quote is required)."""

    bare: Segs | None

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The QVAL runs and the bare value's."""
        return (*_QVAL.values(), *(self.bare.patterns if self.bare else ()))

    def bounds(self, text: bytes, start: int, quote: bytes) -> tuple[int, int] | None:
        """QVAL bounds by quote kind, or the bare value's."""
        if quote:
            match = _QVAL[quote].match(text, start, start + QVAL_MAX)
            stop = match[0][1] if match else start
            return (start, stop) if stop > start else None
        if self.bare is None:
            return None
        return self.bare.bounds(text, start, quote)

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {"qval": {k.decode(): v.decode("latin-1") for k, v in QVAL_SOURCES.items()}, "qval_max": QVAL_MAX,
                "bare": self.bare.describe() if self.bare else None}


_DSN_BARE = Regex(rb"[^;&\"'\r\n\\]+")
_DSN_QUOTED = Regex(rb"(?:[^'\\]|\\[\x00-\xff])+")
DSN_MAX = 1024


@dataclass(frozen=True)
class DsnValue:
    """A connection-string value: to `;`, `&`, a quote, a newline, `\\` or end; a libpq `'…'` to its quote."""

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The bare and libpq-quoted runs."""
        return (_DSN_BARE, _DSN_QUOTED)

    def bounds(self, text: bytes, start: int, quote: bytes) -> tuple[int, int] | None:
        """The value inside libpq quotes, else the bare run."""
        if text[start : start + 1] == b"'":
            match = _DSN_QUOTED.match(text, start + 1, start + 1 + DSN_MAX)
            return (start + 1, match[0][1]) if match else None
        match = _DSN_BARE.match(text, start, start + DSN_MAX)
        return (start, match[0][1]) if match else None

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {"bare": _DSN_BARE.source.decode("latin-1"), "libpq": _DSN_QUOTED.source.decode("latin-1"), "max": DSN_MAX}


@dataclass(frozen=True)
class Body:
    """A block body given as one regex, clamped to BODY_MAX bytes; surrounding line breaks stay outside the placeholder."""

    source: bytes
    _re: Regex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_re", Regex(self.source, deferred=True))

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The body repeat."""
        return (self._re,)

    def bounds(self, text: bytes, start: int, quote: bytes) -> tuple[int, int] | None:
        """The trimmed body run."""
        match = self._re.match(text, start, start + BODY_MAX)
        if match is None:
            return None
        vstart, vend = trim_block(text, start, match[0][1])
        return (vstart, vend) if vend > vstart else None

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {"body": self.source.decode("latin-1"), "max": BODY_MAX}


# --- detectors ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    """Whole-token match on the original bytes: `literal` then `items`; optional left and right checks."""

    literal: bytes
    items: Seq
    left: Left = NO_LEFT
    right_reject: bytes | None = None
    _re: Regex = field(init=False, repr=False, compare=False)
    _prefix: Regex | None = field(init=False, repr=False, compare=False)
    _max: int = field(init=False, repr=False, compare=False)
    _right: frozenset[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_re", Regex(escape(self.literal) + seq_source(self.items), deferred=True))
        object.__setattr__(self, "_prefix", prefix_pattern(self.items))
        object.__setattr__(self, "_max", len(self.literal) + seq_max_len(self.items))
        object.__setattr__(self, "_right", byte_set(self.right_reject) if self.right_reject else frozenset())

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The token pattern."""
        return (self._re,)

    def gates(self) -> list[tuple[bool, bytes]]:
        """The token, or its cut form at the end of input."""
        return [(False, self._re.source), *cut_gate(self.literal, self._prefix)]

    def scan(self, buf: bytes, lo: bytes, rule: RuleRef, out: list[Span]) -> None:
        """Append a span for every token, left to right; a token cut by the end of input reaches the end."""
        end = len(buf)
        left = self.left.table
        size = len(self.literal)
        pos = 0
        while True:
            match = self._re.search_from(buf, self.literal, pos)
            start = match[0][0] if match is not None else end
            for hit in cut_hits(buf, self.literal, pos, start, self._max):
                if (not hit or left[buf[hit - 1]]) and ends_inside(self._prefix, buf, hit + size, self._max - size):
                    out.append(Span(hit, end, rule.rank, rule.number, rule.rule_id))
                    return
            if match is None:
                return
            stop = min(match[0][1], start + self._max)
            if (start and not left[buf[start - 1]]) or (stop < end and buf[stop] in self._right):
                pos = start + 1
                continue
            out.append(Span(start, stop, rule.rank, rule.number, rule.rule_id))
            pos = stop

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        out: dict[str, Any] = {"kind": "token", "literal": self.literal.decode("latin-1"),
                               "tail": describe_seq(self.items), "left": self.left.describe()}
        if self.right_reject:
            out["right_reject"] = self.right_reject.decode("latin-1")
        return out


@dataclass(frozen=True)
class KeyValue:
    """A kept key (literal first) and a replaced value, on the lowered copy unless `original`.

    The key pattern may name groups: `q` (the kept opening quote), `kw` (the keyword), `sfx` (the
    key's suffix after the keyword, for the key stop-list).
    """

    literal: bytes
    key: bytes
    value: Value
    left: Left = NO_LEFT
    original: bool = False
    stops: bool = False
    check: Check | None = None
    _re: Regex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_re", Regex(escape(self.literal) + self.key, deferred=True))

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The key pattern, then the value's."""
        return (self._re, *self.value.patterns)

    def gates(self) -> list[tuple[bool, bytes]]:
        """The key pattern, then what a run-shaped value opens with, its check's pattern where it has one (prose
        such as "Bearer authentication" then opens no gate, where the key alone opened it and the code refused the
        value). A gate may run on either copy: the scanned copy's key matches the original in some case."""
        key, on_lowered = self._re.source, not self.original
        if not isinstance(self.value, Segs):
            return [(on_lowered, key)]
        check = self.check
        tail = b""
        if check is not None and check.tail is not None and not self.value.partial_from:
            tail = check.tail(self.value.items)
            if tail and check.exact_case and on_lowered:
                return [(False, b"(?i:" + key + b")" + tail)]
        tail = tail or self.value.gate_tail()
        return [(on_lowered, b"(?:" + key + b")" + tail if tail else key)]

    def scan(self, buf: bytes, lo: bytes, rule: RuleRef, out: list[Span]) -> None:
        """Append a value span for every key, left to right."""
        text = buf if self.original else lo
        groups = self._re.groupindex
        quote_at, keyword_at, suffix_at = groups.get("q"), groups.get("kw"), groups.get("sfx")
        end = len(text)
        left = self.left.table
        pos = 0
        while True:
            match = self._re.search(text, pos)
            if match is None:
                return
            at = match[0][0]
            pos = at + 1
            if at and not left[text[at - 1]]:
                continue
            start = match[0][1]
            quote = group(text, match, quote_at) if quote_at is not None else b""
            keyword = group(text, match, keyword_at) if keyword_at is not None else self.literal
            if self.stops:
                if suffix_at is not None and key_stopped(group(text, match, suffix_at)):
                    continue
                if value_stopped_early(text, start, keyword):
                    continue
            bounds = self.value.bounds(text, start, quote)
            if bounds is None:
                continue
            vstart, vend = bounds
            if self.stops and value_stopped(text[vstart:vend], keyword):
                continue
            if self.check is not None and not self.check.test(buf, vstart, vend, vend == end):
                continue
            out.append(Span(vstart, vend, rule.rank, rule.number, rule.rule_id))
            pos = max(vend, pos)

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {
            "kind": "key_value",
            "on": "original" if self.original else "lowered",
            "key": self._re.source.decode("latin-1"),
            "value": self.value.describe(),
            "left": self.left.describe(),
            "stop_lists": self.stops,
            "check": self.check.name if self.check else None,
        }


@dataclass(frozen=True)
class Block:
    """A kept header, then a body up to `end_literal` (found with bytes.find) or end of input."""

    literal: bytes
    header: bytes
    end_literal: bytes
    _re: Regex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_re", Regex(escape(self.literal) + self.header, deferred=True))

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The header pattern (the end line is found with bytes.find)."""
        return (self._re,)

    def gates(self) -> list[tuple[bool, bytes]]:
        """The header."""
        return [(False, self._re.source)]

    def scan(self, buf: bytes, lo: bytes, rule: RuleRef, out: list[Span]) -> None:
        """Append the body span of every block, left to right."""
        pos = 0
        while True:
            match = self._re.search_from(buf, self.literal, pos)
            if match is None:
                return
            body = match[0][1]
            stop = buf.find(self.end_literal, body)
            if stop < 0:
                stop = len(buf)
            start, end = trim_block(buf, body, stop)
            if end > start:
                out.append(Span(start, end, rule.rank, rule.number, rule.rule_id))
            pos = max(stop, match[0][0] + 1)

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {"kind": "block", "header": self._re.source.decode("latin-1"), "end": self.end_literal.decode()}


_PUTTY_HEADER = Regex(rb"PuTTY-User-Key-File-[23]:")
_LINE_ENDS = (b"\n", b"\r", b"\\n", b"\\r")


def line_end(buf: bytes, pos: int, limit: int | None = None) -> int:
    """The first real or JSON-escaped line break from `pos` (searched up to `limit`), else `limit` or the end."""
    stop = len(buf) if limit is None else min(limit, len(buf))
    found = [index for index in (buf.find(mark, pos, stop) for mark in _LINE_ENDS) if index >= 0]
    return min(found) if found else stop


@dataclass(frozen=True)
class PuttyBlock:
    """PuTTY key files: after `Private-Lines:`, everything through the end of the `Private-MAC:` line."""

    literal: bytes = b"Private-Lines:"
    mac: bytes = b"Private-MAC:"

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The header gate (the private part is found with bytes.find)."""
        return (_PUTTY_HEADER,)

    def gates(self) -> list[tuple[bool, bytes]]:
        """The header (the private part follows it)."""
        return [(False, _PUTTY_HEADER.source)]

    def scan(self, buf: bytes, lo: bytes, rule: RuleRef, out: list[Span]) -> None:
        """Append the private part of each key file in a text that carries a PuTTY header."""
        resume = 0
        for pos in literal_hits(buf, self.literal):
            if pos < resume:
                continue
            body = pos + len(self.literal)
            mac = buf.find(self.mac, body)
            stop = len(buf) if mac < 0 else line_end(buf, mac)
            start, end = trim_block(buf, body, stop)
            if end > start:
                out.append(Span(start, end, rule.rank, rule.number, rule.rule_id))
            resume = stop

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {"kind": "putty", "gate": _PUTTY_HEADER.source.decode(), "start": self.literal.decode(),
                "through_line": self.mac.decode()}


@dataclass(frozen=True)
class Anchored:
    """A mid-token anchor: `before` (fixed width), the anchor literal, then the tail, searched as one pattern.

    The token starts `before_width` bytes before the anchor; a cut token's `before` is checked in code.
    """

    literal: bytes
    items: Seq
    before: bytes
    before_width: int
    _re: Regex = field(init=False, repr=False, compare=False)
    _before: Regex = field(init=False, repr=False, compare=False)
    _prefix: Regex | None = field(init=False, repr=False, compare=False)
    _max: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        whole = b"(?:" + self.before + b")" + escape(self.literal) + seq_source(self.items)
        object.__setattr__(self, "_re", Regex(whole, deferred=True))
        object.__setattr__(self, "_before", Regex(self.before, deferred=True))
        object.__setattr__(self, "_prefix", prefix_pattern(self.items))
        object.__setattr__(self, "_max", len(self.literal) + seq_max_len(self.items))

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The whole-token pattern, then the fixed-width check before the anchor (for cut tokens)."""
        return (self._re, self._before)

    def gates(self) -> list[tuple[bool, bytes]]:
        """The anchor and its tail, or its cut form at the end of input (`before` is checked in `scan`)."""
        return [(False, self._re.source), *cut_gate(self.literal, self._prefix)]

    def _fits(self, buf: bytes, pos: int, resume: int) -> bool:
        start = pos - self.before_width
        return start >= resume and self._before.fullmatch(buf, start, pos)

    def scan(self, buf: bytes, lo: bytes, rule: RuleRef, out: list[Span]) -> None:
        """Append the whole token around every anchor whose surroundings fit."""
        end = len(buf)
        size = len(self.literal)
        width = self.before_width
        pos = 0
        while True:
            match = self._re.search(buf, pos)
            at = match[0][0] + width if match is not None else end
            for hit in cut_hits(buf, self.literal, pos + width, at, self._max):
                if self._fits(buf, hit, pos) and ends_inside(self._prefix, buf, hit + size, self._max - size):
                    out.append(Span(hit - width, end, rule.rank, rule.number, rule.rule_id))
                    return
            if match is None:
                return
            stop = min(match[0][1], at + self._max)
            out.append(Span(at - width, stop, rule.rank, rule.number, rule.rule_id))
            pos = stop

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {"kind": "anchored", "before": self.before.decode(), "anchor": self.literal.decode("latin-1"),
                "tail": describe_seq(self.items)}


@dataclass(frozen=True)
class BotToken:
    """Telegram: anchor `:A`; the 8-10 digits before it (not preceded by a digit) and `:` are kept."""

    literal: bytes = b":A"
    items: Seq = (Run(b"A-Za-z0-9_-", 34, 34),)
    digits: tuple[int, int] = (8, 10)
    _re: Regex = field(init=False, repr=False, compare=False)
    _prefix: Regex | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_re", Regex(escape(self.literal) + seq_source(self.items), deferred=True))
        object.__setattr__(self, "_prefix", prefix_pattern(self.items))

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The anchor pattern (the digits before it are counted in code)."""
        return (self._re,)

    def gates(self) -> list[tuple[bool, bytes]]:
        """The anchor and what follows it, or its cut form at the end of input."""
        return [(False, self._re.source), *cut_gate(self.literal, self._prefix)]

    def _digits_before(self, buf: bytes, pos: int) -> bool:
        fewest, most = self.digits
        # One byte more than allowed is looked at, so that a longer digit run is refused.
        before = buf[max(0, pos - most - 1) : pos]
        return fewest <= len(before) - len(before.rstrip(b"0123456789")) <= most

    def scan(self, buf: bytes, lo: bytes, rule: RuleRef, out: list[Span]) -> None:
        """Append the part after `:` of every bot token."""
        end = len(buf)
        size = len(self.literal)
        longest = seq_max_len(self.items)
        pos = 0
        while True:
            match = self._re.search_from(buf, self.literal, pos)
            at = match[0][0] if match is not None else end
            for hit in cut_hits(buf, self.literal, pos, at, size + longest):
                if self._digits_before(buf, hit) and ends_inside(self._prefix, buf, hit + size, longest):
                    out.append(Span(hit + 1, end, rule.rank, rule.number, rule.rule_id))
                    return
            if match is None:
                return
            pos = at + 1
            if self._digits_before(buf, at):
                out.append(Span(at + 1, match[0][1], rule.rank, rule.number, rule.rule_id))
                pos = match[0][1]

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {"kind": "bot_token", "anchor": self.literal.decode(), "after": describe_seq(self.items),
                "digits_before": list(self.digits)}


_PEM_HEADER_WORDS = (b"PRIVATE KEY", b"SECRET KEY")


@dataclass(frozen=True)
class Base64Pem:
    """A base64-encoded PEM private key: its first 96 characters decode to a private or secret key header."""

    literal: bytes = b"LS0tLS1CRUdJTi"
    run: Run = Run(b"A-Za-z0-9+/=", 16, 65536)
    checked: int = 96
    _body: Regex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_body", Regex(b"[" + self.run.cls + b"]*", deferred=True))

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The run the scan shares between hits inside one run."""
        return (self._body,)

    def gates(self) -> list[tuple[bool, bytes]]:
        """The literal (the decoding check is in `scan`)."""
        return [(False, escape(self.literal))]

    def scan(self, buf: bytes, lo: bytes, rule: RuleRef, out: list[Span]) -> None:
        """Append every encoded private key."""
        pattern = self._body
        end = len(buf)
        resume = 0
        # The end of the current maximal run, extended only forward, so hits inside one run (whose checks
        # failed) never rescan it.
        run_end = 0
        for pos in literal_hits(buf, self.literal):
            if pos < resume:
                continue
            body = pos + len(self.literal)
            run_end = max(run_end, body)
            if run_end - body < self.run.hi:
                run_end = pattern.match(buf, run_end, body + self.run.hi)[0][1]  # type: ignore[index]
            stop = min(run_end, body + self.run.hi)
            at_end = stop == end and stop > body
            if not at_end and (stop - body < self.run.lo or not self._is_private(buf[pos : min(stop, pos + self.checked)])):
                continue
            out.append(Span(pos, stop, rule.rank, rule.number, rule.rule_id))
            resume = stop

    @staticmethod
    def _is_private(head: bytes) -> bool:
        head = head[: len(head) // 4 * 4]
        try:
            decoded = binascii.a2b_base64(head, strict_mode=True)
        except binascii.Error:
            return False
        return any(word in decoded for word in _PEM_HEADER_WORDS)

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {"kind": "base64_pem", "literal": self.literal.decode(),
                "run": describe_seq((self.run,)),
                "check": f"the run's first {self.checked} bytes decode (strict base64) to one of "
                         f"{[w.decode() for w in _PEM_HEADER_WORDS]}, or the run reaches end of input"}


_MYSQL_VALUE = Regex(rb" -p[^\s\"'\\]{1,256}")


@dataclass(frozen=True)
class MysqlFlag:
    """A password glued to ` -p` within 200 bytes after a mysql/mariadb command on the same line."""

    literal: bytes
    window: int = 200

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The flag and its glued value."""
        return (_MYSQL_VALUE,)

    def gates(self) -> list[tuple[bool, bytes]]:
        """The command, in any case, and a ` -p` flag after it."""
        return [(True, escape(self.literal.lower()) + rb"[^\r\n]{0,%d} -p" % self.window)]

    def scan(self, buf: bytes, lo: bytes, rule: RuleRef, out: list[Span]) -> None:
        """Append the glued value of every ` -p` flag in each command's window."""
        resume = 0
        for pos in literal_hits(lo, self.literal.lower()):
            start = max(pos + len(self.literal), resume)
            limit = line_end(buf, pos, pos + len(self.literal) + self.window)
            flag = buf.find(b" -p", start, limit)
            while flag >= 0:
                match = _MYSQL_VALUE.match(buf, flag)
                if match is not None:
                    out.append(Span(flag + 3, match[0][1], rule.rank, rule.number, rule.rule_id))
                    resume = match[0][1]
                flag = buf.find(b" -p", flag + 3, limit)

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {"kind": "mysql", "command": self.literal.decode(), "window": self.window,
                "value": _MYSQL_VALUE.source.decode("latin-1")}


_MANIFEST_LINE = Regex(rb"\n[ \t]{1,64}[a-z0-9_.-]{1,253}:[ \t]{1,8}([a-z0-9+/]{8,}={0,2})[ \t]{0,64}")


@dataclass(frozen=True)
class SecretManifest:
    """In a Kubernetes Secret manifest, the value of every indented `key: <base64>` line."""

    literal: bytes = b"kind: secret"

    @property
    def patterns(self) -> tuple[Regex, ...]:
        """The indented base64 line."""
        return (_MANIFEST_LINE,)

    def gates(self) -> list[tuple[bool, bytes]]:
        """The manifest's kind line."""
        return [(True, escape(self.literal))]

    def scan(self, buf: bytes, lo: bytes, rule: RuleRef, out: list[Span]) -> None:
        """Append the value of every indented base64 line of the text."""
        end = len(lo)
        for match in _MANIFEST_LINE.finditer(lo):
            stop = match[0][1]
            if stop == end or lo[stop] in b"\r\n":
                out.append(Span(match[1][0], match[1][1], rule.rank, rule.number, rule.rule_id))

    def describe(self) -> dict[str, Any]:
        """Canonical form for the fingerprint."""
        return {"kind": "manifest", "gate": self.literal.decode(), "line": _MANIFEST_LINE.source.decode("latin-1")}
