"""Stream segments (docs/investigate.md §3.1): naming, tree listings, line splitting and filling under the limits."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from harness.errors import UpstreamUnavailable
from harness.text.sanitize import sanitize_field

DEFAULT_MAX_RECORDS = 20_000
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
_SEGMENT = re.compile(r"(\d{8})\.jsonl")


def segment_path(stream: str, number: int) -> str:
    """`<stream>/<NNNNNNNN>.jsonl`."""
    return f"{stream}/{number:08d}.jsonl"


def corrupt(where: str, problem: str, line: int | None = None) -> UpstreamUnavailable:
    """`store corrupt: <stream>/<segment> line <n>: <problem>` (the line part only when one is known)."""
    at = f"{where} line {line}" if line is not None else where
    return UpstreamUnavailable(f"store corrupt: {at}: {problem}")


@dataclass(frozen=True)
class Segment:
    """One committed segment file of a stream."""

    stream: str
    number: int
    blob: str
    size: int

    @property
    def path(self) -> str:
        return segment_path(self.stream, self.number)


@dataclass(frozen=True)
class Limits:
    """Segment limits: a record that would push a segment over either starts the next one."""

    max_records: int = DEFAULT_MAX_RECORDS
    max_bytes: int = DEFAULT_MAX_BYTES


def parse_listing(streams: Iterable[str], listing: bytes) -> dict[str, list[Segment]]:
    """Segments per stream from `ls-tree -r -l -z <commit> -- <streams>`, checked for stray entries and gaps."""
    wanted = set(streams)
    found: dict[str, list[Segment]] = {name: [] for name in wanted}
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        path = raw_path.decode("utf-8", "replace")
        stream, slash, name = path.partition("/")
        if stream not in wanted:
            continue
        mode, kind, blob, size = meta.split()
        match = _SEGMENT.fullmatch(name) if slash else None
        if match is None or kind != b"blob" or mode != b"100644" or "/" in name:
            raise corrupt(sanitize_field(path), "unexpected entry (not a segment file)")
        found[stream].append(Segment(stream, int(match[1]), blob.decode("ascii"), int(size)))
    for stream, segments in found.items():
        segments.sort(key=lambda segment: segment.number)
        for expected, segment in enumerate(segments, start=1):
            if segment.number != expected:
                raise corrupt(segment.path, f"segment numbering gap (expected {segment_path(stream, expected)})")
    return found


def split_lines(where: str, data: bytes, first_line: int = 1) -> list[bytes]:
    """The lines of segment bytes, split on 0x0A only; the data must be non-empty and end with a newline."""
    if not data:
        raise corrupt(where, "empty segment")
    lines = data.split(b"\n")
    if lines[-1]:
        raise corrupt(where, "missing final newline", first_line + len(lines) - 1)
    lines.pop()
    return lines


@dataclass(frozen=True)
class SegmentWrite:
    """A segment as an append leaves it: its full bytes and line count."""

    number: int
    data: bytes
    lines: int

    def meta(self, blob: str) -> SegmentMeta:
        """What the index records of this segment once its blob is written."""
        return SegmentMeta(self.number, blob, len(self.data), self.lines, hashlib.sha256(self.data).hexdigest())


@dataclass(frozen=True)
class SegmentMeta:
    """An indexed segment: number, blob id, byte length, line count and sha256 of its bytes."""

    number: int
    blob: str
    length: int
    lines: int
    sha256: str


def fill(
    last: Segment | None, last_data: bytes, lines: Iterable[bytes], limits: Limits
) -> Iterator[SegmentWrite]:
    """The segments an append rewrites or creates: the last one grown up to the limits, then new ones.

    Only the last existing segment is rewritten, so an append costs O(new records + one segment).
    An empty segment always takes its first record, so one oversized record gets its own segment.
    """
    number = last.number if last is not None else 1
    buffer = bytearray(last_data)
    count = last_data.count(b"\n")
    dirty = False
    for line in lines:
        if count and (count + 1 > limits.max_records or len(buffer) + len(line) + 1 > limits.max_bytes):
            if dirty:
                yield SegmentWrite(number, bytes(buffer), count)
            number += 1
            buffer = bytearray()
            count = 0
        buffer += line
        buffer += b"\n"
        count += 1
        dirty = True
    if dirty:
        yield SegmentWrite(number, bytes(buffer), count)
