"""`harness store copy --from SRC --to DST` (README "Moving the store to PostgreSQL"): every stream of one store
appended to another, git to PostgreSQL or back, in stream order.

Resumable: a destination already holding the first k records of a stream gets only the rest, in commits of
CHUNK records, so a copy stopped at any point is finished by running it again. At the end both sides are read
again and must agree on the count and the SHA-256 of every stream's canonical lines in stream order; a
destination that held something else fails that check and is reported, never "repaired".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from harness.errors import InvalidInput
from harness.store.backend import EventStore
from harness.store.streams import STREAMS, encode_record, record_key

CHUNK = 10_000


def _lines(store: EventStore, stream: str) -> Iterator[tuple[str, bytes]]:
    spec = STREAMS[stream]
    with store.snapshot() as view:
        for record in view.records(stream):
            encoded, line = encode_record(spec, record)
            yield record_key(spec, encoded), line


def digest(store: EventStore, stream: str) -> tuple[int, str]:
    """The number of records of a stream and the SHA-256 of their lines, each ending in a newline, in stream order."""
    hasher = hashlib.sha256()
    count = 0
    for _, line in _lines(store, stream):
        hasher.update(line + b"\n")
        count += 1
    return count, hasher.hexdigest()


def copy_store(source: EventStore, destination: EventStore) -> dict[str, Any]:
    """Copy what the destination lacks of every stream, then verify; the JSON report (`verified` false with the
    streams that differ when the destination held other records)."""
    destination.create()
    streams: dict[str, Any] = {}
    for stream in STREAMS:
        present, _ = digest(destination, stream)
        copied = 0
        chunk: list[tuple[str, bytes]] = []
        for position, entry in enumerate(_lines(source, stream)):
            if position < present:
                continue
            chunk.append(entry)
            if len(chunk) == CHUNK:
                copied += destination.append_encoded(stream, chunk).added
                chunk = []
        if chunk:
            copied += destination.append_encoded(stream, chunk).added
        streams[stream] = {"copied": copied, "present_before": present}
    mismatched = []
    for stream in STREAMS:
        want, got = digest(source, stream), digest(destination, stream)
        streams[stream].update(records=got[0], sha256=got[1])
        if want != got:
            mismatched.append(stream)
            streams[stream]["source_records"], streams[stream]["source_sha256"] = want
    return {"mismatched": mismatched, "statistics_warnings": destination.refresh_statistics(), "streams": streams,
            "verified": not mismatched}


def check_distinct(source: str, destination: str) -> None:
    """A copy onto itself is refused."""
    if source == destination:
        raise InvalidInput("--to: the destination is the source")
