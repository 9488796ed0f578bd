"""Reading committed streams (docs/investigate.md §3.4): blobs only, split on 0x0A, every line checked."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from harness.store.git import Git
from harness.store.models import RecordError
from harness.store.segments import Segment, corrupt, parse_listing, split_lines
from harness.store.streams import StreamSpec, decode_line, record_key
from harness.text.sanitize import echo


def list_segments(git: Git, commit: str, streams: Sequence[str]) -> dict[str, list[Segment]]:
    """The segments of each stream at `commit` ("" or a missing stream directory: none)."""
    if not commit:
        return {name: [] for name in streams}
    return parse_listing(streams, git.run("ls-tree", "-r", "-l", "-z", commit, "--", *streams))


def segment_records(
    spec: StreamSpec, where: str, data: bytes, first_line: int = 1
) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """(line number, line, record) for each line of segment bytes; a bad line is `store corrupt`."""
    for offset, line in enumerate(split_lines(where, data, first_line)):
        number = first_line + offset
        try:
            record = decode_line(spec, line)
        except RecordError as exc:
            raise corrupt(where, str(exc), number) from exc
        yield number, line, record


def duplicate_id(where: str, line: int, record_id: str) -> Exception:
    """The corruption error for an id stored twice (ignoring case)."""
    return corrupt(where, f"id {echo(record_id)} is stored more than once (ignoring case)", line)


def read_stream(git: Git, commit: str, spec: StreamSpec) -> list[dict[str, Any]]:
    """Every record of one stream at `commit`, in stream order, fully checked (the replay path)."""
    segments = list_segments(git, commit, [spec.name])[spec.name]
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    with git.blobs() as blobs:
        for segment in segments:
            for number, _, record in segment_records(spec, segment.path, blobs.read(segment.blob)):
                if spec.keyed:
                    key = record_key(spec, record)
                    if key in seen:
                        raise duplicate_id(segment.path, number, record["id"])
                    seen.add(key)
                records.append(record)
    return records
