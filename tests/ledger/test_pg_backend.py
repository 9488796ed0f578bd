"""PostgreSQL write retries (docs/ledger.md §8.2, docs/ledger.md §10): a writer that bypasses the lock, and a connection lost at COMMIT.

The store's hasher runs after the probes and before the insert, which is exactly the window a racing writer or a
dropped connection hits; a hasher that acts once in that window drives each path against a real server.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from ledger_support import FakeClock, PgLedger
from psycopg import sql as psql

from harness.ledger import chain, ids
from harness.ledger.dialect import ROW_COLUMNS
from harness.ledger.model import LedgerEvent, build_row, end_event
from harness.ledger.postgres import DIALECT, PostgresStore, connection_kwargs, open_postgres_store
from harness.ledger.redaction_boundary import prepare
from harness.ledger.settings import LedgerSettings
from harness.ledger.verify import verify
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
    """A hasher that runs `action` on its `at`-th call only, and counts its calls (one per attempt and row)."""

    def __init__(self, action: Callable[[], None], at: int = 1) -> None:
        self.action: Callable[[], None] | None = action
        self.at = at
        self.calls = 0

    def __call__(self, values: tuple[Any, ...]) -> bytes:
        self.calls += 1
        if self.action is not None and self.calls == self.at:
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


def test_a_stale_guess_leaves_the_full_path_its_retry(pg_ledger: PgLedger, redactor: Redactor) -> None:
    other = _store(pg_ledger, redactor, chain.hash_values)
    foreign: list[bytes] = []

    def race() -> None:
        head = other.heads("conv-r")[0]
        foreign.append(
            _foreign_insert(
                pg_ledger, redactor, _start("foreign"), chain_seq=head.chain_seq + 1, prev_hash=head.row_hash
            )
        )

    # Calls: 1 the first write (full path), 2 the stale guess, 3 the full path (raced), 4 its retry.
    hasher = _Once(race, at=3)
    store = _store(pg_ledger, redactor, hasher)
    store.insert(_start("first"))
    other.insert(_start("moved"))
    result = store.insert(_start("ours"))
    assert result.inserted and result.row.chain_seq == 4 and result.row.prev_hash == foreign[0]
    assert [r.tool_call_id for r in store.list_by_conversation("conv-r")] == ["first", "moved", "foreign", "ours"]
    assert hasher.calls == 4 and verify(store)["ok"] is True
    store.close()
    other.close()


def test_a_connection_lost_under_a_guess_is_retried_by_the_full_path(pg_ledger: PgLedger, redactor: Redactor) -> None:
    hasher = _Once(lambda: None)
    store = _store(pg_ledger, redactor, hasher)
    begun = store.insert(_start("k")).row
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = 'triage-harness'"
        )
    ended = store.insert(end_event(begun, ended_at=begun.ts, duration_ms=0, status="ok"))
    assert ended.inserted and (ended.row.seq, ended.row.chain_seq) == (1, 2)
    # The first write, the guess on the dead connection, and the full path on a new one.
    assert hasher.calls == 3
    assert store.list_by_conversation("conv-r") == [begun, ended.row] and verify(store)["ok"] is True
    store.close()


def test_threads_share_one_postgres_store(pg_ledger: PgLedger, redactor: Redactor) -> None:
    store = open_postgres_store(
        pg_ledger.dsn,
        redactor=redactor,
        clock=FakeClock(),
        settings=LedgerSettings(pool_max=4),
        redaction_version=RULESET_VERSION,
    )

    def work(t: int) -> None:
        for n in range(20):
            for conversation in ("shared", f"own-{t}"):
                row = store.insert(LedgerEvent(conversation, f"t{t}-{n}", "k", "search_events", "start")).row
                store.insert(end_event(row, ended_at=row.ts, duration_ms=0, status="ok"))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rows = store.list_by_conversation("shared")
    assert [r.chain_seq for r in rows] == list(range(1, 161))
    assert sorted(r.seq for r in rows if r.event == "start") == list(range(1, 81))
    assert verify(store)["ok"] is True
    store.close()


def test_ledger_sessions_run_read_committed_whatever_the_role_default(pg_ledger: PgLedger, redactor: Redactor) -> None:
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        conn.execute(
            psql.SQL("ALTER ROLE {} IN DATABASE {} SET default_transaction_isolation = 'serializable'").format(
                psql.Identifier(pg_ledger.login_role), psql.Identifier(pg_ledger.dbname)
            )
        )
    with psycopg.connect(pg_ledger.dsn) as plain:
        assert plain.execute("SHOW default_transaction_isolation").fetchone() == ("serializable",)
    # The one-round-trip write is the protocol's implicit transaction, which takes the session default.
    with psycopg.connect(pg_ledger.dsn, **connection_kwargs(LedgerSettings())) as conn:
        with conn.pipeline():
            cur = conn.cursor()
            cur.execute("SELECT current_setting('transaction_isolation')")
        assert cur.fetchone() == ("read committed",)
    store = _store(pg_ledger, redactor, chain.hash_values)
    begun = store.insert(_start("k")).row
    assert store.insert(end_event(begun, ended_at=begun.ts, duration_ms=0, status="ok")).inserted
    store.close()
