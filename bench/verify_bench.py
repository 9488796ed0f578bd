"""Verification throughput (docs/ledger.md §15): `verify` over a ledger of N rows (200,000 by default).

Usage: python bench/verify_bench.py [--quick] [--rows N] [--dsn SUPERUSER_DSN]. Prints one JSON object on stdout:
{"bench", "machine", "results": [{"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}]}.
The target applies to SQLite; PostgreSQL (--dsn, else HARNESS_TEST_PG_DSN, else skipped with a reason) is
recorded. The baseline is a SELECT-only scan of the same rows in the same order, measured in the same run.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psycopg
from _common import emit, row
from ledger_pg_bench import bench_database
from ledger_sqlite_bench import BATCH, bench_redactor, utc_now

from harness.ledger.dialect import ROW_COLUMNS
from harness.ledger.model import LedgerEvent
from harness.ledger.postgres import migrate_postgres, open_postgres_store
from harness.ledger.settings import LedgerSettings
from harness.ledger.sqlcore import SqlStore
from harness.ledger.sqlite import connect, open_sqlite_store
from harness.ledger.verify import verify
from harness.text.redact import RULESET_VERSION

CONVERSATIONS = 100
_SCAN = f"SELECT {', '.join(ROW_COLUMNS)} FROM {{table}} ORDER BY conversation_id, chain_seq"


def fill(store: SqlStore, rows: int) -> None:
    """`rows` rows: calls (start and end) spread over CONVERSATIONS conversations, written in 500-row batches."""
    events: list[LedgerEvent] = []
    for n in range(rows // 2):
        cid, rid = f"conv-{n % CONVERSATIONS:03d}", f"r{n}"
        start = LedgerEvent(cid, rid, "call", "search_events", "start", arguments='{"actor":"admin-user"}')
        now = utc_now()
        end = LedgerEvent(
            cid,
            rid,
            "call",
            "search_events",
            "end",
            ended_at=now,
            started_at=now,
            duration_ms=3,
            status="ok",
            result_preview='{"events":[]}',
            result_bytes=13,
            exit_code=0,
        )
        events += [start, end]
        if len(events) >= BATCH:
            store.insert_many(events)
            events = []
    if events:
        store.insert_many(events)


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def figure(name: str, rows: int, verify_s: float, scan_s: float, *, target: bool) -> dict[str, Any]:
    rate, scan_rate = rows / verify_s, rows / scan_s
    if target:
        return row(
            name,
            rate,
            "rows/s",
            target=">= 50000 rows/s",
            meets_target=rate >= 50_000,
            baseline=scan_rate,
            ratio=rate / scan_rate,
        )
    return row(name, rate, "rows/s", target="recorded", baseline=scan_rate, ratio=rate / scan_rate)


def sqlite_figure(rows: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="verify-bench-") as tmp:
        path = Path(tmp) / "ledger.sqlite3"
        store = open_sqlite_store(
            path, redactor=bench_redactor(), clock=utc_now, settings=LedgerSettings(), redaction_version=RULESET_VERSION
        )
        fill(store, rows)
        conn = connect(path, busy_timeout_ms=5000, query_only=True)
        scan_s, _ = timed(lambda: sum(1 for _ in conn.execute(_SCAN.format(table="tool_invocations"))))
        conn.close()
        verify_s, report = timed(lambda: verify(store))
        store.close()
    if not report["ok"] or report["rows"] != rows:
        raise SystemExit(f"verify did not pass over the bench ledger: {report['problems'][:3]}")
    return figure("sqlite.verify", rows, verify_s, scan_s, target=True)


def postgres_figure(admin_dsn: str, rows: int) -> dict[str, Any]:
    redactor = bench_redactor()
    with bench_database(admin_dsn) as dsn:
        migrate_postgres(dsn, settings=LedgerSettings(), redact=redactor.redact)
        store = open_postgres_store(
            dsn, redactor=redactor, clock=utc_now, settings=LedgerSettings(), redaction_version=RULESET_VERSION
        )
        fill(store, rows)
        with psycopg.connect(dsn) as conn, conn.cursor(name="scan") as cur:
            cur.itersize = 5000
            scan_s, _ = timed(lambda: (cur.execute(_SCAN.format(table="ledger.tool_invocations")), sum(1 for _ in cur)))
        verify_s, report = timed(lambda: verify(store))
        store.close()
    if not report["ok"] or report["rows"] != rows:
        raise SystemExit(f"verify did not pass over the bench ledger: {report['problems'][:3]}")
    return figure("pg.verify", rows, verify_s, scan_s, target=False)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run")
    parser.add_argument("--rows", type=int, default=None, help="rows in the verified ledger")
    parser.add_argument("--dsn", default=None, help="a superuser DSN (default: HARNESS_TEST_PG_DSN)")
    args = parser.parse_args(argv)
    rows = args.rows or (2_000 if args.quick else 200_000)
    results = [sqlite_figure(rows)]
    extra: dict[str, Any] = {"rows": rows}
    dsn = args.dsn or os.environ.get("HARNESS_TEST_PG_DSN", "")
    if dsn:
        # The bench connects as a superuser, which the store rightly warns about; the warning is not a figure.
        logging.getLogger("harness.ledger").setLevel(logging.ERROR)
        results.append(postgres_figure(dsn, rows))
    else:
        extra["skipped"] = "pg.verify: no PostgreSQL DSN: pass --dsn or set HARNESS_TEST_PG_DSN"
    emit("verify", results, **extra)


if __name__ == "__main__":
    main()
