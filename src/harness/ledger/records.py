"""Value types the ledger store returns (docs/ledger.md §9, docs/ledger.md §12)."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable

from harness.ledger.model import LedgerRow

Clock = Callable[[], datetime.datetime]


@dataclasses.dataclass(frozen=True)
class InsertResult:
    """`inserted` is False when the key already held a row with another id (the stored row is returned)."""

    inserted: bool
    row: LedgerRow


@dataclasses.dataclass(frozen=True)
class Reservation:
    """`owned` means this call wrote the start and owns the execution; otherwise `start`/`end` are for replay."""

    owned: bool
    start: LedgerRow
    end: LedgerRow | None


@dataclasses.dataclass(frozen=True)
class Head:
    """A conversation's last chain position."""

    conversation_id: str
    chain_seq: int
    row_hash: bytes


@dataclasses.dataclass(frozen=True)
class Tombstone:
    """The record a conversation deletion leaves (final_* are None for a conversation without rows)."""

    id: int
    conversation_id: str
    deleted_at: datetime.datetime
    deleted_by: str | None
    row_count: int
    final_chain_seq: int | None
    final_row_hash: bytes | None


@dataclasses.dataclass(frozen=True)
class ConversationInfo:
    """A row of `conversations`."""

    id: str
    created_at: datetime.datetime


@dataclasses.dataclass(frozen=True)
class ConversationSummary:
    """A conversation with its call count, last chain position and last row time (`ledger list --conversations`)."""

    id: str
    created_at: datetime.datetime
    calls: int
    last_chain_seq: int | None
    last_ts: datetime.datetime | None


@dataclasses.dataclass(frozen=True)
class Call:
    """A start joined with its end, if any (`ledger list`); status is ok, error or in_flight."""

    conversation_id: str
    request_id: str
    tool_call_id: str
    tool_name: str
    seq: int
    started_at: datetime.datetime
    ended_at: datetime.datetime | None
    duration_ms: int | None
    status: str
    error: str | None
    exit_code: int | None
    result_bytes: int | None
    result_truncated: bool | None
    # The start row's meta.caller.principal; empty for rows written before callers were recorded.
    principal: str = ""


@dataclasses.dataclass(frozen=True)
class CallFilter:
    """Filters of `ledger list`; times compare with the start row's started_at (since inclusive, until exclusive)."""

    conversation_id: str | None = None
    tool_name: str | None = None
    status: str | None = None
    since: datetime.datetime | None = None
    until: datetime.datetime | None = None
    in_flight_before: datetime.datetime | None = None
    principal: str | None = None
