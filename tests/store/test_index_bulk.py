"""Bulk loads into the read index (store/index_bulk.py): the same database as row-by-row inserts, every order
index back in place, and a stored duplicate still named at its line."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from store_support import commit_files, event, line

from harness.errors import UpstreamUnavailable
from harness.store import RecordFilter, Store, index_bulk
from harness.store.index_schema import table_name


def _events(count: int, start: int = 0) -> list[dict[str, Any]]:
    actors = ["baron", "ci-bot", "Baron", "deploy-svc"]
    return [
        event(
            f"e{n}",
            actor=actors[n % 4],
            source=("github", "azure")[n % 2],
            type=("push", "login", "delete")[n % 3],
            timestamp=f"2026-04-{1 + n % 28:02d}T{n % 24:02d}:00:00Z",
            payload={"target": f"repo-{n % 7}", "metadata": {"ip": f"203.0.113.{n % 9}"}},
        )
        for n in range(start, start + count)
    ]


def _dump(path: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """Every row of the events table, every segment row, and every schema object, with an integrity check."""
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = conn.execute(f"SELECT * FROM {table_name('events')} ORDER BY seq").fetchall()
        segments = conn.execute("SELECT * FROM segments ORDER BY stream, number").fetchall()
        schema = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").fetchall()
    return rows, segments, schema


def _load(tmp_path: Path, name: str) -> tuple[Store, tuple[list[Any], list[Any], list[Any]]]:
    store = Store(tmp_path / name, segment_max_records=16)
    store.append_batch("events", _events(40))
    store.append_batch("events", _events(50, start=40))  # more than is indexed: rebuilt when the minimum allows
    store.append_batch("events", _events(3, start=90))  # fewer: inserted through the indexes
    return store, _dump(store.index_path)


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    decisions: list[bool] = []

    def recorded(existing: int, added: int, *, in_bytes: bool = False) -> bool:
        decisions.append(index_bulk.worth_rebuilding(existing, added, in_bytes=in_bytes))
        return decisions[-1]

    monkeypatch.setattr("harness.store.index_catchup.worth_rebuilding", recorded)
    return decisions


def test_a_bulk_append_builds_the_same_index_as_row_by_row_inserts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    decisions = _spy(monkeypatch)
    _, row_by_row = _load(tmp_path, "plain")
    assert decisions == [False, False, False]
    decisions.clear()
    monkeypatch.setattr(index_bulk, "BULK_MIN_ROWS", 1)
    store, bulk = _load(tmp_path, "bulk")
    assert decisions == [True, True, False]
    assert bulk[0] == row_by_row[0]
    assert [segment[1:] for segment in bulk[1]] == [segment[1:] for segment in row_by_row[1]]
    assert bulk[2] == row_by_row[2]
    flt = RecordFilter(actor="BARON", type="push")
    with store.snapshot() as view:
        assert view.select("events", flt, 100).records == store.replay().select("events", flt, 100).records


def test_the_order_indexes_are_the_schemas_non_unique_indexes() -> None:
    names = [name for name, _ in index_bulk.order_indexes(table_name("events"))]
    assert names and all(name.startswith(f"{table_name('events')}_by_") for name in names)
    assert f"{table_name('events')}_lid" not in names
    assert index_bulk.order_indexes(table_name("baseline")) == []


def test_a_bulk_rebuild_still_names_the_line_of_a_stored_duplicate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_bulk, "BULK_MIN_BYTES", 1)
    decisions = _spy(monkeypatch)
    store = Store(tmp_path / "store")
    store.append_batch("events", [event("seed")])
    git_dir = store.git().git_dir  # type: ignore[union-attr]
    body = b"".join(line(f"x{n}") + b"\n" for n in range(5)) + line("X3") + b"\n"
    commit_files(git_dir, {"events/00000001.jsonl": body})
    with pytest.raises(UpstreamUnavailable, match=r"events/00000001.jsonl line 6: id \"X3\" is stored more than once"):
        with store.snapshot():
            pass
    assert decisions[-1] is True
    with sqlite3.connect(store.index_path) as conn:
        indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    # The failed catch-up rolled back: the order indexes dropped for the rebuild are all still there.
    assert {name for name, _ in index_bulk.order_indexes(table_name("events"))} <= indexes


def test_a_bulk_catch_up_after_another_writer_matches_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_bulk, "BULK_MIN_BYTES", 1)
    decisions = _spy(monkeypatch)
    reader = Store(tmp_path / "store", segment_max_records=8)
    writer = Store(reader.path, index_path=tmp_path / "writer.sqlite3", segment_max_records=8)
    writer.append_batch("events", _events(5))
    with reader.snapshot():
        pass
    writer.append_batch("events", _events(30, start=5))  # grows the last segment and adds new ones
    with reader.snapshot() as view:
        page = view.select("events", RecordFilter(actor="baron"), 100)
    assert page.records == reader.replay().select("events", RecordFilter(actor="baron"), 100).records
    assert True in decisions
    assert _dump(reader.index_path)[0] == _dump(writer.index_path)[0]
