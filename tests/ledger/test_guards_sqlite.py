"""Append-only guarantees on SQLite (docs/ledger.md §7.3, docs/ledger.md §14): triggers, cascade with tombstone, foreign keys, file mode."""

from __future__ import annotations

import contextlib
import datetime
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from ledger_support import FakeClock, SqliteAdmin, open_test_store

from harness.ledger import commands, migrations
from harness.ledger.model import LedgerEvent, end_event
from harness.ledger.sqlite import connect
from harness.ledger.store import LedgerStore
from harness.ledger.verify import verify
from harness.text.redact import Redactor

T0_TEXT = "2026-01-02T03:04:05.123456Z"


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
def filled(store: LedgerStore) -> LedgerStore:
    for cid in ("conv-a", "conv-b"):
        row = store.insert(LedgerEvent(cid, "1", "call-1", "search_events", "start", arguments="{}")).row
        store.insert(end_event(row, ended_at=row.ts + datetime.timedelta(seconds=1), duration_ms=1000, status="ok"))
    return store


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE tool_invocations SET seq = seq",
        "DELETE FROM tool_invocations WHERE conversation_id = 'conv-a'",
        "DELETE FROM tool_invocations",
        "UPDATE conversations SET created_at = created_at",
        "UPDATE schema_migrations SET name = name",
        "DELETE FROM schema_migrations",
    ],
)
def test_updates_and_standalone_deletes_are_refused(filled: LedgerStore, ledger_target: str, statement: str) -> None:
    before = "".join(commands.export_lines(filled))
    with (
        contextlib.closing(SqliteAdmin(Path(ledger_target)).connect()) as conn,
        pytest.raises(sqlite3.IntegrityError, match="append-only"),
    ):
        conn.execute(statement)
    assert "".join(commands.export_lines(filled)) == before


def test_cascade_leaves_a_tombstone_and_tombstones_are_immutable(filled: LedgerStore, ledger_target: str) -> None:
    head = {h.conversation_id: h for h in filled.heads()}["conv-a"]
    admin = SqliteAdmin(Path(ledger_target))
    admin.delete_conversation("conv-a")
    assert filled.list_by_conversation("conv-a") == []
    [stone] = filled.tombstones()
    assert (stone.conversation_id, stone.row_count, stone.final_chain_seq, stone.final_row_hash) == (
        "conv-a",
        2,
        2,
        head.row_hash,
    )
    assert stone.deleted_by is None and stone.deleted_at.tzinfo is not None
    assert len(filled.list_by_conversation("conv-b")) == 2
    assert verify(filled)["ok"] is True
    with contextlib.closing(admin.connect()) as conn:
        for statement in ("UPDATE tombstones SET row_count = 0", "DELETE FROM tombstones"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                conn.execute(statement)


@pytest.mark.parametrize("query_only", [False, True])
def test_every_factory_connection_enforces_foreign_keys(filled: LedgerStore, ledger_target: str, query_only: bool) -> None:
    conn = connect(Path(ledger_target), busy_timeout_ms=1234, query_only=query_only)
    try:
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1234
        assert conn.execute("PRAGMA trusted_schema").fetchone()[0] == 0
        assert conn.execute("PRAGMA query_only").fetchone()[0] == int(query_only)
    finally:
        conn.close()


def test_snapshot_connections_are_query_only(filled: LedgerStore) -> None:
    with filled.snapshot() as snap:
        assert snap.count_rows("conv-a") == 2


def test_an_unknown_conversation_fails_the_foreign_key(filled: LedgerStore, ledger_target: str) -> None:
    with contextlib.closing(SqliteAdmin(Path(ledger_target)).connect()) as conn:
        row = conn.execute("SELECT * FROM tool_invocations LIMIT 1").fetchone()
        names = [d[1] for d in conn.execute("PRAGMA table_info(tool_invocations)")]
        values = dict(zip(names, row))
        values.update(id="01941f29-7c4e-7a1b-9c3d-5e6f708192a3", conversation_id="nobody")
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            conn.execute(
                f"INSERT INTO tool_invocations ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                list(values.values()),
            )


def test_file_mode_is_0600(tmp_path: Path, redactor: Redactor) -> None:
    old = os.umask(0)
    try:
        store = open_test_store(str(tmp_path / "deep" / "ledger.sqlite3"), redactor, FakeClock())
        store.insert(LedgerEvent("c", "1", "k", "search_events", "start"))
    finally:
        os.umask(old)
    for name in ("ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm"):
        path = tmp_path / "deep" / name
        if path.exists():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
    assert stat.S_IMODE((tmp_path / "deep").stat().st_mode) == 0o700
    store.close()


@pytest.mark.parametrize("foreign_keys", ["ON", "OFF"])
def test_a_conversation_goes_with_all_its_rows_and_never_comes_back(
    filled: LedgerStore, ledger_target: str, foreign_keys: str
) -> None:
    """Another SQLite client has foreign keys off by default: the delete must still take every row (none left to
    pick off one by one), and re-inserting the conversation row must be refused."""
    with contextlib.closing(sqlite3.connect(ledger_target, isolation_level=None)) as conn:
        conn.execute(f"PRAGMA foreign_keys = {foreign_keys}")
        conn.execute("DELETE FROM conversations WHERE id = 'conv-a'")
        assert conn.execute("SELECT count(*) FROM tool_invocations WHERE conversation_id = 'conv-a'").fetchone() == (0,)
        with pytest.raises(sqlite3.IntegrityError, match="was deleted from the ledger"):
            conn.execute("INSERT INTO conversations (id, created_at) VALUES ('conv-a', ?)", (T0_TEXT,))
    [stone] = filled.tombstones()
    assert (stone.conversation_id, stone.row_count) == ("conv-a", 2)
    assert verify(filled)["ok"] is True


def test_an_upgraded_ledger_gets_the_deletion_guards(
    tmp_path: Path, redactor: Redactor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger created by the previous release (schema 1) is migrated at open and then refuses a reused id."""
    path = tmp_path / "ledger.sqlite3"
    first = migrations.shipped("sqlite")[:1]
    with monkeypatch.context() as previous_release:
        previous_release.setattr(migrations, "shipped", lambda backend: first)
        old = open_test_store(str(path), redactor, FakeClock())
        old.insert(LedgerEvent("conv-old", "1", "call-1", "search_events", "start"))
        assert old.schema_version() == 1
        old.close()
    SqliteAdmin(path).delete_conversation("conv-old")
    store = open_test_store(str(path), redactor, FakeClock())
    try:
        assert store.schema_version() == migrations.target_version("sqlite")
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
            with pytest.raises(sqlite3.IntegrityError, match="was deleted from the ledger"):
                conn.execute("INSERT INTO conversations (id, created_at) VALUES ('conv-old', ?)", (T0_TEXT,))
        assert verify(store)["ok"] is True
    finally:
        store.close()
