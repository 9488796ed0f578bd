"""Shape CHECKs (docs/ledger.md §7.1, docs/ledger.md §14): raw SQL that bypasses the store is refused by the database itself.

PostgreSQL rows are written as the app login (a member of the app role); SQLite rows through a raw connection.
"""

from __future__ import annotations

import contextlib
import datetime
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from ledger_support import T0

from harness.ledger import chain, ids
from harness.ledger.dialect import ROW_COLUMNS, Dialect
from harness.ledger.model import LedgerEvent, build_row
from harness.ledger.postgres import DIALECT as PG_DIALECT
from harness.ledger.redaction_boundary import prepare
from harness.ledger.sqlite import DIALECT as SQLITE_DIALECT
from harness.ledger.store import LedgerStore
from harness.text.redact import Redactor

Row = dict[str, Any]
Insert = Callable[[Row], None]


def _columns(dialect: Dialect, redactor: Redactor, event: LedgerEvent, chain_seq: int) -> Row:
    prepared = prepare(event, redactor, redaction_version=1, now=T0)
    row = build_row(prepared, seq=1, chain_seq=chain_seq, prev_hash=chain.ZERO_HASH if chain_seq == 1 else b"\x01" * 32)
    return dict(zip(ROW_COLUMNS, dialect.row_params(row)))


@pytest.fixture
def raw(
    backend: str, store: LedgerStore, ledger_target: str, request: pytest.FixtureRequest
) -> Iterator[tuple[Dialect, Insert]]:
    """An insert function that writes one tool_invocations row with raw SQL (the conversation already exists)."""
    store.insert(LedgerEvent("conv-1", "0", "seed", "search_events", "start"))
    placeholders = ", ".join("?" + ("::jsonb" if c == "meta" and backend != "sqlite" else "") for c in ROW_COLUMNS)
    insert_sql = f"INSERT INTO {{t}} ({', '.join(ROW_COLUMNS)}) VALUES ({placeholders})"
    if backend == "sqlite":
        with contextlib.closing(sqlite3.connect(Path(ledger_target), isolation_level=None)) as conn:
            conn.execute("PRAGMA foreign_keys = ON")
            yield (
                SQLITE_DIALECT,
                lambda row: conn.execute(insert_sql.format(t="tool_invocations"), [row[c] for c in ROW_COLUMNS]),
            )
    else:
        with psycopg.connect(ledger_target, autocommit=True) as conn:
            sql = insert_sql.format(t="ledger.tool_invocations").replace("?", "%s")
            yield PG_DIALECT, lambda row: conn.execute(sql, [row[c] for c in ROW_COLUMNS])


def _start(**fields: Any) -> LedgerEvent:
    return LedgerEvent("conv-1", "1", ids.uuid7().hex, "search_events", "start", ts=T0, arguments="{}", **fields)


def _end(**fields: Any) -> LedgerEvent:
    base: dict[str, Any] = {"ended_at": T0, "duration_ms": 1, "status": "ok", "started_at": T0}
    base.update(fields)
    return LedgerEvent("conv-1", "1", ids.uuid7().hex, "search_events", "end", ts=T0, **base)


_counter = iter(range(100, 10**6))


def _row(dialect: Dialect, redactor: Redactor, event: LedgerEvent, /, **changes: Any) -> Row:
    row = _columns(dialect, redactor, event, next(_counter))
    row.update(changes)
    return row


def test_valid_rows_pass(raw: tuple[Dialect, Insert], redactor: Redactor) -> None:
    """The control: the unmodified rows are accepted, so each refusal below comes from its one change."""
    dialect, insert = raw
    insert(_row(dialect, redactor, _start(meta={"surface": "cli"})))
    insert(
        _row(
            dialect,
            redactor,
            _end(result_preview="x" * 3000, result_bytes=4000, result_sidecar_path="sidecars/c-1/x.result"),
        )
    )
    insert(_row(dialect, redactor, _end(status="error", error="internal_error: boom")))
    genesis = _columns(dialect, redactor, LedgerEvent("conv-2", "1", "g", "x", "start", ts=T0), 1)
    genesis["conversation_id"] = "conv-1"
    genesis["chain_seq"] = next(_counter)
    insert(genesis)


def _ts(dialect: Dialect) -> Any:
    return dialect.ts_to_db(T0)


START_VIOLATIONS: dict[str, Callable[[Dialect], Row]] = {
    "start with ended_at": lambda d: {"ended_at": _ts(d)},
    "start with status": lambda d: {"status": "ok"},
    "start with duration_ms": lambda d: {"duration_ms": 1},
    "start with error": lambda d: {"error": "x"},
    "start with a preview": lambda d: {"result_preview": "x", "preview_bytes": 1},
    "start with result_bytes": lambda d: {"result_bytes": 1},
    "start with result_truncated": lambda d: {"result_truncated": d.bool_to_db(False)},
    "start with a sidecar path": lambda d: {"result_sidecar_path": "sidecars/x"},
    "start with exit_code": lambda d: {"exit_code": 0},
    "start without started_at": lambda d: {"started_at": None},
    "arguments without args_bytes": lambda d: {"args_bytes": None},
    "args_bytes without arguments": lambda d: {"arguments": None},
    "8204-byte arguments": lambda d: {"arguments": "a" * 8204, "args_bytes": 9000},
    "args_bytes 0": lambda d: {"args_bytes": 0},
    "bad event": lambda d: {"event": "middle"},
    "bad conversation_id": lambda d: {"conversation_id": "conv 1"},
    "bad request_id": lambda d: {"request_id": "-1"},
    "bad tool_call_id": lambda d: {"tool_call_id": "a/b"},
    "bad tool_name": lambda d: {"tool_name": "Search"},
    "31-byte prev_hash": lambda d: {"prev_hash": b"\x01" * 31},
    "31-byte row_hash": lambda d: {"row_hash": b"\x01" * 31},
    "chain_seq 0": lambda d: {"chain_seq": 0},
    "genesis with a non-zero prev_hash": lambda d: {"chain_seq": 1, "prev_hash": b"\x01" * 32},
    "seq 0": lambda d: {"seq": 0},
    "redaction_version 0": lambda d: {"redaction_version": 0},
    "non-object meta": lambda d: {"meta": "[1]"},
    "string meta": lambda d: {"meta": '"x"'},
}

END_VIOLATIONS: dict[str, Callable[[Dialect], Row]] = {
    "end without status": lambda d: {"status": None},
    "end without ended_at": lambda d: {"ended_at": None},
    "end without duration_ms": lambda d: {"duration_ms": None},
    "end without result_truncated": lambda d: {"result_truncated": None},
    "end with arguments": lambda d: {"arguments": "{}", "args_bytes": 2},
    "error status without error": lambda d: {"status": "error"},
    "ok status with error": lambda d: {"error": "boom"},
    "bad status": lambda d: {"status": "maybe"},
    "negative duration": lambda d: {"duration_ms": -1},
    "preview without preview_bytes": lambda d: {"result_preview": "x"},
    "preview_bytes without preview": lambda d: {"preview_bytes": 1},
    "preview_bytes above result_bytes": lambda d: {"result_preview": "xx", "preview_bytes": 2, "result_bytes": 1},
    "sidecar path without truncated": lambda d: {
        "result_sidecar_path": "sidecars/x",
        "result_truncated": d.bool_to_db(False),
    },
    "2060-byte error": lambda d: {"status": "error", "error": "e" * 2060},
}


def _refused(insert: Insert, row: Row) -> None:
    with pytest.raises((sqlite3.IntegrityError, psycopg.errors.CheckViolation)) as caught:
        insert(row)
    assert "CHECK" in str(caught.value).upper() or isinstance(caught.value, psycopg.errors.CheckViolation)


@pytest.mark.parametrize("case", sorted(START_VIOLATIONS))
def test_start_row_violations(raw: tuple[Dialect, Insert], redactor: Redactor, case: str) -> None:
    dialect, insert = raw
    _refused(insert, _row(dialect, redactor, _start(), **START_VIOLATIONS[case](dialect)))


@pytest.mark.parametrize("case", sorted(END_VIOLATIONS))
def test_end_row_violations(raw: tuple[Dialect, Insert], redactor: Redactor, case: str) -> None:
    dialect, insert = raw
    _refused(insert, _row(dialect, redactor, _end(), **END_VIOLATIONS[case](dialect)))


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_sqlite_row_id_and_timestamp_formats(raw: tuple[Dialect, Insert], redactor: Redactor) -> None:
    dialect, insert = raw
    _refused(insert, _row(dialect, redactor, _start(), id="not-a-uuid"))
    _refused(insert, _row(dialect, redactor, _start(), ts="2026-01-02 03:04:05"))
    _refused(insert, _row(dialect, redactor, _start(), started_at=(T0 + datetime.timedelta(0)).isoformat()))
