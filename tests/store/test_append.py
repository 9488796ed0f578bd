"""Appending (docs/investigate.md §3.1, docs/investigate.md §3.3): segments, duplicates, compare-and-swap, concurrent writers."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path
from typing import Any

import pytest
from store_support import check_invariants, event, git, stream_ids

from harness.errors import InvalidInput, UpstreamUnavailable
from harness.store import RecordFilter, Store, StoredConflict
from harness.store.segments import Limits, fill


def _segment_sizes(store: Store, stream: str = "events") -> list[int]:
    git_dir = store.git().git_dir  # type: ignore[union-attr]
    names = git(git_dir, "ls-tree", "-r", "--name-only", "HEAD", "--", stream).split()
    return [len(git(git_dir, "cat-file", "blob", f"HEAD:{name}").splitlines()) for name in names]


def test_segments_fill_to_the_record_limit_and_only_the_last_is_rewritten(make_store: Any) -> None:
    store = make_store(segment_max_records=3)
    store.append_batch("events", [event(f"e{i}") for i in range(4)])
    check_invariants(store)
    assert _segment_sizes(store) == [3, 1]
    git_dir = store.git().git_dir
    first_blob = git(git_dir, "rev-parse", "HEAD:events/00000001.jsonl")
    store.append_batch("events", [event("e4")])
    check_invariants(store)
    assert _segment_sizes(store) == [3, 2]
    assert git(git_dir, "rev-parse", "HEAD:events/00000001.jsonl") == first_blob
    changed = git(git_dir, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split()
    assert changed == ["events/00000002.jsonl"]


def test_byte_limit_and_an_oversized_record_gets_its_own_segment(make_store: Any) -> None:
    store = make_store(segment_max_bytes=300)
    records = [event("a"), event("b", payload={"blob": "x" * 400}), event("c"), event("d")]
    store.append_batch("events", records)
    check_invariants(store)
    assert _segment_sizes(store) == [1, 1, 2]


def test_fill_never_yields_an_untouched_full_segment() -> None:
    writes = list(fill(None, b"", [b"a", b"b", b"c"], Limits(max_records=2, max_bytes=100)))
    assert [(w.number, w.data) for w in writes] == [(1, b"a\nb\n"), (2, b"c\n")]


def test_empty_batches_and_all_duplicate_batches_make_no_commit(store: Store) -> None:
    assert store.append_batch("events", []).commit == ""
    assert store.git() is None
    first = store.append_batch("events", [event("e1"), event("e1"), event("e2")])
    assert (first.added, first.skipped_duplicates) == (2, 1)
    again = store.append_batch("events", [event("e1"), event("e2")])
    assert (again.added, again.skipped_duplicates, again.commit) == (0, 2, "")
    assert store.head() == first.commit
    assert git(store.git().git_dir, "log", "-1", "--format=%s").strip() == "store: append events (n=2)"  # type: ignore[union-attr]


def test_identical_content_in_other_casing_or_offset_is_a_duplicate(store: Store) -> None:
    store.append_batch("events", [{"id": "e1", "timestamp": "2026-04-10T09:00:00Z", "actor": "a"}])
    result = store.append_batch("events", [{"ID": "e1", "Timestamp": "2026-04-10T11:00:00+02:00", "Actor": "a"}])
    assert (result.added, result.skipped_duplicates) == (0, 1)


def test_conflicts_are_refused_and_nothing_is_written(store: Store) -> None:
    store.append_batch("events", [event("e1", actor="a")])
    head = store.head()
    with pytest.raises(StoredConflict) as caught:
        store.append_batch("events", [event("e2"), event("E1", actor="b")])
    assert caught.value.message == 'id "E1" already stored with different content'
    assert caught.value.position == 1
    with pytest.raises(InvalidInput, match=r'^record 1: id "E3" appears earlier in this batch with different content$'):
        store.append_batch("events", [event("e3"), event("E3", actor="x")])
    with pytest.raises(InvalidInput, match=r'^record 1: field "id": is required$'):
        store.append_batch("events", [event("e4"), {"timestamp": "2026-04-10T09:00:00Z"}])
    assert store.head() == head
    assert stream_ids(store) == ["e1"]


def test_each_commit_touches_one_stream(store: Store) -> None:
    store.append_batch("events", [event("e1")])
    store.append_batch("findings", [{"id": "f1"}])
    store.append_batch("baseline", [{"known_actors": ["a"]}])
    check_invariants(store)
    git_dir = store.git().git_dir  # type: ignore[union-attr]
    subjects = git(git_dir, "log", "--format=%s").splitlines()
    assert subjects == ["store: append baseline (n=1)", "store: append findings (n=1)", "store: append events (n=1)"]


def test_a_baseline_equal_to_the_last_record_is_not_appended(store: Store) -> None:
    assert store.append_batch("baseline", [{"known_actors": ["a"]}]).added == 1
    assert store.append_batch("baseline", [{"knownActors": ["a"], "schema_version": 1}]).added == 0
    assert store.append_batch("baseline", [{"known_actors": ["b"]}, {"known_actors": ["b"]}]).added == 1
    assert store.append_batch("baseline", [{"known_actors": ["a"]}]).added == 1


def test_two_handles_on_one_store_interleave_through_compare_and_swap(tmp_path: Path) -> None:
    one = Store(tmp_path / "store", index_path=tmp_path / "one.sqlite3")
    two = Store(tmp_path / "store", index_path=tmp_path / "two.sqlite3")
    one.append_batch("events", [event("a")])
    two.append_batch("events", [event("b"), event("a")])
    one.append_batch("events", [event("c"), event("b")])
    assert stream_ids(one) == ["a", "b", "c"]
    with one.snapshot() as view:
        assert view.select("events", RecordFilter(), 10).total == 3
    check_invariants(one)


@pytest.mark.slow
def test_a_failed_update_with_the_branch_unmoved_fails_at_once(store: Store) -> None:
    store.append_batch("events", [event("a")])
    git_dir = store.git().git_dir  # type: ignore[union-attr]
    lock = git_dir / "refs" / "heads" / "main.lock"
    lock.write_text("stale\n")
    with pytest.raises(UpstreamUnavailable, match=r"^store unavailable: .*main\.lock"):
        store.append_batch("events", [event("b")])
    lock.unlink()
    assert stream_ids(store) == ["a"]


def _batches(worker: int) -> list[list[dict[str, Any]]]:
    # Overlapping batches: every worker also writes ids shared with its neighbour, identically.
    return [
        [event(f"w{worker}-{n}-{i}") for i in range(3)] + [event(f"shared-{(worker + n) % 5}-{n}")]
        for n in range(6)
    ]


def _expected_ids(workers: int) -> set[str]:
    return {r["id"] for w in range(workers) for batch in _batches(w) for r in batch}


def _process_worker(path: str, index_path: str, worker: int) -> None:
    store = Store(Path(path), index_path=Path(index_path), segment_max_records=7)
    for batch in _batches(worker):
        store.append_batch("events", batch)


def test_eight_threads_lose_and_duplicate_nothing(make_store: Any) -> None:
    store = make_store(segment_max_records=7)
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            for batch in _batches(worker):
                store.append_batch("events", batch)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    ids = stream_ids(store)
    assert len(ids) == len(set(ids))
    assert set(ids) == _expected_ids(8)
    with store.snapshot() as view:
        assert view.select("events", RecordFilter(), 1000).total == len(ids)
    check_invariants(store)


def test_four_processes_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    path = tmp_path / "store"
    Store(path).append_batch("events", [event("seed")])
    context = multiprocessing.get_context("spawn")
    procs = [
        context.Process(target=_process_worker, args=(str(path), str(tmp_path / "shared.sqlite3"), w)) for w in range(4)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
    assert [proc.exitcode for proc in procs] == [0, 0, 0, 0]
    store = Store(path, index_path=tmp_path / "shared.sqlite3", segment_max_records=7)
    ids = stream_ids(store)
    assert len(ids) == len(set(ids))
    assert set(ids) == _expected_ids(4) | {"seed"}
    with store.snapshot() as view:
        assert [r["id"] for r in view.select("events", RecordFilter(), 1000).records] == ids
    check_invariants(store)


def test_a_reader_looping_during_writes_sees_only_whole_batches(make_store: Any) -> None:
    store = make_store(segment_max_records=5)
    reader_store = Store(store.path, index_path=store.index_path)
    done = threading.Event()
    seen_sizes: list[int] = []
    problems: list[str] = []

    def read() -> None:
        while not done.is_set():
            with reader_store.snapshot() as view:
                ids = [r["id"] for r in view.select("events", RecordFilter(), 10_000).records]
            batches: dict[str, int] = {}
            for record_id in ids:
                batches[record_id.split("-")[0]] = batches.get(record_id.split("-")[0], 0) + 1
            if any(count != 4 for count in batches.values()):
                problems.append(f"partial batch in {ids}")
            seen_sizes.append(len(ids))

    thread = threading.Thread(target=read)
    thread.start()
    try:
        for n in range(15):
            store.append_batch("events", [event(f"b{n}-{i}") for i in range(4)])
    finally:
        done.set()
        thread.join()
    assert problems == []
    assert seen_sizes == sorted(seen_sizes)
    check_invariants(store)
