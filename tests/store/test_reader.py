"""Reading committed blobs (docs/investigate.md §3.4): anything unexpected is `store corrupt: ...`."""

from __future__ import annotations

import pytest
from store_support import commit_files, event, line

from harness.errors import UpstreamUnavailable
from harness.store import RecordFilter, Store

SEG1 = "events/00000001.jsonl"


def _init(store: Store) -> None:
    store.git(create=True)


CASES = [
    ({SEG1: line("a") + b"\n", "events/00000003.jsonl": line("b") + b"\n"},
     "store corrupt: events/00000003.jsonl: segment numbering gap (expected events/00000002.jsonl)"),
    ({"events/00000002.jsonl": line("a") + b"\n"},
     "store corrupt: events/00000002.jsonl: segment numbering gap (expected events/00000001.jsonl)"),
    ({SEG1: line("a") + b"\n", "events/notes.txt": b"hi\n"},
     "store corrupt: events/notes.txt: unexpected entry (not a segment file)"),
    ({SEG1: line("a") + b"\n", "events/sub/00000002.jsonl": line("b") + b"\n"},
     "store corrupt: events/sub/00000002.jsonl: unexpected entry (not a segment file)"),
    ({"events": b"not a directory\n"}, "store corrupt: events: unexpected entry (not a segment file)"),
    ({SEG1: line("a") + b"\n" + line("b")}, "store corrupt: events/00000001.jsonl line 2: missing final newline"),
    ({SEG1: b""}, "store corrupt: events/00000001.jsonl: empty segment"),
    ({SEG1: line("a") + b"\n" + line("b").replace(b'"id":"b"', b'"id":""') + b"\n"},
     'store corrupt: events/00000001.jsonl line 2: field "id": must not be empty'),
    ({SEG1: line("a") + b"\n" + line("A") + b"\n"},
     'store corrupt: events/00000001.jsonl line 2: id "A" is stored more than once (ignoring case)'),
    ({SEG1: line("a") + b"\n", "events/00000002.jsonl": line("x") + b"\n" + line("A") + b"\n"},
     'store corrupt: events/00000002.jsonl line 2: id "A" is stored more than once (ignoring case)'),
    ({SEG1: line("a").replace(b",", b", ") + b"\n"},
     "store corrupt: events/00000001.jsonl line 1: the line is not the canonical encoding of its record"),
    ({SEG1: line("a") + b"\n\n"},
     "store corrupt: events/00000001.jsonl line 2: malformed JSON at line 1 column 1: Expecting value"),
]


@pytest.mark.parametrize(("files", "message"), CASES)
def test_corruption_is_reported_with_its_location(store: Store, files: dict[str, bytes], message: str) -> None:
    _init(store)
    commit_files(store.git().git_dir, files)  # type: ignore[union-attr]
    with pytest.raises(UpstreamUnavailable) as through_index:
        with store.snapshot():
            pass
    assert through_index.value.message == message
    with pytest.raises(UpstreamUnavailable) as through_replay:
        store.replay()
    assert through_replay.value.message == message


def test_appending_onto_a_corrupt_stream_is_refused(store: Store) -> None:
    _init(store)
    commit_files(store.git().git_dir, {SEG1: line("a") + b"\n" + line("A") + b"\n"})  # type: ignore[union-attr]
    head = store.head()
    with pytest.raises(UpstreamUnavailable, match="store corrupt"):
        store.append_batch("events", [event("b")])
    assert store.head() == head


def test_lines_split_on_newline_bytes_only(store: Store) -> None:
    odd = event("odd", payload={"text": "a\u2028b\u0085c\u000bd\u001ce\rf"})
    store.append_batch("events", [odd, event("next")])
    with store.snapshot() as view:
        records = view.select("events", RecordFilter(), 10).records
    assert [r["id"] for r in records] == ["odd", "next"]
    assert records[0]["payload"]["text"] == "a\u2028b\u0085c\u000bd\u001ce\rf"
    assert [r["id"] for r in store.replay().records("events")] == ["odd", "next"]


def test_a_store_without_commits_or_without_a_stream_directory_is_empty(store: Store) -> None:
    _init(store)
    with store.snapshot() as view:
        assert view.commit == "" and view.select("events", RecordFilter(), 5).total == 0
    commit_files(store.git().git_dir, {"README": b"other content is ignored\n"})  # type: ignore[union-attr]
    with store.snapshot() as view:
        assert view.commit == store.head()
        assert view.select("findings", RecordFilter(), 5).total == 0
        assert view.latest_baseline() is None
