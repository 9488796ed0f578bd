"""The hash chain, version 1 (docs/ledger.md §8.1): a typed, length-prefixed encoding of a row's 25 fields, hashed."""

from __future__ import annotations

import datetime
import hashlib
import struct
import uuid
from collections.abc import Callable, Sequence
from typing import Any

CHAIN_VERSION = 1
TAG = b"triage-harness.ledger.row"
ZERO_HASH = bytes(32)

# (field, kind) in hashing order; the kinds are the encoding tags below.
FIELDS: tuple[tuple[str, str], ...] = (
    ("id", "uuid"),
    ("conversation_id", "text"),
    ("request_id", "text"),
    ("tool_call_id", "text"),
    ("tool_name", "text"),
    ("event", "text"),
    ("seq", "int"),
    ("ts", "timestamp"),
    ("started_at", "timestamp"),
    ("ended_at", "timestamp"),
    ("duration_ms", "int"),
    ("arguments", "text"),
    ("args_bytes", "int"),
    ("status", "text"),
    ("error", "text"),
    ("result_preview", "text"),
    ("preview_bytes", "int"),
    ("result_bytes", "int"),
    ("result_truncated", "bool"),
    ("result_sidecar_path", "text"),
    ("exit_code", "int"),
    ("meta", "json"),
    ("redaction_version", "int"),
    ("chain_seq", "int"),
    ("prev_hash", "bytes"),
)
FIELD_NAMES: tuple[str, ...] = tuple(name for name, _ in FIELDS)

_HEADER = struct.pack(">H", len(TAG)) + TAG + struct.pack(">HH", CHAIN_VERSION, len(FIELDS))
_NULL = b"\x00"
_TRUE = b"\x03\x01"
_FALSE = b"\x03\x00"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_TAGGED_LEN = struct.Struct(">BI").pack
_TAGGED_I64 = struct.Struct(">Bq").pack


def _text(value: str) -> bytes:
    data = value.encode("utf-8")
    return _TAGGED_LEN(0x01, len(data)) + data


def _int(value: int) -> bytes:
    return _TAGGED_I64(0x02, value)


def _bool(value: bool) -> bytes:
    return _TRUE if value else _FALSE


def timestamp_micros(value: datetime.datetime) -> int:
    """Microseconds since 1970-01-01T00:00:00Z of an aware datetime."""
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _timestamp(value: datetime.datetime) -> bytes:
    return _TAGGED_I64(0x04, timestamp_micros(value))


def _bytes(value: bytes) -> bytes:
    return _TAGGED_LEN(0x05, len(value)) + value


def _uuid(value: uuid.UUID) -> bytes:
    return b"\x06" + value.bytes


def _json(value: str) -> bytes:
    # The caller passes canonical JSON text (docs/ledger.md §5), never a parsed object.
    data = value.encode("utf-8")
    return _TAGGED_LEN(0x07, len(data)) + data


_ENCODERS: dict[str, Callable[[Any], bytes]] = {
    "text": _text,
    "int": _int,
    "bool": _bool,
    "timestamp": _timestamp,
    "bytes": _bytes,
    "uuid": _uuid,
    "json": _json,
}
_FIELD_ENCODERS: tuple[Callable[[Any], bytes], ...] = tuple(_ENCODERS[kind] for _, kind in FIELDS)


def encode_values(values: Sequence[Any]) -> bytes:
    """The chain-v1 preimage of a row given as its 25 field values in FIELD_NAMES order."""
    if len(values) != len(FIELDS):
        raise ValueError(f"a chain-v1 row has {len(FIELDS)} fields, got {len(values)}")
    parts = [_HEADER]
    append = parts.append
    for encode, value in zip(_FIELD_ENCODERS, values):
        append(_NULL if value is None else encode(value))
    return b"".join(parts)


def hash_values(values: Sequence[Any]) -> bytes:
    """SHA-256 of `encode_values(values)`: the row_hash."""
    return hashlib.sha256(encode_values(values)).digest()
