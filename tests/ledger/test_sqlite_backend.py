"""SQLite specifics (docs/ledger.md §7.3, docs/ledger.md §10): the writer lock and busy timeout, read-only files, threads, sync levels."""

from __future__ import annotations

import contextlib
import datetime
import os
import sqlite3
import threading
from pathlib import Path

import pytest
from ledger_support import T0, FakeClock, open_test_store

from harness.ledger import sqlcore
from harness.ledger.errors import LedgerBackendError
from harness.ledger.model import LedgerEvent, end_event
from harness.ledger.redaction_boundary import prepare
from harness.ledger.sqlcore import needs_full_sync
from harness.ledger.sqlite import DIALECT
from harness.ledger.verify import verify
from harness.text.redact import Redactor


def _start(cid: str = "c", n: int = 1) -> LedgerEvent:
    return LedgerEvent(cid, str(n), f"k{n}", "search_events", "start")


def test_a_held_write_lock_makes_the_ledger_unavailable(tmp_path: Path, redactor: Redactor) -> None:
    path = tmp_path / "ledger.sqlite3"
    store = open_test_store(str(path), redactor, FakeClock(), busy_timeout_ms=50)
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(LedgerBackendError, match="locked"):
            store.insert(_start())
        other.execute("ROLLBACK")
    assert store.insert(_start()).inserted
    store.close()


def test_a_read_only_file_is_unavailable(tmp_path: Path, redactor: Redactor) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    path = tmp_path / "ledger.sqlite3"
    open_test_store(str(path), redactor, FakeClock()).close()
    path.chmod(0o400)
    with pytest.raises(LedgerBackendError):
        store = open_test_store(str(path), redactor, FakeClock())
        store.insert(_start())


def test_a_directory_that_cannot_hold_the_file_is_unavailable(tmp_path: Path, redactor: Redactor) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(LedgerBackendError, match="cannot create"):
        open_test_store(str(blocker / "ledger.sqlite3"), redactor, FakeClock())


def test_threads_share_one_store(tmp_path: Path, redactor: Redactor) -> None:
    store = open_test_store(str(tmp_path / "ledger.sqlite3"), redactor, FakeClock())

    def work(t: int) -> None:
        for n in range(25):
            row = store.insert(LedgerEvent("shared", f"t{t}-{n}", "k", "search_events", "start")).row
            store.insert(end_event(row, ended_at=row.ts, duration_ms=0, status="ok"))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rows = store.list_by_conversation("shared")
    assert [r.chain_seq for r in rows] == list(range(1, 201))
    assert sorted(r.seq for r in rows if r.event == "start") == list(range(1, 101))
    assert verify(store)["ok"] is True
    store.close()


def test_sync_level_per_batch(redactor: Redactor) -> None:
    start = prepare(_start(), redactor, redaction_version=1, now=T0)
    end = prepare(
        LedgerEvent("c", "1", "k1", "search_events", "end", ended_at=T0, duration_ms=0, status="ok"),
        redactor,
        redaction_version=1,
    )
    assert needs_full_sync([start], "normal") is True
    assert needs_full_sync([end], "normal") is False
    assert needs_full_sync([end], "full") is True
    assert needs_full_sync([end, start], "normal") is True


def test_end_sync_normal_still_records_ends(tmp_path: Path, redactor: Redactor) -> None:
    store = open_test_store(str(tmp_path / "ledger.sqlite3"), redactor, FakeClock(), end_sync="normal")
    row = store.insert(_start()).row
    store.insert(end_event(row, ended_at=row.ts + datetime.timedelta(seconds=1), duration_ms=1000, status="ok"))
    assert store.get_end("c", "1", "k1") is not None
    store.close()


@pytest.mark.parametrize(
    "template",
    [
        sqlcore._CALL_ROWS_ONE,
        sqlcore._CALL_ROWS_MANY.replace("{values}", "(?, ?, ?), (?, ?, ?)"),
        sqlcore._HEADS_STATE.replace("{values}", "SELECT ? AS cid UNION ALL SELECT ? AS cid"),
        sqlcore._HEAD,
        sqlcore._INSERT_IF_HEAD,
    ],
)
def test_write_path_reads_never_scan_the_table(tmp_path: Path, redactor: Redactor, template: str) -> None:
    path = tmp_path / "ledger.sqlite3"
    open_test_store(str(path), redactor, FakeClock()).close()
    query = DIALECT.sql(template)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        plan = [step for *_, step in conn.execute("EXPLAIN QUERY PLAN " + query, ["x"] * query.count("?"))]
    # Steps name the table or its alias `t`; each must be an index search, never a scan.
    reads = [step for step in plan if step.split()[1:2] in (["tool_invocations"], ["t"])]
    assert reads and all(step.startswith("SEARCH") for step in reads), plan
