"""PostgreSQL write retries (ledger.md §8.2, §10): a writer that bypasses the lock, and a connection lost at COMMIT.

The store's hasher runs after the probes and before the insert, which is exactly the window a racing writer or a
dropped connection hits; a hasher that acts once in that window drives each path against a real server.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from ledger_support import FakeClock, PgLedger

from harness.ledger import chain, ids
from harness.ledger.dialect import ROW_COLUMNS
from harness.ledger.model import LedgerEvent, build_row, prepare
from harness.ledger.postgres import DIALECT, PostgresStore, open_postgres_store
from harness.ledger.settings import LedgerSettings
from harness.text.redact import RULESET_VERSION, Redactor

pytestmark = pytest.mark.pg


def _store(pg: PgLedger, redactor: Redactor, hasher: Callable[[tuple[Any, ...]], bytes]) -> PostgresStore:
    return open_postgres_store(
        pg.dsn,
        redactor=redactor,
        clock=FakeClock(),
        settings=LedgerSettings(pool_max=1),
        redaction_version=RULESET_VERSION,
        hasher=hasher,
    )


class _Once:
    """A hasher that runs `action` on its first call only, and counts its calls (one per attempt and row)."""

    def __init__(self, action: Callable[[], None]) -> None:
        self.action: Callable[[], None] | None = action
        self.calls = 0

    def __call__(self, values: tuple[Any, ...]) -> bytes:
        self.calls += 1
        if self.action is not None:
            action, self.action = self.action, None
            action()
        return chain.hash_values(values)


def _foreign_insert(pg: PgLedger, redactor: Redactor, event: LedgerEvent, *, chain_seq: int, prev_hash: bytes) -> bytes:
    """Commit a row (and its conversation) the way a writer that ignores the advisory lock would; returns its hash."""
    row = build_row(
        prepare(event, redactor, redaction_version=RULESET_VERSION, now=datetime.datetime.now(datetime.UTC)),
        seq=chain_seq,
        chain_seq=chain_seq,
        prev_hash=prev_hash,
    )
    with psycopg.connect(pg.admin_dsn) as conn:
        conn.execute(
            "INSERT INTO ledger.conversations (id, created_at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (row.conversation_id, row.ts),
        )
        columns = ", ".join(ROW_COLUMNS)
        values = ", ".join("%s::jsonb" if c == "meta" else "%s" for c in ROW_COLUMNS)
        conn.execute(f"INSERT INTO ledger.tool_invocations ({columns}) VALUES ({values})", DIALECT.row_params(row))
    return row.row_hash


def _start(call: str) -> LedgerEvent:
    return LedgerEvent("conv-r", call, call, "search_events", "start")


def test_a_chain_seq_race_is_retried_with_a_fresh_head(pg_ledger: PgLedger, redactor: Redactor) -> None:
    seeded = _store(pg_ledger, redactor, chain.hash_values)
    head = seeded.insert(_start("first")).row
    seeded.close()
    foreign: list[bytes] = []

    def race() -> None:
        foreign.append(_foreign_insert(pg_ledger, redactor, _start("foreign"), chain_seq=2, prev_hash=head.row_hash))

    hasher = _Once(race)
    store = _store(pg_ledger, redactor, hasher)
    result = store.insert(_start("ours"))
    assert result.inserted and result.row.chain_seq == 3 and result.row.prev_hash == foreign[0]
    assert [r.tool_call_id for r in store.list_by_conversation("conv-r")] == ["first", "foreign", "ours"]
    assert hasher.calls == 2
    store.close()


def test_a_call_key_race_in_a_new_conversation_returns_the_stored_row(pg_ledger: PgLedger, redactor: Redactor) -> None:
    def race() -> None:
        _foreign_insert(pg_ledger, redactor, _start("same"), chain_seq=1, prev_hash=chain.ZERO_HASH)

    hasher = _Once(race)
    store = _store(pg_ledger, redactor, hasher)
    ours = _start("same")
    result = store.insert(LedgerEvent(**{**ours.__dict__, "id": ids.uuid7()}))
    assert not result.inserted and result.row.tool_call_id == "same"
    assert len(store.list_by_conversation("conv-r")) == 1 and hasher.calls == 1
    store.close()


def test_a_connection_lost_before_commit_is_retried_on_a_new_connection(
    pg_ledger: PgLedger, redactor: Redactor
) -> None:
    def drop_connection() -> None:
        with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = 'triage-harness' AND state <> 'idle'"
            )

    hasher = _Once(drop_connection)
    store = _store(pg_ledger, redactor, hasher)
    row_id = ids.uuid7()
    result = store.insert(LedgerEvent("conv-r", "1", "k", "search_events", "start", id=row_id))
    assert result.inserted and result.row.id == row_id
    assert [r.id for r in store.list_by_conversation("conv-r")] == [row_id] and hasher.calls == 2
    store.close()
