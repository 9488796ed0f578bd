"""Ingestion (docs/investigate.md §5, docs/investigate.md §11 checks 1-2): formats, refusals with locations, duplicates, all-or-nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from store_support import EV_LINES, check_invariants, stream_ids

from harness.errors import InvalidInput
from harness.store import RecordFilter, Store
from harness.store import ingest as ingest_module
from harness.store.ingest import ingest_files


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _write(name: str, text: str | bytes) -> str:
    Path(name).write_bytes(text.encode() if isinstance(text, str) else text)
    return name


def _ingest(store: Store, stream: str, *paths: str, stdin: bytes = b"") -> dict[str, Any]:
    return ingest_files(store, stream, list(paths), stderr=io.StringIO(), stdin=io.BytesIO(stdin))


def _refusal(store: Store, stream: str, *paths: str, stdin: bytes = b"") -> str:
    head = store.head()
    with pytest.raises(InvalidInput) as caught:
        _ingest(store, stream, *paths, stdin=stdin)
    assert store.head() == head, "a refused ingest writes nothing"
    return caught.value.message


def test_acceptance_checks_1_and_2(workdir: Path, store: Store) -> None:
    _write("ev.jsonl", "\n".join(EV_LINES) + "\n")
    first = _ingest(store, "events", "ev.jsonl")
    assert first["added"] == 4 and first["skipped_duplicates"] == 0 and first["records"] == 4
    assert first == {"added": 4, "commit": store.head(), "files": 1, "records": 4, "rejected": 0, "skipped_duplicates": 0,
                     "stream": "events"}
    again = _ingest(store, "events", "ev.jsonl")
    assert (again["added"], again["skipped_duplicates"], again["commit"]) == (0, 4, "")
    _write("bad.jsonl", '{"id":"EVT-4","source":"azure","type":"login","actor":"mallory","timestamp":"2026-04-09T12:00:00Z"}\n')
    message = _refusal(store, "events", "bad.jsonl")
    assert message.startswith('bad.jsonl:1: id "EVT-4" already stored with different content')
    check_invariants(store)


def test_formats_array_jsonl_and_wrapped(workdir: Path, store: Store) -> None:
    records = [{"id": f"a{n}", "timestamp": "2026-04-10T09:00:00Z"} for n in range(3)]
    _write("array.json", "  \n" + json.dumps(records))
    _write("lines.jsonl", "\n\n" + json.dumps({"id": "b0", "timestamp": "2026-04-10T09:00:00Z"}) + "\r\n  \n"
           + json.dumps({"id": "b1", "timestamp": "2026-04-10T09:00:00Z"}))
    _write("wrapped-one-line.json", json.dumps({"events": [{"id": "c0", "timestamp": "2026-04-10T09:00:00Z"}]}) + "\n\n")
    _write("wrapped-pretty.json", json.dumps({"Events": [{"id": "d0", "timestamp": "2026-04-10T09:00:00Z"}]}, indent=2))
    _write("empty.jsonl", "")
    _write("blank.jsonl", " \n\t\n")
    summary = _ingest(store, "events", "array.json", "lines.jsonl", "wrapped-one-line.json", "wrapped-pretty.json",
                      "empty.jsonl", "blank.jsonl")
    assert summary["files"] == 6 and summary["records"] == 7 and summary["added"] == 7
    assert stream_ids(store) == ["a0", "a1", "a2", "b0", "b1", "c0", "d0"]
    assert store.git() is not None and len(store.git().run("rev-list", "HEAD").split()) == 1  # type: ignore[union-attr]


def test_findings_wrapper_and_stdin(workdir: Path, store: Store) -> None:
    data = json.dumps({"FINDINGS": [{"id": "f1", "evidence": {"event_ids": ["e2", "e1"]}}]}).encode()
    summary = _ingest(store, "findings", "-", stdin=data)
    assert summary["added"] == 1
    with store.snapshot() as view:
        assert view.select("findings", RecordFilter(), 5).records[0]["event_ids"] == ["e1", "e2"]


def test_flat_record_example(workdir: Path, store: Store) -> None:
    flat = {"id": "e", "timestamp": "2026-04-10T09:00:00Z", "source": "aws", "event_type": "login", "actor": "a",
            "action": "x", "target": "y", "metadata": {"ip": "203.0.113.9"}}
    _ingest(store, "events", _write("flat.jsonl", json.dumps(flat)))
    (record,) = store.replay().records("events")
    assert record["payload"] == {"action": "x", "metadata": {"ip": "203.0.113.9"}, "target": "y"}
    assert record["type"] == "login"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xef\xbb\xbf[]", "f.json: unrecognized input format"),
        (b'"text"', "f.json: unrecognized input format"),
        (b"42", "f.json: unrecognized input format"),
        (b"id,timestamp\n", "f.json: unrecognized input format"),
        (b'{"id":"a","timestamp":"2026-04-10T09:00:00Z"}\n{"id":"\xff"}\n', "f.json:2: unrecognized input format (invalid UTF-8)"),
        (b'[{"id":"\xff"}]', "f.json: unrecognized input format (invalid UTF-8)"),
        (b'{"id":"a","timestamp":"2026-04-10T09:00:00Z"}\n\n{"id":"b","payload":{"k":1,"k":2}}\n',
         'f.json:3: duplicate key "k" at $.payload'),
        (b'{"id":"a","x":NaN}', "f.json:1: the constant NaN is not allowed"),
        (b'\n{"id":"\xff"}', "f.json:2: unrecognized input format (invalid UTF-8)"),
        (b'{"id":"a","timestamp":"2026-04-10T09:00:00Z"}\n{"id":"a","x":Infinity}', "f.json:2: the constant Infinity is not allowed"),
        (b'[{"id":"a","x":-Infinity}]', "f.json: the constant -Infinity is not allowed"),
        (b'[{"id":"a","x":1e400}]', 'f.json: number "1e400" overflows to infinity'),
        (b'[{"id":"a","x":9223372036854775808}]', 'f.json: integer "9223372036854775808" is outside the signed 64-bit range'),
        (b'[{"id":"a","timestamp":"2026-04-10T09:00:00Z"}, 3]', "f.json[1]: a record must be a JSON object, got an integer"),
        (b'{"events": [{"id":"a","timestamp":"2026-04-10T09:00:00Z"},\n {"id":"b"}]}', 'f.json[1]: field "timestamp": is required'),
        (b'{"events": []}\n{"id":"a","timestamp":"2026-04-10T09:00:00Z"}\n', 'f.json:1: field "id": is required'),
        (b'{\n"id": "a"\n}', "f.json: a JSON document spanning several lines must be an array of records"),
        (b'[{"id":"a","timestamp":"2026-04-10T09:00:00Z"}', "f.json: malformed JSON at line 1 column"),
    ],
)
def test_format_refusals(workdir: Path, store: Store, content: bytes, message: str) -> None:
    assert _refusal(store, "events", _write("f.json", content)).startswith(message)


def test_location_vector_of_the_spec(workdir: Path, store: Store) -> None:
    lines = EV_LINES[:2] + ['{"id":"x","timestamp":"2026-04-10 09:00"}']
    message = _refusal(store, "events", _write("ev.jsonl", "\n".join(lines)))
    assert message == ('ev.jsonl:3: field "timestamp": expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z, '
                       'got "2026-04-10 09:00"')


def test_all_or_nothing_across_files(workdir: Path, store: Store) -> None:
    _write("good.jsonl", EV_LINES[0])
    _write("bad.json", '[{"id":"ok","timestamp":"2026-04-10T09:00:00Z"},{"id":"","timestamp":"2026-04-10T09:00:00Z"}]')
    assert _refusal(store, "events", "good.jsonl", "bad.json") == 'bad.json[1]: field "id": must not be empty'
    assert store.git() is None
    assert _refusal(store, "events", "good.jsonl", "missing.jsonl") == "missing.jsonl: cannot read: No such file or directory"


def test_duplicates_within_the_run_and_against_the_store(workdir: Path, store: Store) -> None:
    _write("a.jsonl", '{"id":"e1","timestamp":"2026-04-10T09:00:00Z","actor":"x"}\n')
    _write("b.jsonl", '{"ID":"e1","Timestamp":"2026-04-10T11:00:00+02:00","Actor":"x"}\n{"id":"e2","timestamp":"2026-04-10T09:00:00Z"}\n')
    summary = _ingest(store, "events", "a.jsonl", "b.jsonl")
    assert (summary["added"], summary["skipped_duplicates"], summary["records"]) == (2, 1, 3)
    _write("c.json", '[{"id":"e3","timestamp":"2026-04-10T09:00:00Z"},{"id":"E3","timestamp":"2026-04-10T09:00:01Z"}]')
    assert _refusal(store, "events", "a.jsonl", "c.json") == (
        'c.json[1]: id "E3" appears earlier in this input (c.json[0]) with different content'
    )
    _write("d.jsonl", '\n{"id":"E2","timestamp":"2026-04-10T09:00:00Z"}')
    assert _refusal(store, "events", "d.jsonl") == 'd.jsonl:2: id "E2" already stored with different content'


class _RacingInput(io.BytesIO):
    """Stdin whose end, when reached, lets another writer store a conflicting record first."""

    def __init__(self, data: bytes, other: Store) -> None:
        super().__init__(data)
        self.other = other

    def readline(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        chunk = super().readline(size)
        if not chunk and self.other is not None:
            other, self.other = self.other, None  # type: ignore[assignment]
            other.append_batch("events", [{"id": "E9", "timestamp": "2026-04-10T09:00:00Z", "actor": "racer"}])
        return chunk


def test_a_conflict_stored_after_validation_is_reported_at_its_location(workdir: Path, store: Store) -> None:
    store.append_batch("events", [{"id": "seed", "timestamp": "2026-04-10T09:00:00Z"}])
    other = Store(store.path, index_path=workdir / "other.sqlite3")
    data = b'{"id":"e1","timestamp":"2026-04-10T09:00:00Z"}\n{"id":"e9","timestamp":"2026-04-10T09:00:00Z"}\n'
    with pytest.raises(InvalidInput) as caught:
        ingest_files(store, "events", ["-"], stderr=io.StringIO(), stdin=_RacingInput(data, other))
    assert caught.value.message == '<stdin>:2: id "e9" already stored with different content'
    assert stream_ids(store) == ["seed", "E9"]


def test_progress_is_reported_on_stderr_for_large_inputs(
    workdir: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_module, "PROGRESS_EVERY", 2)
    monkeypatch.setattr(ingest_module, "PROGRESS_MIN_BYTES", 100)
    _write("small.jsonl", "\n".join(json.dumps({"id": f"s{n}", "timestamp": "2026-04-10T09:00:00Z"}) for n in range(2)))
    _write("big.jsonl", "\n".join(json.dumps({"id": f"b{n}", "timestamp": "2026-04-10T09:00:00Z", "pad": "x" * 40})
                                  for n in range(5)))
    stderr = io.StringIO()
    ingest_files(store, "events", ["small.jsonl", "big.jsonl"], stderr=stderr)
    assert stderr.getvalue() == "ingest: big.jsonl: 2 records read\ningest: big.jsonl: 4 records read\n"


def test_baseline_ingest(workdir: Path, store: Store) -> None:
    _write("b.json", json.dumps({"knownActors": ["baron"], "actor_hours": {"baron": [9, 2, 9]}}))
    summary = _ingest(store, "baseline", "b.json")
    assert summary == {"added": 1, "commit": store.head(), "files": 1, "records": 1, "rejected": 0, "skipped_duplicates": 0,
                       "stream": "baseline"}
    assert _ingest(store, "baseline", "b.json")["skipped_duplicates"] == 1
    with store.snapshot() as view:
        assert view.latest_baseline().actor_hours == {"baron": [2, 9]}  # type: ignore[union-attr]
    _write("bad.json", json.dumps({"actor_hours": {"baron": [24]}}))
    assert _refusal(store, "baseline", "bad.json") == 'bad.json: field "actor_hours.baron[0]": must be an hour from 0 to 23, got 24'
