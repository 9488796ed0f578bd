"""Ledger events and rows (docs/ledger.md §4) and the chain step `build_row`; the redaction boundary that
turns an event into a row is harness.ledger.redaction_boundary. Pure, no database."""

from __future__ import annotations

import dataclasses
import datetime
import json
import operator
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from harness.ledger import chain


@dataclasses.dataclass(frozen=True)
class LedgerEvent:
    """The write input: raw text from the caller; the store redacts, caps, sequences and chains it."""

    conversation_id: str
    request_id: str
    tool_call_id: str
    tool_name: str
    event: str
    id: uuid.UUID | None = None
    ts: datetime.datetime | None = None
    started_at: datetime.datetime | None = None
    ended_at: datetime.datetime | None = None
    duration_ms: int | None = None
    arguments: str | None = None
    status: str | None = None
    error: str | None = None
    result_preview: str | None = None
    result_bytes: int | None = None
    result_truncated: bool = False
    result_sidecar_path: str | None = None
    exit_code: int | None = None
    meta: Mapping[str, Any] | None = None
    # The full result of an end row over the preview cap, raw: the store redacts and caps it, names it in
    # result_sidecar_path, describes it in meta and stores it with the row (docs/ledger.md §11.3).
    sidecar: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class PreparedRow:
    """An event after the boundary conversion: every caller-supplied column final, seq and chain still to come."""

    id: uuid.UUID
    conversation_id: str
    request_id: str
    tool_call_id: str
    tool_name: str
    event: str
    ts: datetime.datetime
    started_at: datetime.datetime | None
    ended_at: datetime.datetime | None
    duration_ms: int | None
    arguments: str | None
    args_bytes: int | None
    status: str | None
    error: str | None
    result_preview: str | None
    preview_bytes: int | None
    result_bytes: int | None
    result_truncated: bool | None
    result_sidecar_path: str | None
    exit_code: int | None
    meta: str | None
    redaction_version: int
    # The redacted, capped full result stored with the row (not a chained column: meta holds its size and hash).
    sidecar: str | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The idempotency key (conversation_id, request_id, tool_call_id, event)."""
        return (self.conversation_id, self.request_id, self.tool_call_id, self.event)


@dataclasses.dataclass(frozen=True, slots=True)
class LedgerRow:
    """A stored row: the 25 chained fields in chain order, then its row_hash."""

    id: uuid.UUID
    conversation_id: str
    request_id: str
    tool_call_id: str
    tool_name: str
    event: str
    seq: int
    ts: datetime.datetime
    started_at: datetime.datetime | None
    ended_at: datetime.datetime | None
    duration_ms: int | None
    arguments: str | None
    args_bytes: int | None
    status: str | None
    error: str | None
    result_preview: str | None
    preview_bytes: int | None
    result_bytes: int | None
    result_truncated: bool | None
    result_sidecar_path: str | None
    exit_code: int | None
    meta: str | None
    redaction_version: int
    chain_seq: int
    prev_hash: bytes
    row_hash: bytes

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The idempotency key (conversation_id, request_id, tool_call_id, event)."""
        return (self.conversation_id, self.request_id, self.tool_call_id, self.event)

    @property
    def meta_object(self) -> dict[str, Any] | None:
        """The meta column parsed back into an object (None when NULL)."""
        return None if self.meta is None else json.loads(self.meta)

    def chain_values(self) -> tuple[Any, ...]:
        """The 25 hashed field values in chain order."""
        return _CHAIN_GETTER(self)

    def to_json(self) -> dict[str, Any]:
        """The full-row object of `ledger show` and `export`: NULL as null, bytes as hex, 27-character timestamps."""
        out: dict[str, Any] = {}
        for field in _ROW_FIELDS:
            value = getattr(self, field)
            if value is None or isinstance(value, (str, int)):
                out[field] = value
            elif isinstance(value, datetime.datetime):
                out[field] = format_ts(value)
            elif isinstance(value, bytes):
                out[field] = value.hex()
            else:
                out[field] = str(value)
        out["meta"] = self.meta_object
        return out


_ROW_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(LedgerRow))
_CHAIN_GETTER: Callable[[LedgerRow], tuple[Any, ...]] = operator.attrgetter(*chain.FIELD_NAMES)


def format_ts(value: datetime.datetime) -> str:
    """The stored 27-character UTC form `YYYY-MM-DDTHH:MM:SS.ffffffZ` (sorts in time order)."""
    u = value if value.tzinfo is datetime.UTC else value.astimezone(datetime.UTC)
    # isoformat pads the year to four digits and, with this timespec, always writes six fraction digits.
    return u.isoformat(timespec="microseconds")[:-6] + "Z"


def parse_ts(text: str) -> datetime.datetime:
    """Inverse of `format_ts`."""
    return datetime.datetime.fromisoformat(text)


def build_row(
    prepared: PreparedRow,
    *,
    seq: int,
    chain_seq: int,
    prev_hash: bytes,
    hasher: Callable[[tuple[Any, ...]], bytes] = chain.hash_values,
) -> LedgerRow:
    """Complete a prepared row with its sequence numbers and chain link, and hash it."""
    values = (
        prepared.id,
        prepared.conversation_id,
        prepared.request_id,
        prepared.tool_call_id,
        prepared.tool_name,
        prepared.event,
        seq,
        prepared.ts,
        prepared.started_at,
        prepared.ended_at,
        prepared.duration_ms,
        prepared.arguments,
        prepared.args_bytes,
        prepared.status,
        prepared.error,
        prepared.result_preview,
        prepared.preview_bytes,
        prepared.result_bytes,
        prepared.result_truncated,
        prepared.result_sidecar_path,
        prepared.exit_code,
        prepared.meta,
        prepared.redaction_version,
        chain_seq,
        prev_hash,
    )
    return LedgerRow(*values, hasher(values))


def end_event(start: LedgerRow, **fields: Any) -> LedgerEvent:
    """An end event for a stored start: same ids and tool_name, started_at copied, the rest from `fields`."""
    return LedgerEvent(
        conversation_id=start.conversation_id,
        request_id=start.request_id,
        tool_call_id=start.tool_call_id,
        tool_name=start.tool_name,
        event="end",
        started_at=fields.pop("started_at", start.started_at),
        **fields,
    )
