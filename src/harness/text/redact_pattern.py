"""A tiny pattern language for secret shapes: literals, bounded possessive runs and alternatives.

One description gives both the stdlib `re` source (the reference matcher) and a walker that tells
whether input ending mid-pattern could still be that shape, so values cut by a cap are redacted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Lit:
    """Literal bytes."""

    text: bytes


@dataclass(frozen=True)
class Run:
    """`[cls]{lo,hi}+`: a possessive run of one byte class (`cls` in regex class syntax, no brackets)."""

    cls: bytes
    lo: int
    hi: int


@dataclass(frozen=True)
class Alt:
    """Alternative sequences tried in order; an empty sequence makes the group optional."""

    branches: tuple[tuple[Item, ...], ...]


Item = Lit | Run | Alt
Seq = tuple[Item, ...]


def item_source(item: Item) -> bytes:
    """The regex source of one item."""
    if isinstance(item, Lit):
        return re.escape(item.text)
    if isinstance(item, Run):
        cls = b"[" + item.cls + b"]"
        if item.lo == item.hi:
            return cls if item.lo == 1 else cls + b"{%d}" % item.lo
        return cls + b"{%d,%d}+" % (item.lo, item.hi)
    return b"(?:" + b"|".join(seq_source(branch) for branch in item.branches) + b")"


def seq_source(items: Seq) -> bytes:
    """The regex source of a sequence."""
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
    """Canonical text of a sequence (its regex source)."""
    return seq_source(items).decode("latin-1")


_RUN_CACHE: dict[tuple[bytes, int], re.Pattern[bytes]] = {}


def _run_re(run: Run) -> re.Pattern[bytes]:
    key = (run.cls, run.hi)
    pattern = _RUN_CACHE.get(key)
    if pattern is None:
        pattern = _RUN_CACHE[key] = re.compile(b"[" + run.cls + b"]{0,%d}+" % run.hi)
    return pattern


_EOI = -1
_FAIL = -2


def _walk(buf: bytes, pos: int, items: Seq, partial_from: int) -> int:
    """Match `items` at `pos`: the end position, _FAIL, or _EOI when input ends inside item >= partial_from."""
    end = len(buf)
    for index, item in enumerate(items):
        eoi_counts = index >= partial_from
        if isinstance(item, Lit):
            size = min(len(item.text), end - pos)
            if buf[pos : pos + size] != item.text[:size]:
                return _FAIL
            if size < len(item.text):
                return _EOI if eoi_counts else _FAIL
            pos += size
        elif isinstance(item, Run):
            stop = _run_re(item).match(buf, pos).end()  # type: ignore[union-attr]
            if stop == end and stop - pos < item.hi:
                return _EOI if eoi_counts else _FAIL
            if stop - pos < item.lo:
                return _FAIL
            pos = stop
        else:
            for branch in item.branches:
                result = _walk(buf, pos, branch, 0 if eoi_counts else len(branch))
                if result == _EOI or result >= 0:
                    break
            else:
                return _FAIL
            if result == _EOI:
                return _EOI
            pos = result
    return pos


def ends_inside(buf: bytes, pos: int, items: Seq, partial_from: int = 0) -> bool:
    """Whether input ends while `items` still match from `pos` (at least one byte consumed)."""
    return len(buf) > pos and _walk(buf, pos, items, partial_from) == _EOI


def byte_set(cls: bytes) -> frozenset[int]:
    """The byte values a regex class (no brackets) accepts."""
    pattern = re.compile(b"[" + cls + b"]")
    return frozenset(value for value in range(256) if pattern.fullmatch(bytes([value])))


class PatternError(ValueError):
    """A tail or value run outside the pattern language (literals, `[class]` runs, `(?:a|b|)` groups)."""


def _class_end(src: bytes, pos: int) -> int:
    """The index of the `]` closing the class whose `[` is at `pos - 1`."""
    index = pos + 1 if src[pos : pos + 1] in (b"]", b"^") else pos
    while index < len(src):
        if src[index : index + 1] == b"\\":
            index += 2
        elif src[index : index + 1] == b"]":
            return index
        else:
            index += 1
    raise PatternError(f"unclosed class in {src!r}")


_QUANT = re.compile(rb"\{([0-9]{1,5})\}|\{([0-9]{1,5}),([0-9]{1,5})\}\+")


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
            quant = _QUANT.match(src, pos)
            if quant is None:
                items.append(Run(cls, 1, 1))
            elif quant.group(1) is not None:
                items.append(Run(cls, int(quant.group(1)), int(quant.group(1))))
                pos = quant.end()
            else:
                low, high = int(quant.group(2)), int(quant.group(3))
                if low > high:
                    raise PatternError(f"repeat {{{low},{high}}} has its bounds reversed in {src!r}")
                items.append(Run(cls, low, high))
                pos = quant.end()
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
            raise PatternError(f"{char.decode('latin-1')!r} at {pos} is outside the pattern language in {src!r} "
                               "(escape it, or use a [class] run with {n} or a possessive {m,n}+)")
        else:
            literal += char
            pos += 1
    if inside:
        raise PatternError(f"unclosed group in {src!r}")
    flush()
    return (tuple(items),), pos


def parse_seq(src: bytes) -> Seq:
    """The sequence a tail or value run names: literals, `[class]` / `[class]{n}` / `[class]{m,n}+`, `(?:a|b|)`.

    `seq_source(parse_seq(s))` is the regex the engine compiles; every ranged run is possessive.
    """
    branches, _ = _parse(src, 0, False)
    return branches[0]
