"""The shape layer's one regex engine, RE2 (docs/decisions.md, "Redaction engine"), and the tail language.

RE2 runs in Latin-1 mode, so a pattern and the text are bytes, one byte per character, as the
stored UTF-8 text is scanned. RE2 never backtracks: every match is linear in the bytes it reads.

The tail language (docs/redaction.md) is the subset of regex syntax a token's tail or a value run is
written in: literals, bounded runs of one byte class and `(?:a|b|)` groups. From one tail the
loader builds two RE2 patterns: the tail itself, and its prefix pattern, which matches text that
ends inside the tail; a token or value cut by the end of input (a cap) is still redacted with it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import re2

# RE2 refuses a counted repeat over this; a longer run is written open and each match is clamped (`endpos`)
# to the pattern's longest match instead.
RE2_MAX_REPEAT = 1000
# The longest run bound the tail language accepts.
MAX_RUN_BOUND = 65536



def re2_options(max_mem: int | None = None) -> re2.Options:
    """Latin-1 (bytes), errors raised rather than logged, and optionally a larger memory budget."""
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.log_errors = False
    if max_mem is not None:
        options.max_mem = max_mem
    return options


_OPTIONS = re2_options()
# The compiled RE2 object is called directly: the public wrapper's generator costs about twice as much per match,
# and the shape layer makes one match per literal hit.
_START = re2._re2.RE2.Anchor.ANCHOR_START
_BOTH = re2._re2.RE2.Anchor.ANCHOR_BOTH
_NONE = re2._re2.RE2.Anchor.UNANCHORED

Spans = list[tuple[int, int]]

# How many hits of a literal `Regex.search_from` tries anchored before it searches unanchored.
ANCHORED_TRIES = 4

# Held while a Regex compiles, so two threads meeting a pattern first at once compile it once.
_COMPILING = threading.Lock()


class PatternError(ValueError):
    """A pattern RE2 cannot run, or a tail outside the tail language; the message says why."""


class Regex:
    """One RE2 pattern; a match returns the spans of the whole match and of each group, or None.

    Made `deferred`, the pattern is compiled on first use instead of here: the catalogue's detectors name about
    1,250 patterns and a process meets few of them, so compiling them all made every cold call pay for the whole
    catalogue (docs/decisions.md, "Cold start"). `check()` compiles a deferred one at once.
    """

    __slots__ = ("_re", "groupindex", "source")

    def __init__(self, source: bytes, *, deferred: bool = False) -> None:
        self.source = source
        if not deferred:
            self._compile()

    def __getattr__(self, name: str) -> Any:
        # Called only while a slot is unset, so once compiled the matching methods read `_re` at full speed.
        if name not in ("_re", "groupindex"):
            raise AttributeError(name)
        with _COMPILING:
            try:
                return object.__getattribute__(self, name)
            except AttributeError:
                self._compile()
        return object.__getattribute__(self, name)

    def _compile(self) -> None:
        try:
            compiled = re2.compile(self.source, _OPTIONS)
        except re2.error as exc:
            detail = exc.args[0].decode("latin-1") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
            raise PatternError(f"RE2 cannot run it ({detail}); RE2 has no possessive repeats (write {{m,n}} for "
                               f"{{m,n}}+), no lookaround, no back references and no repeat over {RE2_MAX_REPEAT}") from None
        # groupindex first: a reader that finds `_re` set then finds the group names too.
        self.groupindex: dict[str, int] = {name.decode("latin-1"): index for name, index in compiled.groupindex.items()}
        self._re = compiled._regexp

    def check(self) -> Regex:
        """Compile now (if not yet): raises PatternError for a pattern RE2 cannot run."""
        self._re  # noqa: B018 - the first read compiles
        return self

    def match(self, text: bytes, pos: int = 0, endpos: int | None = None) -> Spans | None:
        """Anchored at `pos`; the match ends at or before `endpos`."""
        spans = self._re.Match(_START, text, pos, len(text) if endpos is None else max(pos, min(endpos, len(text))))
        return None if spans[0][0] < 0 else spans

    def fullmatch(self, text: bytes, pos: int = 0, endpos: int | None = None) -> bool:
        """Whether the pattern matches exactly `text[pos:endpos]`."""
        end = len(text) if endpos is None else max(pos, min(endpos, len(text)))
        return self._re.Match(_BOTH, text, pos, end)[0][0] >= 0

    def search(self, text: bytes, pos: int = 0) -> Spans | None:
        """The leftmost match at or after `pos`."""
        spans = self._re.Match(_NONE, text, pos, len(text))
        return None if spans[0][0] < 0 else spans

    def search_from(self, text: bytes, literal: bytes, pos: int = 0) -> Spans | None:
        """`search` for a pattern that opens with `literal`: the same match, tried anchored at the literal's hits.

        Every match starts at a hit, so the first hit where the anchored match succeeds is where `search` would
        find it, with the same extent. An unanchored search builds DFA states for every position of a counted run
        (`[A-Za-z0-9_]{22,255}`: about 0.5 ms the first time a rule meets a token, once per rule and text shape);
        an anchored match of these one-pass patterns builds none. After ANCHORED_TRIES failed hits the unanchored
        search takes over, so text full of failing hits still costs one search.
        """
        end = len(text)
        for _ in range(ANCHORED_TRIES):
            pos = text.find(literal, pos)
            if pos < 0:
                return None
            spans = self._re.Match(_START, text, pos, end)
            if spans[0][0] >= 0:
                return spans
            pos += 1
        spans = self._re.Match(_NONE, text, pos, end)
        return None if spans[0][0] < 0 else spans

    def finditer(self, text: bytes) -> Iterator[Spans]:
        """Every leftmost non-overlapping match, left to right."""
        pos, end = 0, len(text)
        while pos <= end:
            spans = self._re.Match(_NONE, text, pos, end)
            if spans[0][0] < 0:
                return
            yield spans
            pos = spans[0][1] if spans[0][1] > spans[0][0] else spans[0][1] + 1


@cache
def escape(literal: bytes) -> bytes:
    """`literal` as an RE2 pattern that matches it and nothing else (cached: the catalogue escapes each literal for
    its patterns, its gates and its description)."""
    return re2.escape(literal)


@cache
def byte_set(cls: bytes) -> frozenset[int]:
    """The byte values a class (its contents, no brackets) accepts."""
    # One pass over the 256 bytes: a one-byte class matches exactly at the positions of the bytes it accepts.
    # Many rules share a class, hence the cache (the result is immutable).
    pattern = Regex(b"[" + cls + b"]")
    return frozenset(spans[0][0] for spans in pattern.finditer(bytes(range(256))))


def open_repeat(source: bytes) -> bool:
    """Whether a free regex has an open repeat (`*`, `+`, `{m,}`) outside its classes and escapes."""
    index = 0
    while index < len(source):
        char = source[index : index + 1]
        if char == b"\\":
            index += 2
        elif char == b"[":
            index = _class_end(source, index + 1) + 1
        elif char in (b"*", b"+"):
            return True
        elif char == b"{":
            close = source.find(b"}", index)
            if close > 0 and source[index + 1 : close].endswith(b",") and source[index + 1 : close - 1].isdigit():
                return True
            index += 1
        else:
            index += 1
    return False


# --- the tail language -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Lit:
    """Literal bytes."""

    text: bytes


@dataclass(frozen=True)
class Run:
    """`[cls]{lo,hi}`: a run of one byte class (`cls` in class syntax, no brackets)."""

    cls: bytes
    lo: int
    hi: int


@dataclass(frozen=True)
class Alt:
    """Alternative sequences; an empty sequence makes the group optional."""

    branches: tuple[tuple[Item, ...], ...]


Item = Lit | Run | Alt
Seq = tuple[Item, ...]


def _run_source(cls: bytes, lo: int, hi: int) -> bytes:
    body = b"[" + cls + b"]"
    if lo == hi:
        return body if lo == 1 else body + b"{%d}" % lo
    if hi > RE2_MAX_REPEAT:
        return body + (b"*" if lo == 0 else b"+" if lo == 1 else b"{%d,}" % lo)
    return body + b"{%d,%d}" % (lo, hi)


def item_source(item: Item) -> bytes:
    """The RE2 source of one item (a run bounded over 1000 is open; `seq_max_len` clamps its match)."""
    if isinstance(item, Lit):
        return escape(item.text)
    if isinstance(item, Run):
        return _run_source(item.cls, item.lo, item.hi)
    return b"(?:" + b"|".join(seq_source(branch) for branch in item.branches) + b")"


def seq_source(items: Seq) -> bytes:
    """The RE2 source of a sequence."""
    return b"".join(item_source(item) for item in items)


def seq_max_len(items: Seq) -> int:
    """The longest text a sequence can match."""
    total = 0
    for item in items:
        if isinstance(item, Lit):
            total += len(item.text)
        elif isinstance(item, Run):
            total += item.hi
        else:
            total += max(seq_max_len(branch) for branch in item.branches)
    return total


def describe_seq(items: Seq) -> str:
    """Canonical text of a sequence (its source in the tail language)."""
    return b"".join(_describe_item(item) for item in items).decode("latin-1")


def _describe_item(item: Item) -> bytes:
    if isinstance(item, Run) and item.lo != item.hi:
        return b"[" + item.cls + b"]{%d,%d}" % (item.lo, item.hi)
    if isinstance(item, Alt):
        return b"(?:" + b"|".join(b"".join(_describe_item(i) for i in branch) for branch in item.branches) + b")"
    return item_source(item)


def _item_prefix(item: Item) -> bytes:
    """Text that is a prefix (possibly empty, possibly whole) of what `item` matches."""
    if isinstance(item, Lit):
        out = b""
        for byte in reversed(item.text):
            out = b"(?:" + escape(bytes([byte])) + out + b")?"
        return out
    if isinstance(item, Run):
        return _run_source(item.cls, 0, item.hi) if item.hi > 1 else b"[" + item.cls + b"]?"
    return b"(?:" + b"|".join(_seq_prefix(branch, 0) for branch in item.branches) + b")"


def _seq_prefix(items: Seq, partial_from: int) -> bytes:
    branches = [seq_source(items[:index]) + _item_prefix(items[index]) for index in range(partial_from, len(items))]
    return b"(?:" + b"|".join(branches) + b")" if branches else b""


def prefix_pattern(items: Seq, partial_from: int = 0) -> Regex | None:
    """What text ending inside `items` looks like: a pattern that fully matches every prefix of a match of `items`
    that ends in item `partial_from` or later (None when no item can be cut). Used with `fullmatch` up to the end
    of input, after the whole pattern failed there."""
    source = _seq_prefix(items, partial_from)
    return Regex(source, deferred=True) if source else None


def _class_end(src: bytes, pos: int) -> int:
    """The index of the `]` closing the class whose `[` is at `pos - 1`."""
    index = pos + 1 if src[pos : pos + 1] == b"^" else pos
    if src[index : index + 1] == b"]":
        index += 1
    while index < len(src):
        if src[index : index + 1] == b"\\":
            index += 2
        elif src[index : index + 1] == b"]":
            return index
        else:
            index += 1
    raise PatternError(f"unclosed class in {src!r}")


def _quantifier(src: bytes, pos: int) -> tuple[int, int, int] | None:
    """`{n}` or `{m,n}` at `pos`: (low, high, end), None when no quantifier follows."""
    if src[pos : pos + 1] != b"{":
        return None
    close = src.find(b"}", pos)
    parts = src[pos + 1 : close].split(b",") if close > 0 else []
    if not 1 <= len(parts) <= 2 or not all(part.isdigit() and len(part) <= 5 for part in parts):
        raise PatternError(f"a repeat at {pos} needs {{n}} or {{m,n}} in {src!r}")
    low, high = int(parts[0]), int(parts[-1])
    if low > high:
        raise PatternError(f"repeat {{{low},{high}}} has its bounds reversed in {src!r}")
    if high > MAX_RUN_BOUND or (low != high and low > RE2_MAX_REPEAT):
        raise PatternError(f"repeat {{{low},{high}}} is over the bounds (at most {MAX_RUN_BOUND}, "
                           f"a lower bound at most {RE2_MAX_REPEAT}) in {src!r}")
    if src[close + 1 : close + 2] in (b"+", b"?", b"*"):
        raise PatternError(f"{src[close + 1 : close + 2].decode()!r} after a repeat at {close + 1} in {src!r}: RE2 has no "
                           "possessive or lazy repeats (write {m,n} for {m,n}+)")
    return low, high, close + 1


def _parse(src: bytes, pos: int, inside: bool) -> tuple[tuple[Seq, ...], int]:
    branches: list[Seq] = []
    items: list[Item] = []
    literal = bytearray()

    def flush() -> None:
        if literal:
            items.append(Lit(bytes(literal)))
            literal.clear()

    while pos < len(src):
        char = src[pos : pos + 1]
        if char == b"[":
            flush()
            end = _class_end(src, pos + 1)
            cls = src[pos + 1 : end]
            pos = end + 1
            quant = _quantifier(src, pos)
            if quant is None:
                items.append(Run(cls, 1, 1))
            else:
                low, high, pos = quant
                items.append(Run(cls, low, high))
        elif src.startswith(b"(?:", pos):
            flush()
            group, pos = _parse(src, pos + 3, True)
            items.append(Alt(group))
        elif char in (b"|", b")") and inside:
            flush()
            branches.append(tuple(items))
            items = []
            pos += 1
            if char == b")":
                return tuple(branches), pos
        elif char == b"\\" and pos + 1 < len(src):
            literal += src[pos + 1 : pos + 2]
            pos += 2
        elif char in b"()|{}*+?^$.":
            raise PatternError(f"{char.decode('latin-1')!r} at {pos} is outside the tail language in {src!r} "
                               "(escape it, or use a [class] run with {n} or {m,n})")
        else:
            literal += char
            pos += 1
    if inside:
        raise PatternError(f"unclosed group in {src!r}")
    flush()
    return (tuple(items),), pos


def parse_seq(src: bytes, check: bool = True) -> Seq:
    """The sequence a tail or value run names: literals, `[class]` / `[class]{n}` / `[class]{m,n}`, `(?:a|b|)`.

    With `check`, its RE2 form is compiled once to prove RE2 runs it.
    """
    branches, _ = _parse(src, 0, False)
    items = branches[0]
    if check:
        Regex(seq_source(items))
    return items
