"""The ledger store API (docs/ledger.md §9): the LedgerStore and Snapshot protocols, the errors and `open_store`."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from harness.ledger.browse import ConversationFilter, ConversationRow, PageKey
from harness.ledger.catalog import SchemaObject
from harness.ledger.errors import LedgerBackendError, LedgerError, LedgerIntegrityError, LedgerValueError
from harness.ledger.model import LedgerEvent, LedgerRow
from harness.ledger.records import (
    Call,
    CallFilter,
    Clock,
    ConversationInfo,
    ConversationSummary,
    Head,
    InsertResult,
    Reservation,
    Tombstone,
)
from harness.ledger.redaction_boundary import LedgerRedactor
from harness.ledger.settings import LedgerSettings, is_postgres_target
from harness.ledger.sqlite import open_sqlite_store
from harness.ledger.tail import Position
from harness.text import redact

__all__ = [
    "Call",
    "CallFilter",
    "Clock",
    "ConversationInfo",
    "ConversationSummary",
    "Head",
    "InsertResult",
    "LedgerError",
    "LedgerIntegrityError",
    "LedgerBackendError",
    "LedgerValueError",
    "Reservation",
    "Snapshot",
    "LedgerStore",
    "Tombstone",
    "open_store",
]


class Snapshot(Protocol):
    """One consistent read view of the ledger (SQLite read transaction; PostgreSQL REPEATABLE READ READ ONLY)."""

    def conversations(self, conversation_ids: Sequence[str] | None = None) -> list[ConversationInfo]: ...

    def conversation_summaries(self, conversation_id: str | None, limit: int) -> list[ConversationSummary]: ...

    def count_rows(self, conversation_id: str) -> int: ...

    def row_by_key(self, key: tuple[str, str, str, str]) -> LedgerRow | None: ...

    def rows(
        self,
        conversation_ids: Sequence[str] | None = None,
        since: datetime.datetime | None = None,
        until: datetime.datetime | None = None,
    ) -> Iterator[LedgerRow]: ...

    def conversation_rows(
        self,
        conversation_id: str,
        *,
        after_chain_seq: int = 0,
        tool_call_id: str | None = None,
        limit: int | None = None,
    ) -> list[LedgerRow]: ...

    def in_flight_before(self, cutoff: datetime.datetime, limit: int) -> list[LedgerRow]: ...

    def open_calls(self, conversation_ids: Sequence[str] | None = None) -> set[tuple[str, str, str]]: ...

    def sidecar(self, end_id: uuid.UUID) -> str | None: ...

    def count_sidecars(self) -> int: ...

    def unstored_sidecars(self) -> list[LedgerRow]: ...

    def tail_rows(
        self, after: Position | None, since: datetime.datetime | None, limit: int
    ) -> list[tuple[Position, LedgerRow]]: ...

    def heads(self, conversation_id: str | None = None) -> list[Head]: ...

    def tombstones(self) -> list[Tombstone]: ...

    def catalog(self) -> frozenset[SchemaObject]: ...

    def calls(self, where: CallFilter, limit: int) -> list[Call]: ...

    def conversation_page(
        self, where: ConversationFilter, after: PageKey | None, limit: int
    ) -> list[ConversationRow]: ...


class LedgerStore(Protocol):
    """An open ledger. Thread-safe; every write runs `prepare` (docs/ledger.md §5) first."""

    backend: str

    def insert(self, event: LedgerEvent) -> InsertResult: ...

    def insert_many(self, events: Sequence[LedgerEvent]) -> list[InsertResult]: ...

    def reserve(self, start_event: LedgerEvent) -> Reservation: ...

    def get_end(self, conversation_id: str, request_id: str, tool_call_id: str) -> LedgerRow | None: ...

    def list_by_conversation(
        self, conversation_id: str, *, after_chain_seq: int = 0, limit: int | None = None
    ) -> list[LedgerRow]: ...

    def list_in_flight_before(self, cutoff: datetime.datetime, *, limit: int = 1000) -> list[LedgerRow]: ...

    def heads(self, conversation_id: str | None = None) -> list[Head]: ...

    def iter_rows(
        self,
        conversation_ids: Sequence[str] | None = None,
        since: datetime.datetime | None = None,
        until: datetime.datetime | None = None,
    ) -> Iterator[LedgerRow]: ...

    def tombstones(self) -> list[Tombstone]: ...

    def add_sidecars(self, results: Sequence[tuple[uuid.UUID, str]]) -> int: ...

    def schema_version(self) -> int: ...

    def expected_catalog(self) -> frozenset[SchemaObject]: ...

    def snapshot(self) -> AbstractContextManager[Snapshot]: ...

    def close(self) -> None: ...


def open_store(
    target: str | Path,
    *,
    redactor: LedgerRedactor,
    clock: Clock,
    settings: LedgerSettings,
    create: bool = True,
) -> LedgerStore:
    """Open a SQLite path or a `postgresql://` DSN.

    `create=False` opens for reading only: a missing SQLite file reads as an empty ledger and is never created.
    """
    version = redact.RULESET_VERSION
    if isinstance(target, str) and is_postgres_target(target):
        # Imported here: psycopg costs ~0.1 s of start-up that a SQLite CLI call never needs.
        from harness.ledger.postgres import open_postgres_store

        return open_postgres_store(
            target, redactor=redactor, clock=clock, settings=settings, redaction_version=version, readonly=not create
        )
    return open_sqlite_store(
        Path(target), redactor=redactor, clock=clock, settings=settings, redaction_version=version, create=create
    )
