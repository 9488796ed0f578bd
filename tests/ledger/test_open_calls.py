"""The open_calls index (docs/decisions.md, "Open calls"): the triggers keep exactly the starts without an end, through
ends, deletions and upgrades, on both backends, and what reads it answers as the full scan did."""

from __future__ import annotations

import contextlib
import datetime
import sqlite3
from pathlib import Path

import psycopg
import pytest
from ledger_support import T0, FakeClock, PgAdmin, PgLedger, SqliteAdmin, new_pg_upgrade, open_test_store
from pgsupport import PgServer

from harness.ledger import commands, migrations
from harness.ledger.browse import ConversationFilter, page_query
from harness.ledger.model import LedgerEvent, LedgerRow, end_event
from harness.ledger.records import CallFilter
from harness.ledger.sqlite import DIALECT
from harness.ledger.sqlread import IN_FLIGHT, calls_query
from harness.ledger.store import LedgerStore
from harness.ledger.verify import verify
from harness.text.redact import Redactor

Admin = SqliteAdmin | PgAdmin
OpenCall = tuple[str, str, str]

# The definition the index replaced: every start whose end is missing.
_SCAN = (
    "SELECT s.conversation_id, s.request_id, s.tool_call_id FROM ledger.tool_invocations s WHERE s.event = 'start'"
    " AND NOT EXISTS (SELECT 1 FROM ledger.tool_invocations e WHERE e.conversation_id = s.conversation_id"
    " AND e.request_id = s.request_id AND e.tool_call_id = s.tool_call_id AND e.event = 'end')"
)


def _start(store: LedgerStore, conversation: str, n: int) -> LedgerRow:
    began = store.insert(LedgerEvent(conversation, str(n), f"call-{n}", "search_events", "start", arguments="{}"))
    return began.row


def _end(store: LedgerStore, row: LedgerRow) -> None:
    store.insert(end_event(row, ended_at=row.ts, duration_ms=1, status="ok", result_preview="{}", result_bytes=2))


def _listed(admin: Admin) -> set[OpenCall]:
    return {tuple(r) for r in admin.query("SELECT conversation_id, request_id, tool_call_id FROM ledger.open_calls")}


def _scanned(admin: Admin) -> set[OpenCall]:
    return {tuple(r) for r in admin.query(_SCAN)}


def _in_flight(store: LedgerStore) -> list[tuple[str, str]]:
    late = FakeClock(T0 + datetime.timedelta(days=1))
    doc = commands.list_calls(store, clock=late, status="in_flight")
    return sorted((c["conversation_id"], c["tool_call_id"]) for c in doc["calls"])


def _browsed_in_flight(store: LedgerStore) -> list[tuple[str, int]]:
    """The web view's conversation list filtered to those with a call in flight, with their in-flight counts."""
    with store.snapshot() as snap:
        page = snap.conversation_page(ConversationFilter(status="in_flight"), None, 10)
    return sorted((c.conversation_id, c.in_flight) for c in page)


def test_starts_open_and_ends_close_their_calls(store: LedgerStore, admin: Admin) -> None:
    rows = {(conv, n): _start(store, conv, n) for conv in ("conv-a", "conv-b") for n in range(1, 4)}
    assert _listed(admin) == _scanned(admin) and len(_listed(admin)) == 6
    for key in [("conv-a", 2), ("conv-b", 1), ("conv-b", 3)]:
        _end(store, rows[key])
    assert (
        _listed(admin)
        == _scanned(admin)
        == {
            ("conv-a", "1", "call-1"),
            ("conv-a", "3", "call-3"),
            ("conv-b", "2", "call-2"),
        }
    )
    assert _in_flight(store) == [("conv-a", "call-1"), ("conv-a", "call-3"), ("conv-b", "call-2")]
    late = T0 + datetime.timedelta(days=1)
    assert [(r.conversation_id, r.tool_call_id) for r in store.list_in_flight_before(late)] == [
        ("conv-a", "call-1"),
        ("conv-a", "call-3"),
        ("conv-b", "call-2"),
    ]
    with store.snapshot() as snap:
        assert snap.open_calls(["conv-b"]) == {("conv-b", "2", "call-2")} and snap.open_calls([]) == set()
    assert verify(store)["ok"] is True
    for key in [("conv-a", 1), ("conv-a", 3), ("conv-b", 2)]:
        _end(store, rows[key])
    assert _listed(admin) == set() and _in_flight(store) == [] and store.list_in_flight_before(late) == []


def test_the_in_flight_filter_combines_with_the_others(store: LedgerStore, admin: Admin) -> None:
    first = _start(store, "conv-a", 1)
    _start(store, "conv-a", 2)
    _start(store, "conv-b", 1)
    _end(store, first)
    late = FakeClock(T0 + datetime.timedelta(days=1))
    in_conv_a = commands.list_calls(store, clock=late, status="in_flight", conversation="conv-a")["calls"]
    assert [(c["conversation_id"], c["request_id"], c["status"]) for c in in_conv_a] == [("conv-a", "2", "in_flight")]
    assert commands.list_calls(store, clock=late, status="in_flight", tool="get_raw_event")["calls"] == []
    newest = commands.list_calls(store, clock=late, status="in_flight", limit=1)
    assert [c["conversation_id"] for c in newest["calls"]] == ["conv-b"] and newest["truncated"] is True
    assert _browsed_in_flight(store) == [("conv-a", 1), ("conv-b", 1)]
    _end(store, store.list_by_conversation("conv-b")[0])
    assert _browsed_in_flight(store) == [("conv-a", 1)]


def test_deleting_a_conversation_deletes_its_open_calls(store: LedgerStore, admin: Admin) -> None:
    for conv in ("conv-a", "conv-b"):
        _start(store, conv, 1)
        _start(store, conv, 2)
    admin.delete_conversation("conv-a")
    assert _listed(admin) == _scanned(admin) == {("conv-b", "1", "call-1"), ("conv-b", "2", "call-2")}
    assert verify(store)["ok"] is True


@pytest.mark.parametrize("change", ["left_out", "listed_wrongly", "unknown_conversation"])
def test_verify_reports_an_index_that_differs_from_the_chain(store: LedgerStore, admin: Admin, change: str) -> None:
    open_row = _start(store, "conv-a", 1)
    _end(store, _start(store, "conv-a", 2))
    _start(store, "bystander", 1)
    statement = {
        "left_out": (
            "DELETE FROM ledger.open_calls WHERE conversation_id = ? AND request_id = ?",
            ["conv-a", open_row.request_id],
        ),
        "listed_wrongly": ("INSERT INTO ledger.open_calls VALUES (?, ?, ?)", ["conv-a", "2", "call-2"]),
        "unknown_conversation": ("INSERT INTO ledger.open_calls VALUES (?, ?, ?)", ["conv-a", "9", "call-9"]),
    }[change]
    admin.tamper([statement])
    report = verify(store)
    assert report["ok"] is False
    assert [(p["conversation_id"], p["chain_seq"], p["kind"]) for p in report["problems"]] == [
        ("conv-a", None, "open_calls_mismatch")
    ]
    detail = report["problems"][0]["detail"]
    if change == "left_out":
        assert (
            detail == "open_calls leaves out call call-1 of request 1, which has no end (1 left out, 0 listed wrongly)"
        )
    else:
        number = "2" if change == "listed_wrongly" else "9"
        assert detail.startswith(f"open_calls lists call call-{number} of request {number}, which has ended")
    assert verify(store, conversation_ids=["bystander"])["ok"] is True


def test_an_upgrade_fills_the_index_from_the_rows(
    tmp_path: Path, redactor: Redactor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger of the schema before open_calls, with calls open, ended and in a deleted conversation: the migration
    lists the open ones, and later rows keep the index."""
    path = tmp_path / "ledger.sqlite3"
    before = [m for m in migrations.shipped("sqlite") if m.name != "open_calls"]
    with monkeypatch.context() as previous_release:
        previous_release.setattr(migrations, "shipped", lambda backend: before)
        old = open_test_store(str(path), redactor, FakeClock())
        open_row = _start(old, "conv-a", 1)
        _end(old, _start(old, "conv-a", 2))
        _start(old, "conv-gone", 1)
        old.close()
        admin = SqliteAdmin(path)
        admin.delete_conversation("conv-gone")
        assert admin.query("SELECT name FROM sqlite_schema WHERE name = 'open_calls'") == []
    store = open_test_store(str(path), redactor, FakeClock(T0 + datetime.timedelta(hours=1)))
    try:
        assert store.schema_version() == migrations.target_version("sqlite")
        assert _listed(admin) == _scanned(admin) == {("conv-a", "1", "call-1")}
        _end(store, open_row)
        _start(store, "conv-a", 3)
        assert _listed(admin) == {("conv-a", "3", "call-3")}
        assert verify(store)["ok"] is True
    finally:
        store.close()


@pytest.mark.pg
def test_a_postgres_upgrade_lists_the_open_calls_of_orphan_rows(
    pg_server: PgServer, redactor: Redactor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PostgreSQL ledger of the schema before open_calls whose conversation row a replica-mode delete removed,
    leaving its rows: the upgrade lists their open call too (the index has no foreign key to refuse it), as the scan
    did, and the chain check still names them orphans."""
    ledger = new_pg_upgrade(pg_server, "oc")
    before = [m for m in migrations.shipped("postgres") if m.name != "open_calls"]
    with monkeypatch.context() as previous_release:
        previous_release.setattr(migrations, "shipped", lambda backend: before)
        ledger.migrate(redactor)
        old = open_test_store(ledger.dsn, redactor, FakeClock())
        _start(old, "conv-a", 1)
        _end(old, _start(old, "conv-a", 2))
        _start(old, "conv-x", 1)
        old.close()
        no_cascade = ("SET session_replication_role = replica", [])
        PgAdmin(ledger.admin_dsn, ledger.owner_role).tamper(
            [no_cascade, ("DELETE FROM ledger.conversations WHERE id = ?", ["conv-x"])]
        )
    ledger.migrate(redactor)
    admin = PgAdmin(ledger.admin_dsn, ledger.owner_role)
    assert _listed(admin) == _scanned(admin) == {("conv-a", "1", "call-1"), ("conv-x", "1", "call-1")}
    store = open_test_store(ledger.dsn, redactor, FakeClock(T0 + datetime.timedelta(hours=1)))
    try:
        kinds = {(p["conversation_id"], p["kind"]) for p in verify(store)["problems"]}
        assert kinds == {("conv-x", "orphan_rows")}
    finally:
        store.close()
    pg_server.drop_database(ledger.dbname)


@pytest.mark.pg
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO ledger.open_calls VALUES ('conv-a', '9', 'call-9')",
        "DELETE FROM ledger.open_calls",
        "UPDATE ledger.open_calls SET request_id = '9'",
        "TRUNCATE ledger.open_calls",
    ],
)
def test_the_app_role_reads_the_index_and_cannot_write_it(
    store: LedgerStore, pg_ledger: PgLedger, statement: str
) -> None:
    _start(store, "conv-a", 1)
    with psycopg.connect(pg_ledger.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM ledger.open_calls").fetchone() == (1,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(statement)
        assert conn.execute("SELECT count(*) FROM ledger.open_calls").fetchone() == (1,)


@pytest.mark.parametrize("analyzed", [False, True], ids=["no_statistics", "analyzed"])
@pytest.mark.parametrize("query", ["list", "list_in_flight_before", "in_flight_before", "web_view_page"])
def test_sqlite_reads_of_calls_in_flight_start_from_the_index(
    tmp_path: Path, redactor: Redactor, analyzed: bool, query: str
) -> None:
    """Each read of the calls in flight walks open_calls and looks up its starts; none scans tool_invocations, with
    or without the planner's statistics."""
    path = tmp_path / "ledger.sqlite3"
    store = open_test_store(str(path), redactor, FakeClock())
    for n in range(1, 40):
        row = _start(store, f"conv-{n % 7}", n)
        if n % 5:
            _end(store, row)
    store.close()
    late = T0 + datetime.timedelta(days=1)
    sql, params = {
        "list": lambda: calls_query(DIALECT, CallFilter(status="in_flight"), 100),
        "list_in_flight_before": lambda: calls_query(DIALECT, CallFilter(in_flight_before=late), 100),
        "in_flight_before": lambda: (DIALECT.sql(IN_FLIGHT), [DIALECT.ts_to_db(late), 100]),
        "web_view_page": lambda: page_query(DIALECT, ConversationFilter(status="in_flight"), None, 51),
    }[query]()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        if analyzed:
            conn.execute("ANALYZE")
        plan = [step for *_, step in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
    reads = [step for step in plan if step.startswith(("SCAN", "SEARCH"))]
    assert "open_calls" in reads[0] or reads[0].split()[1] == "o", plan
    starts = [step for step in reads if step.split()[1] in ("s", "e")]
    assert starts and all(step.startswith("SEARCH") for step in starts), plan
