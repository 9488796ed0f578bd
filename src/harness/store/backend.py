"""The one store interface the operations, ingest, pulls and baseline builds use, and the choice of backend: the
git store (the embedded default, store/store.py) or PostgreSQL (store/pg/, README "Moving the store to PostgreSQL")."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harness.errors import InvalidInput
from harness.store.append import AppendResult, EncodedBatch
from harness.store.query import StoreView

if TYPE_CHECKING:
    from harness.config import Settings


class EventStore(Protocol):
    """What callers need of a store. Reads go through `snapshot()` (one consistent commit per call, with id
    resolution and the newest baseline on the view); writes through `append_batch` / `append_encoded`, one
    all-or-nothing commit per batch with duplicates dropped or refused as docs/investigate.md §5 says."""

    backend: str

    def snapshot(self) -> AbstractContextManager[StoreView]:
        """One consistent view for a whole call."""

    def append_batch(self, stream: str, records: Iterable[Any]) -> AppendResult:
        """Validate, drop duplicates and append as one commit."""

    def append_encoded(
        self,
        stream: str,
        batch: EncodedBatch,
        *,
        checked_at: str | None = None,
        same: Callable[[bytes, bytes], bool] | None = None,
    ) -> AppendResult:
        """Append validated, encoded records as one commit (see append.append_encoded)."""

    def last_change(self, commit: str, stream: str) -> str:
        """The newest commit at or before `commit` that changed `stream`, or ""."""

    def head(self) -> str:
        """The newest commit, or "" for an empty store."""

    def local_index_path(self) -> Path | None:
        """The read index file on this machine that derived indexes (the baseline index) live beside, or None
        when there is none to write: a PostgreSQL store, or a git store whose index is held in memory."""

    def exists(self) -> bool:
        """Whether the store exists (a missing git store reads as empty)."""

    def create(self) -> None:
        """Create the store if the backend can (`harness init`)."""

    def refresh_statistics(self) -> list[str]:
        """Bring the backend's planner statistics up to date after a bulk append; its warnings."""

    def close(self) -> None:
        """Release connections."""


def open_event_store(settings: Settings, redact: Callable[[str], str]) -> EventStore:
    """The store `settings` name: PostgreSQL for a `[store] url` / `--store DSN` / HARNESS_STORE_URL, else the
    git store at the store path. Opening a PostgreSQL store checks its schema version (never migrating)."""
    if not settings.store_url:
        from harness.store.store import Store

        return Store(settings.store_path, index_path=settings.index_path)
    from harness.store.pg.store import open_pg_store

    return open_pg_store(
        settings.store_url, connect=pg_connect_kwargs(settings), pool_max=settings.get("store", "pool_max"), redact=redact
    )


def open_target(target: str, settings: Settings, redact: Callable[[str], str]) -> EventStore:
    """A store named on the command line (`store copy`): a postgresql:// DSN, or a git store directory."""
    from harness.ledger.settings import CONNINFO_REFUSED, is_conninfo, is_postgres_target

    if is_conninfo(target):
        raise InvalidInput(CONNINFO_REFUSED)
    if not is_postgres_target(target):
        from harness.store.store import Store

        return Store(Path(target).expanduser().resolve())
    from harness.store.pg.store import open_pg_store

    return open_pg_store(
        target, connect=pg_connect_kwargs(settings), pool_max=settings.get("store", "pool_max"), redact=redact
    )


def pg_connect_kwargs(settings: Settings) -> dict[str, Any]:
    """The keywords of every PostgreSQL store connection: the ledger's session settings with the `[store]` limits."""
    from harness.ledger.postgres import connection_kwargs
    from harness.ledger.settings import LedgerSettings

    limits = {key: settings.get("store", key) for key in ("connect_timeout_s", "statement_timeout_ms", "lock_timeout_ms")}
    return connection_kwargs(LedgerSettings(**limits))
