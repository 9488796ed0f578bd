"""Result order (docs/decisions.md, "Result order"): pages oldest first, ties in stream order, undated
findings last, served by the index in that order without sorting the match set, equal to the replay oracle."""

from __future__ import annotations

import itertools
import sqlite3
from typing import Any

import pytest
from store_support import event

from harness.store import RecordFilter, Store
from harness.store.index_schema import SCHEMA_VERSION
from harness.store.query import StoreView

T = 1_772_484_000_000_000  # 2026-03-02T20:40:00Z
MINUTE = 60_000_000

# A CloudTrail-like export: DeleteTrail at 20:53 is listed after the 20:57 events (with an offset, so its string
# sorts after them too), and two events share an instant.
TRAIL = [
    event("ct-01", source="aws", type="ConsoleLogin", actor="mallory", timestamp="2026-03-02T20:57:01Z",
          payload={"target": "signin.aws.amazon.com", "metadata": {"ip": "198.51.100.7"}}),
    event("ct-02", source="aws", type="StopLogging", actor="mallory", timestamp="2026-03-02T20:57:30Z"),
    event("ct-03", source="aws", type="CreateAccessKey", actor="mallory", timestamp="2026-03-02T20:57:30Z"),
    event("ct-04", source="aws", type="DeleteTrail", actor="mallory", timestamp="2026-03-02T21:53:10+01:00"),
    event("ct-05", source="aws", type="AssumeRole", actor="ci-bot", timestamp="2026-03-02T20:55:00Z"),
]
LATE_BATCH = [event("ct-06", source="aws", type="ConsoleLogin", actor="MALLORY", timestamp="2026-03-02T20:50:00Z")]
FINDINGS = [
    {"id": "f-b", "actor": "mallory", "timestamp": "2026-03-02T21:00:00Z"},
    {"id": "f-undated", "actor": "mallory"},
    {"id": "f-a", "actor": "mallory", "timestamp": "2026-03-02T20:53:00Z"},
    {"id": "f-c", "actor": "mallory", "timestamp": "2026-03-02T21:00:00Z"},
    {"id": "f-undated-2", "actor": "ci-bot"},
]


def _ids(view: StoreView, stream: str, flt: RecordFilter, limit: int = 100) -> tuple[list[str], int]:
    page = view.select(stream, flt, limit)
    return [record["id"] for record in page.records], page.total


def _both(store: Store, stream: str, flt: RecordFilter, limit: int = 100) -> tuple[list[str], int]:
    with store.snapshot() as view:
        through_index = _ids(view, stream, flt, limit)
    assert through_index == _ids(store.replay(), stream, flt, limit)
    return through_index


@pytest.fixture
def trail(make_store: Any) -> Store:
    store = make_store(segment_max_records=2)
    store.append_batch("events", TRAIL)
    store.append_batch("events", LATE_BATCH)
    store.append_batch("findings", FINDINGS)
    return store


@pytest.mark.parametrize(
    ("flt", "limit", "expected"),
    [
        (RecordFilter(), 100, (["ct-06", "ct-04", "ct-05", "ct-01", "ct-02", "ct-03"], 6)),
        (RecordFilter(actor="Mallory"), 2, (["ct-06", "ct-04"], 5)),
        (
            RecordFilter(actor="mallory", since=T + 14 * MINUTE, until=T + 18 * MINUTE),
            100,
            (["ct-01", "ct-02", "ct-03"], 3),
        ),
        (RecordFilter(until=T + 15 * MINUTE), 1, (["ct-06"], 3)),
        (RecordFilter(type="consolelogin", source="AWS"), 100, (["ct-06", "ct-01"], 2)),
        (RecordFilter(ids=frozenset(["ct-03", "ct-04", "ct-02"])), 100, (["ct-04", "ct-02", "ct-03"], 3)),
        (RecordFilter(ids=frozenset(["ct-03", "ct-04", "ct-02"]), actor="mallory"), 2, (["ct-04", "ct-02"], 3)),
    ],
)
def test_events_come_oldest_first_with_ties_in_stream_order(
    trail: Store, flt: RecordFilter, limit: int, expected: tuple[list[str], int]
) -> None:
    assert _both(trail, "events", flt, limit) == expected


def test_undated_findings_come_last_and_no_window_holds_them(trail: Store) -> None:
    assert _both(trail, "findings", RecordFilter()) == (["f-a", "f-b", "f-c", "f-undated", "f-undated-2"], 5)
    assert _both(trail, "findings", RecordFilter(actor="mallory"), 3) == (["f-a", "f-b", "f-c"], 4)
    assert _both(trail, "findings", RecordFilter(since=0)) == (["f-a", "f-b", "f-c"], 3)
    assert _both(trail, "findings", RecordFilter(until=2**62)) == (["f-a", "f-b", "f-c"], 3)


def test_every_filter_combination_reads_an_index_in_result_order(trail: Store) -> None:
    statements: list[str] = []
    windows = [{}, {"since": T}, {"until": T + 20 * MINUTE}, {"since": T, "until": T + 20 * MINUTE}]
    id_filters = [None, frozenset(["ct-01", "ct-03"]), frozenset(["f-a", "f-undated"])]
    with trail.snapshot() as view:
        conn: sqlite3.Connection = view._conn  # type: ignore[attr-defined]
        conn.set_trace_callback(statements.append)
        try:
            columns = ("actor", "type", "source", "target", "ip")
            for size in range(len(columns) + 1):
                for names in itertools.combinations(columns, size):
                    for window, ids in itertools.product(windows, id_filters):
                        values = {"actor": "mallory", "type": "consolelogin", "source": "aws",
                                  "target": "signin.aws.amazon.com", "ip": "198.51.100.7"}
                        flt = RecordFilter(**{name: values[name] for name in names}, ids=ids, **window)
                        view.select("events", flt, 2)
                        if not {"target", "ip"} & set(names):
                            view.select("findings", flt, 2)
        finally:
            conn.set_trace_callback(None)
        pages = [sql for sql in statements if sql.startswith("SELECT line")]
        counts = [sql for sql in statements if sql.startswith("SELECT count")]
        # The unfiltered total is the stream's size, read off the last rowid (one seek, no index walk).
        sizes = [sql for sql in statements if sql.startswith("SELECT coalesce(max(seq)")]
        by_ids = [sql for sql in statements if sql.startswith("SELECT ts, seq, line")]
        # Each of the 32 event combinations and 8 finding combinations counts; findings without a type stop there.
        assert len(counts) + len(sizes) == (32 + 8) * len(windows) and len(sizes) == 2 and len(pages) >= 8 * len(windows)
        # With ids every combination reads its rows by the unique id index, one statement and no count.
        assert len(by_ids) == (32 + 8) * len(windows) * 2
        for sql in pages + counts + by_ids:
            plan = " / ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert "TEMP B-TREE" not in plan, (sql, plan)
            assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, (sql, plan)
            # Only the unfiltered page reads an index from its start (the first `limit` entries); all else seeks.
            assert "SCAN" not in plan or (sql.startswith("SELECT line") and "_by_time WHERE 1 ORDER" in sql), plan
        for sql in sizes:
            assert [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")] == [f"SEARCH {sql.split()[-1]}"]
        for sql in counts:
            plan = " / ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert "COVERING INDEX" in plan, (sql, plan)
        for sql in by_ids:
            plan = " / ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert "USING INDEX r_events_lid (lid=?)" in plan or "USING INDEX r_findings_lid (lid=?)" in plan, plan


def test_an_index_of_the_previous_schema_is_rebuilt_in_result_order(trail: Store) -> None:
    expected = _both(trail, "events", RecordFilter(actor="mallory"))
    with sqlite3.connect(trail.index_path) as conn:
        # Stands for a file of the previous release: its schema version, without the order indexes.
        query = "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'r_%_by_%'"
        for (name,) in conn.execute(query).fetchall():
            conn.execute(f"DROP INDEX {name}")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    assert _both(trail, "events", RecordFilter(actor="mallory")) == expected
    with sqlite3.connect(trail.index_path) as conn:
        assert dict(conn.execute("SELECT key, value FROM meta"))["schema"] == SCHEMA_VERSION != "1"
        names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"r_events_by_time", "r_events_by_actor_type_source", "r_findings_by_actor"} <= names
