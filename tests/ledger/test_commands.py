"""The operator command logic of `harness ledger …` (docs/ledger.md §12)."""

from __future__ import annotations

import datetime
import hashlib
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from ledger_support import T0, FakeClock, SqliteAdmin

from harness.errors import InvalidInput, NotFound
from harness.ledger import commands
from harness.ledger.errors import LedgerBackendError
from harness.ledger.model import LedgerEvent, end_event
from harness.ledger.settings import LedgerSettings
from harness.ledger.store import LedgerStore, open_store
from harness.ledger.verify import parse_heads_document
from harness.text.redact import Redactor

SECOND = datetime.timedelta(seconds=1)


def _call(
    store: LedgerStore, cid: str, n: int, *, at: datetime.datetime, status: str | None, tool: str = "search_events"
) -> None:
    row = store.insert(LedgerEvent(cid, str(n), f"call-{n}", tool, "start", ts=at, arguments="{}")).row
    if status is not None:
        error = "not_found: nothing" if status == "error" else None
        store.insert(
            end_event(
                row,
                ended_at=at + SECOND,
                duration_ms=1000,
                status=status,
                error=error,
                result_preview="{}",
                result_bytes=2,
                exit_code=1 if error else 0,
            )
        )


@pytest.fixture
def filled(store: LedgerStore) -> LedgerStore:
    _call(store, "conv-a", 1, at=T0, status="ok")
    _call(store, "conv-a", 2, at=T0 + 2 * SECOND, status="error", tool="get_raw_event")
    _call(store, "conv-b", 1, at=T0 + 4 * SECOND, status=None)
    _call(store, "conv-b", 2, at=T0 + 6 * SECOND, status="ok")
    return store


def _ids(doc: dict[str, Any]) -> list[tuple[str, int]]:
    return [(c["conversation_id"], c["seq"]) for c in doc["calls"]]


class TestList:
    def test_all_calls_newest_first(self, filled: LedgerStore, clock: FakeClock) -> None:
        doc = commands.list_calls(filled, clock=clock)
        assert _ids(doc) == [("conv-b", 2), ("conv-b", 1), ("conv-a", 2), ("conv-a", 1)]
        assert doc["truncated"] is False and doc["notes"] == ""
        first = doc["calls"][3]
        assert first == {
            "conversation_id": "conv-a",
            "request_id": "1",
            "tool_call_id": "call-1",
            "tool_name": "search_events",
            "seq": 1,
            "started_at": "2026-01-02T03:04:05.123456Z",
            "ended_at": "2026-01-02T03:04:06.123456Z",
            "duration_ms": 1000,
            "status": "ok",
            "error": None,
            "exit_code": 0,
            "result_bytes": 2,
            "result_truncated": False,
            "principal": "",
        }
        in_flight = doc["calls"][1]
        assert in_flight["status"] == "in_flight" and in_flight["ended_at"] is None

    @pytest.mark.parametrize(
        "options, expected",
        [
            ({"conversation": "conv-a"}, [("conv-a", 2), ("conv-a", 1)]),
            ({"tool": "get_raw_event"}, [("conv-a", 2)]),
            ({"status": "error"}, [("conv-a", 2)]),
            ({"status": "ok"}, [("conv-b", 2), ("conv-a", 1)]),
            ({"status": "in_flight"}, [("conv-b", 1)]),
            ({"since": "2026-01-02T03:04:07.123456Z"}, [("conv-b", 2), ("conv-b", 1), ("conv-a", 2)]),
            ({"until": "2026-01-02T03:04:07.123456Z"}, [("conv-a", 1)]),
            ({"in_flight_before": "2026-01-02T03:04:10Z"}, [("conv-b", 1)]),
            ({"in_flight_before": "2026-01-02T03:04:09Z"}, []),
            ({"limit": 2}, [("conv-b", 2), ("conv-b", 1)]),
        ],
    )
    def test_filters(self, filled: LedgerStore, clock: FakeClock, options: dict[str, Any], expected: list[Any]) -> None:
        doc = commands.list_calls(filled, clock=clock, **options)
        assert _ids(doc) == expected
        assert doc["truncated"] is (options == {"limit": 2})
        assert doc["notes"] == ("" if expected else "no calls matched")

    def test_principal_filter_reads_the_start_rows_caller(self, store: LedgerStore, clock: FakeClock) -> None:
        for n, principal in enumerate(["alice", "bob", "alice"], start=1):
            meta = {"caller": {"principal": principal, "auth_method": "oauth"}}
            event = LedgerEvent("conv-p", str(n), f"call-{n}", "test_echo", "start", ts=T0, arguments="{}", meta=meta)
            store.insert(event)
        store.insert(LedgerEvent("conv-old", "9", "call-9", "test_echo", "start", ts=T0, arguments="{}"))
        alice = commands.list_calls(store, clock=clock, principal="alice")["calls"]
        assert sorted((c["request_id"], c["principal"]) for c in alice) == [("1", "alice"), ("3", "alice")]
        everyone = commands.list_calls(store, clock=clock)["calls"]
        assert {c["request_id"]: c["principal"] for c in everyone}["9"] == ""
        assert commands.list_calls(store, clock=clock, principal="mallory")["calls"] == []
        with pytest.raises(InvalidInput, match="principal"):
            commands.list_calls(store, clock=clock, principal="")

    def test_in_flight_before_a_duration(self, filled: LedgerStore) -> None:
        late = FakeClock(T0 + datetime.timedelta(minutes=20))
        assert _ids(commands.list_calls(filled, clock=late, in_flight_before="15m")) == [("conv-b", 1)]
        early = FakeClock(T0 + datetime.timedelta(minutes=5))
        assert _ids(commands.list_calls(filled, clock=early, in_flight_before="15m")) == []
        assert commands.parse_cutoff("x", "2h", T0) == T0 - datetime.timedelta(hours=2)
        assert commands.parse_cutoff("x", "3d", T0) == T0 - datetime.timedelta(days=3)
        assert commands.parse_cutoff("x", "30s", T0) == T0 - datetime.timedelta(seconds=30)

    def test_conversations(self, filled: LedgerStore, clock: FakeClock) -> None:
        doc = commands.list_calls(filled, clock=clock, conversations=True)
        assert doc["conversations"] == [
            {
                "id": "conv-b",
                "created_at": "2026-01-02T03:04:09.123456Z",
                "calls": 2,
                "last_chain_seq": 3,
                "last_ts": "2026-01-02T03:04:12.123456Z",
            },
            {
                "id": "conv-a",
                "created_at": "2026-01-02T03:04:05.123456Z",
                "calls": 2,
                "last_chain_seq": 4,
                "last_ts": "2026-01-02T03:04:08.123456Z",
            },
        ]
        one = commands.list_calls(filled, clock=clock, conversations=True, conversation="conv-a", limit=1)
        assert [c["id"] for c in one["conversations"]] == ["conv-a"] and one["truncated"] is False

    @pytest.mark.parametrize(
        "options, field",
        [
            ({"limit": 0}, "limit"),
            ({"limit": 10_001}, "limit"),
            ({"status": "done"}, "status"),
            ({"since": "yesterday"}, "since"),
            ({"until": "2026-13-01T00:00:00Z"}, "until"),
            ({"in_flight_before": "15 minutes"}, "in_flight_before"),
            ({"in_flight_before": "1m", "status": "ok"}, "in_flight_before"),
            ({"tool": "Bad"}, "tool"),
            ({"conversation": "a b"}, "conversation"),
        ],
    )
    def test_invalid_options(self, filled: LedgerStore, clock: FakeClock, options: dict[str, Any], field: str) -> None:
        with pytest.raises(InvalidInput, match=f"^{field}: "):
            commands.list_calls(filled, clock=clock, **options)

    def test_limit_maximum_is_accepted(self, filled: LedgerStore, clock: FakeClock) -> None:
        assert len(commands.list_calls(filled, clock=clock, limit=10_000)["calls"]) == 4


class TestShow:
    def test_a_conversation(self, filled: LedgerStore) -> None:
        doc = commands.show(filled, "conv-a")
        conversation = doc["conversation"]
        assert conversation["id"] == "conv-a" and conversation["rows"] == 4
        assert conversation["created_at"] == "2026-01-02T03:04:05.123456Z"
        head = filled.heads("conv-a")[0]
        assert conversation["head"] == {"chain_seq": 4, "row_hash": head.row_hash.hex()}
        assert [r["chain_seq"] for r in doc["rows"]] == [1, 2, 3, 4] and doc["truncated"] is False
        row = doc["rows"][0]
        assert len(row) == 26 and row["status"] is None and row["prev_hash"] == "0" * 64
        assert row == filled.list_by_conversation("conv-a")[0].to_json()

    def test_call_offset_and_limit(self, filled: LedgerStore) -> None:
        assert [r["chain_seq"] for r in commands.show(filled, "conv-a", call="call-2")["rows"]] == [3, 4]
        page = commands.show(filled, "conv-a", after_chain_seq=1, limit=2)
        assert [r["chain_seq"] for r in page["rows"]] == [2, 3] and page["truncated"] is True

    def test_unknown_and_deleted_conversations(self, filled: LedgerStore, backend: str, admin: Any) -> None:
        with pytest.raises(NotFound, match="is not in the ledger"):
            commands.show(filled, "nobody")
        admin.delete_conversation("conv-a")
        with pytest.raises(NotFound, match="was deleted from the ledger"):
            commands.show(filled, "conv-a")

    @pytest.mark.parametrize("options", [{"limit": 0}, {"after_chain_seq": -1}, {"call": "a b"}])
    def test_invalid_options(self, filled: LedgerStore, options: dict[str, Any]) -> None:
        with pytest.raises(InvalidInput):
            commands.show(filled, "conv-a", **options)


class TestHeadAndExport:
    def test_head(self, filled: LedgerStore, clock: FakeClock, tmp_path: Path) -> None:
        doc = commands.head(filled, clock=clock)
        assert [h["conversation_id"] for h in doc["heads"]] == ["conv-a", "conv-b"]
        assert doc["backend"] == filled.backend
        only = commands.head(filled, clock=clock, conversation="conv-b")
        assert [h["conversation_id"] for h in only["heads"]] == ["conv-b"]
        out = tmp_path / "heads.json"
        written = commands.head(filled, clock=clock, output=out)
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
        assert json.loads(out.read_text()) == written
        assert parse_heads_document(out.read_text()) == filled.heads()
        assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    def test_export_is_canonical_ordered_and_repeatable(self, filled: LedgerStore) -> None:
        lines = list(commands.export_lines(filled))
        assert len(lines) == 7 and all(line.endswith("\n") for line in lines)
        objects = [json.loads(line) for line in lines]
        assert [(o["conversation_id"], o["chain_seq"]) for o in objects] == [
            ("conv-a", 1),
            ("conv-a", 2),
            ("conv-a", 3),
            ("conv-a", 4),
            ("conv-b", 1),
            ("conv-b", 2),
            ("conv-b", 3),
        ]
        for line, obj in zip(lines, objects):
            assert line == json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
        assert "".join(commands.export_lines(filled)) == "".join(lines)

    def test_export_filters(self, filled: LedgerStore) -> None:
        assert len(list(commands.export_lines(filled, conversations=["conv-b"]))) == 3
        since = list(commands.export_lines(filled, since="2026-01-02T03:04:09.123456Z"))
        assert [json.loads(x)["conversation_id"] for x in since] == ["conv-b"] * 3
        with pytest.raises(InvalidInput, match="^until: "):
            commands.export_lines(filled, until="soon")

    def test_export_to_a_file(self, filled: LedgerStore, tmp_path: Path) -> None:
        out = tmp_path / "export.jsonl"
        summary = commands.export_to_file(filled, out)
        data = out.read_bytes()
        assert summary == {
            "output": str(out),
            "rows": 7,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        assert data.decode() == "".join(commands.export_lines(filled))
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
        with pytest.raises(InvalidInput, match="^output: "):
            commands.export_to_file(filled, tmp_path / "missing-dir" / "x.jsonl")


class TestMissingLedger:
    """Reading commands on a workspace whose SQLite ledger does not exist answer as for an empty ledger."""

    def test_reads_are_empty_and_create_nothing(self, tmp_path: Path, redactor: Redactor, clock: FakeClock) -> None:
        path = tmp_path / "ledger.sqlite3"
        store = open_store(str(path), redactor=redactor, clock=clock, settings=LedgerSettings(), create=False)
        assert commands.list_calls(store, clock=clock) == {"calls": [], "truncated": False, "notes": "no calls matched"}
        assert commands.list_calls(store, clock=clock, conversations=True)["conversations"] == []
        report = commands.verify_ledger(store)
        assert report["ok"] is True and report["conversations"] == 0 and report["rows"] == 0
        assert commands.head(store, clock=clock)["heads"] == []
        assert list(commands.export_lines(store)) == []
        with pytest.raises(NotFound):
            commands.show(store, "conv-a")
        assert store.schema_version() == 0 and store.list_in_flight_before(T0) == []
        with pytest.raises(LedgerBackendError, match="read-only"):
            store.insert(LedgerEvent("c", "1", "k", "search_events", "start"))
        store.close()
        assert not path.exists() and list(tmp_path.iterdir()) == []

    def test_a_read_only_open_of_an_existing_ledger_refuses_writes(
        self, tmp_path: Path, redactor: Redactor, clock: FakeClock
    ) -> None:
        path = tmp_path / "ledger.sqlite3"
        writer = open_store(str(path), redactor=redactor, clock=clock, settings=LedgerSettings())
        writer.insert(LedgerEvent("c", "1", "k", "search_events", "start"))
        writer.close()
        reader = open_store(str(path), redactor=redactor, clock=clock, settings=LedgerSettings(), create=False)
        assert len(commands.list_calls(reader, clock=clock)["calls"]) == 1
        with pytest.raises(LedgerBackendError, match="read-only"):
            reader.insert(LedgerEvent("c", "2", "k", "search_events", "start"))
        reader.close()


SQLITE_APPLIED = [
    {"version": 1, "name": "initial"},
    {"version": 2, "name": "deletion_integrity"},
    {"version": 3, "name": "result_sidecars"},
    {"version": 4, "name": "open_calls"},
]


class TestMigrateSqlite:
    def test_fresh_then_current(self, tmp_path: Path, clock: FakeClock, redactor: Redactor) -> None:
        path = tmp_path / "ws" / "ledger.sqlite3"
        dry = commands.migrate(path, clock=clock, settings=LedgerSettings(), redactor=redactor, dry_run=True)
        assert dry == {
            "backend": "sqlite",
            "from_version": 0,
            "to_version": 4,
            "applied": SQLITE_APPLIED,
            "roles": {"owner": None, "app": None, "created": []},
            "dry_run": True,
        }
        assert not path.exists()
        done = commands.migrate(path, clock=clock, settings=LedgerSettings(), redactor=redactor)
        assert done["applied"] == SQLITE_APPLIED and done["dry_run"] is False
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        again = commands.migrate(path, clock=clock, settings=LedgerSettings(), redactor=redactor)
        assert (again["from_version"], again["applied"]) == (4, [])
        assert (
            commands.migrate(path, clock=clock, settings=LedgerSettings(), redactor=redactor, dry_run=True)["applied"]
            == []
        )
        query = "SELECT * FROM schema_migrations ORDER BY version"
        [(version, name, checksum, applied_at, applied_by), *later] = SqliteAdmin(path).query(query)
        assert len(later) == len(SQLITE_APPLIED) - 1
        assert (version, name, len(checksum), applied_by) == (1, "initial", 64, None)
        assert applied_at.endswith("Z") and len(applied_at) == 27

    def test_postgres_only_options(self, tmp_path: Path, clock: FakeClock, redactor: Redactor) -> None:
        with pytest.raises(InvalidInput, match="PostgreSQL"):
            commands.migrate(
                tmp_path / "l.sqlite3",
                clock=clock,
                settings=LedgerSettings(),
                redactor=redactor,
                admin_dsn="postgresql://x",
            )
