"""The stream registry (docs/investigate.md §3.1): each stream's record model, line cap and duplicate rule."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from harness.errors import InternalError
from harness.store.baseline_model import decode_baseline
from harness.store.models import RecordError, decode_event, decode_finding, encode_json
from harness.store.resolution_model import STREAM as RESOLUTIONS
from harness.store.resolution_model import decode_resolution
from harness.text.canonjson import StrictJSONError, loads_strict

MIB = 1 << 20
BASELINE_MAX_LINE_BYTES = 512 * MIB
_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


@dataclass(frozen=True)
class StreamSpec:
    """One stream: `keyed` streams hold records with a unique id (ignoring case) and the id-resolution
    rules of docs/investigate.md §8 named by `id_rules`; the others hold whole documents, and appending one
    equal to the stream's last record is a duplicate."""

    name: str
    decode: Callable[[Any], dict[str, Any]]
    max_line_bytes: int
    keyed: bool
    id_rules: Literal["event", "finding", ""] = ""


STREAMS: dict[str, StreamSpec] = {
    spec.name: spec
    for spec in (
        StreamSpec("events", decode_event, MIB, keyed=True, id_rules="event"),
        StreamSpec("findings", decode_finding, MIB, keyed=True, id_rules="finding"),
        # A baseline is one record: a million events make it 137 MB (a relationship per actor and target). Reads
        # go through the baseline index (store/baseline_index.py), so its size costs the build, not each call;
        # the cap stays under SQLite's 1,000,000,000-byte value limit, as the read index stores the line.
        StreamSpec("baseline", decode_baseline, BASELINE_MAX_LINE_BYTES, keyed=False),
        # resolve_finding's proposals and checks (docs/investigate.md §9.7): append-only, the only stream an
        # investigate operation writes.
        StreamSpec(RESOLUTIONS, decode_resolution, MIB, keyed=False),
    )
}


def stream_spec(name: str) -> StreamSpec:
    """The registry entry of `name`; any other name is a bug."""
    if not _NAME.fullmatch(name) or name not in STREAMS:
        raise InternalError(f"unknown store stream {name!r}")
    return STREAMS[name]


def record_key(spec: StreamSpec, record: dict[str, Any]) -> str:
    """The duplicate key of a decoded record: its lower-cased id, or "" for unkeyed streams."""
    return str(record["id"]).lower() if spec.keyed else ""


def encode_record(spec: StreamSpec, obj: Any) -> tuple[dict[str, Any], bytes]:
    """Decode and validate `obj`, returning the stored record and its canonical line (without newline)."""
    record = spec.decode(obj)
    line = encode_json("record", record)
    if len(line) > spec.max_line_bytes:
        raise RecordError(f"the encoded record is {len(line)} bytes, over the {spec.max_line_bytes}-byte line cap")
    return record, line


def decode_line(spec: StreamSpec, line: bytes) -> dict[str, Any]:
    """Decode one stored line; it must be a valid record whose canonical encoding is the line itself."""
    try:
        obj = loads_strict(line)
    except StrictJSONError as exc:
        raise RecordError(str(exc)) from exc
    record, encoded = encode_record(spec, obj)
    if encoded != line:
        raise RecordError("the line is not the canonical encoding of its record")
    return record
