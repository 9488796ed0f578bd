"""The read index (docs/investigate.md §4): catch-up, rebuilds, corruption, fallback; always equal to a replay."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from store_support import canonical, commit_files, event, git, line

from harness.store import RecordFilter, Store
from harness.store.index_backends import READ_POOL_SIZE
from harness.store.query import StoreView

FILTERS = [
    RecordFilter(),
    RecordFilter(actor="BARON"),
    RecordFilter(type="push", source="GitHub"),
    RecordFilter(since=1_775_811_600_000_000),
]


def _answers(view: StoreView) -> str:
    out: list[Any] = [view.commit]
    for flt in FILTERS:
        page = view.select("events", flt, 3)
        out.append([page.total, page.records])
    out.append(sorted(view.resolve_filter("events", ["e1", "finding-e2", "E1-x"]) or []))
    baseline = view.latest_baseline()
    out.append(baseline.record if baseline else None)
    out.append(list(view.records("findings")))
    return canonical(out)


def _same_as_replay(store: Store) -> str:
    with store.snapshot() as view:
        answers = _answers(view)
    assert answers == _answers(store.replay())
    return answers


def _fill(store: Store, start: int, count: int) -> None:
    actors = ["baron", "ci-bot", "Baron"]
    store.append_batch(
        "events",
        [
            event(f"e{n}", actor=actors[n % 3], source="github", type="push" if n % 2 else "delete",
                  timestamp=f"2026-04-10T{n % 24:02d}:00:00Z")
            for n in range(start, start + count)
        ],
    )


def _meta(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT key, value FROM meta"))


def _rebuilds(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "rebuild" in r.getMessage()]


def test_appends_leave_the_index_current(make_store: Any) -> None:
    store = make_store()
    _fill(store, 0, 5)
    assert _meta(store.index_path)["commit"] == store.head()
    store.append_batch("baseline", [{"known_actors": ["baron"]}])
    assert _meta(store.index_path)["commit"] == store.head()


def test_incremental_catch_up_after_another_writer(make_store: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    reader = make_store(segment_max_records=4)
    writer = Store(reader.path, index_path=tmp_path / "writer.sqlite3", segment_max_records=4)
    _fill(writer, 0, 6)
    _same_as_replay(reader)
    caplog.clear()
    caplog.set_level(logging.WARNING, logger="harness.store")
    _fill(writer, 6, 1)  # grows the last segment
    _fill(writer, 7, 9)  # fills it and adds new ones
    writer.append_batch("findings", [{"id": "f1", "actor": "baron"}])
    _same_as_replay(reader)
    assert _rebuilds(caplog) == []
    assert _meta(reader.index_path)["commit"] == reader.head()


@pytest.mark.parametrize("change", ["rewritten-segment", "shorter-stream", "foreign-prefix"])
def test_other_differences_rebuild_fully(make_store: Any, change: str, caplog: pytest.LogCaptureFixture) -> None:
    store = make_store(segment_max_records=2)
    _fill(store, 0, 3)
    _same_as_replay(store)
    git_dir = store.git().git_dir  # type: ignore[union-attr]
    if change == "rewritten-segment":
        commit_files(git_dir, {"events/00000001.jsonl": line("x1") + b"\n" + line("x2") + b"\n",
                               "events/00000002.jsonl": line("e2") + b"\n"})
    elif change == "shorter-stream":
        git(git_dir, "update-ref", "refs/heads/main", git(git_dir, "rev-list", "--max-parents=0", "HEAD").strip())
        commit_files(git_dir, {"events/00000001.jsonl": line("e0") + b"\n"})
    else:
        commit_files(git_dir, {"events/00000001.jsonl": line("e0") + b"\n" + line("e1") + b"\n",
                               "events/00000002.jsonl": line("zz") + b"\n" + line("e3") + b"\n"})
    caplog.set_level(logging.WARNING, logger="harness.store")
    _same_as_replay(store)
    assert _rebuilds(caplog)


def test_an_index_of_another_repository_is_rebuilt(tmp_path: Path) -> None:
    shared = tmp_path / "shared.sqlite3"
    one = Store(tmp_path / "one", index_path=shared)
    _fill(one, 0, 3)
    two = Store(tmp_path / "two", index_path=shared)
    two.append_batch("events", [event("other")])
    answers = _same_as_replay(two)
    assert '"other"' in answers and '"e1"' not in answers


@pytest.mark.parametrize("damage", ["delete", "garbage", "truncate", "not-sqlite-before-first-use", "schema"])
def test_deleted_or_corrupt_index_gives_identical_answers(make_store: Any, damage: str) -> None:
    store = make_store(segment_max_records=3)
    _fill(store, 0, 7)
    store.append_batch("findings", [{"id": "finding-e2", "actor": "baron"}])
    store.append_batch("baseline", [{"known_actors": ["baron"]}])
    before = _same_as_replay(store)
    path = store.index_path
    if damage == "delete":
        path.unlink()
    elif damage == "garbage":
        with open(path, "r+b") as handle:
            handle.write(os.urandom(path.stat().st_size))
    elif damage == "truncate":
        os.truncate(path, 1000)
    elif damage == "schema":
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    else:
        fresh = Store(store.path, index_path=path.with_name("fresh.sqlite3"))
        fresh.index_path.write_bytes(b"this is not an SQLite database" * 100)
        assert _same_as_replay(fresh) == before
        return
    assert _same_as_replay(store) == before
    # Another handle (another "process") opening the file afresh repairs it too; then both agree.
    other = Store(store.path, index_path=path)
    assert _same_as_replay(other) == before
    assert _meta(path)["commit"] == store.head()
    _fill(other, 100, 2)
    assert _same_as_replay(store) == _same_as_replay(other)


def test_a_table_broken_during_a_call_is_answered_by_replay(make_store: Any) -> None:
    store = make_store()
    _fill(store, 0, 5)
    before = _same_as_replay(store)
    with sqlite3.connect(store.index_path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'r_events'").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    with open(store.index_path, "r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xff" * page_size)
    assert _same_as_replay(store) == before
    assert _same_as_replay(store) == before


def test_an_unwritable_location_falls_back_to_an_in_memory_index(
    make_store: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    store = make_store(index_path=blocker / "store.index.sqlite3")
    caplog.set_level(logging.WARNING, logger="harness.store")
    _fill(store, 0, 4)
    _same_as_replay(store)
    assert store.index_in_memory
    assert any("in-memory index" in r.getMessage() for r in caplog.records)
    _fill(store, 4, 3)
    _same_as_replay(store)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_a_read_only_directory_falls_back_to_an_in_memory_index(make_store: Any, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    store = make_store(index_path=locked / "store.index.sqlite3")
    locked.chmod(0o555)
    try:
        _fill(store, 0, 4)
        _same_as_replay(store)
        assert store.index_in_memory
    finally:
        locked.chmod(0o755)


def test_queries_use_python_lower_not_sqlite(store: Store) -> None:
    # "İ".lower() is two code points; SQLite's lower() would leave it alone.
    store.append_batch("events", [event("e1", actor="İSTANBUL"), event("e2", actor="i̇stanbul")])
    with store.snapshot() as view:
        assert view.select("events", RecordFilter(actor="i̇stanbul"), 5).total == 2
        assert view.select("events", RecordFilter(actor="istanbul"), 5).total == 0
        assert view.select("events", RecordFilter(actor="\ud800"), 5).total == 0


def test_readers_share_a_bounded_pool_of_connections(store: Store) -> None:
    _fill(store, 0, 20)
    expected = _same_as_replay(store)
    inside, most, answers = [0], [0], []
    guard = threading.Lock()

    def read() -> None:
        with store.snapshot() as view:
            with guard:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.05)
            answers.append(_answers(view))
            with guard:
                inside[0] -= 1

    threads = [threading.Thread(target=read) for _ in range(3 * READ_POOL_SIZE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [expected] * len(threads)
    assert most[0] <= READ_POOL_SIZE
