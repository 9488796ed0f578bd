"""PostgreSQL ledger benchmarks (docs/ledger.md §15) on loopback: start-insert latency, one-connection throughput,
insert_many (pipeline), chain overhead.

Usage: python bench/ledger_pg_bench.py [--quick] [--rows N] [--dsn SUPERUSER_DSN]. Without --dsn it reads
HARNESS_TEST_PG_DSN; with neither it prints the document with no results and a `skipped` reason. It creates a
randomly named database, migrates it, measures, and drops it. Baselines run in the same database: a bare
table (`LIKE ledger.tool_invocations`: same columns, no constraints, indexes, triggers or chain), and the
same store with a constant-hash hook for the chain overhead.
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from _common import emit, median, percentile, row
from ledger_sqlite_bench import (
    BATCH,
    CALLERS,
    bench_redactor,
    concurrency_ratio,
    constant_hash,
    prepared_rows,
    sample_events,
    utc_now,
)
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from harness.ledger import chain
from harness.ledger.dialect import ROW_COLUMNS
from harness.ledger.model import LedgerRow
from harness.ledger.postgres import DIALECT, migrate_postgres, open_postgres_store
from harness.ledger.settings import LedgerSettings
from harness.ledger.sqlcore import SqlStore
from harness.text.redact import RULESET_VERSION, Redactor

_BARE_INSERT = "INSERT INTO public.bench_bare ({}) VALUES ({})".format(
    ", ".join(ROW_COLUMNS),
    ", ".join("%s::jsonb" if c == "meta" else "%s" for c in ROW_COLUMNS)
)


@contextmanager
def bench_database(admin_dsn: str, prefix: str = "harness_bench") -> Iterator[str]:
    """A fresh, migrated database (DSN yielded); dropped afterwards."""
    name = f"{prefix}_{secrets.token_hex(4)}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(admin_dsn, dbname=name)
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def timed_inserts(store: SqlStore, count: int, tag: str) -> list[float]:
    """Per-insert latencies in seconds of synchronous single start rows."""
    latencies = []
    for event in sample_events(count, tag=tag):
        started = time.perf_counter()
        store.insert(event)
        latencies.append(time.perf_counter() - started)
    return latencies


def bare_latencies(conn: psycopg.Connection, rows: list[LedgerRow]) -> list[float]:
    latencies = []
    for r in rows:
        params = DIALECT.row_params(r)
        started = time.perf_counter()
        conn.execute(_BARE_INSERT, params)
        latencies.append(time.perf_counter() - started)
    return latencies


def bare_batches(conn: psycopg.Connection, rows: list[LedgerRow]) -> float:
    started = time.perf_counter()
    for first in range(0, len(rows), BATCH):
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(_BARE_INSERT, [DIALECT.row_params(r) for r in rows[first : first + BATCH]])
    return len(rows) / (time.perf_counter() - started)


def store_batches(store: SqlStore, count: int, tag: str) -> float:
    events = sample_events(count, tag=tag)
    started = time.perf_counter()
    for first in range(0, len(events), BATCH):
        store.insert_many(events[first : first + BATCH])
    return len(events) / (time.perf_counter() - started)


def measure(dsn: str, rows: int, redactor: Redactor, quick: bool) -> list[dict[str, Any]]:
    migrate_postgres(dsn, settings=LedgerSettings(), redact=redactor.redact)

    def open_store(hasher: Callable[[tuple[Any, ...]], bytes] = chain.hash_values, pool: int = 1) -> SqlStore:
        return open_postgres_store(
            dsn,
            redactor=redactor,
            clock=utc_now,
            settings=LedgerSettings(pool_max=pool),
            redaction_version=RULESET_VERSION,
            hasher=hasher,
        )

    store, constant = open_store(), open_store(constant_hash)
    with psycopg.connect(dsn, autocommit=True) as bare:
        bare.execute("CREATE TABLE public.bench_bare (LIKE ledger.tool_invocations INCLUDING DEFAULTS)")
        timed_inserts(store, min(rows, 50), "warmup")
        latencies = timed_inserts(store, rows, "single")
        base = bare_latencies(bare, prepared_rows(redactor, sample_events(rows, tag="bare")))
        many = store_batches(store, rows * 4, "many")
        many_bare = bare_batches(bare, prepared_rows(redactor, sample_events(rows * 4, tag="bare2")))

    p50, p99, b50, b99 = (percentile(v, p) * 1000 for v in (latencies, base) for p in (50, 99))
    throughput, bare_throughput = len(latencies) / sum(latencies), len(base) / sum(base)
    rates: dict[str, list[float]] = {"chained": [], "constant": []}
    pair = [(store, "chained"), (constant, "constant")]
    for n in range(6 if quick else 30):
        # Alternate which store goes first, so neither side always meets a warmer server.
        for each, label in pair if n % 2 == 0 else pair[::-1]:
            sample = timed_inserts(each, max(20, rows // 30), f"{label}{n}")
            rates[label].append(len(sample) / sum(sample))
    store.close()
    constant.close()
    # One connection per caller: the server's WAL flush is what concurrent commits share (docs/decisions.md,
    # "Ledger storage and group commit").
    pooled = open_store(pool=CALLERS)
    many_rate, one_rate, concurrency = concurrency_ratio(pooled, per_caller=max(10, rows // 40))
    pooled.close()
    chained_rate, constant_rate = median(rates["chained"]), median(rates["constant"])
    overhead = (constant_rate / chained_rate - 1) * 100
    return [
        row("pg.start_insert_p50", p50, "ms", target="<= 1 ms", meets_target=p50 <= 1, baseline=b50, ratio=p50 / b50),
        row("pg.start_insert_p99", p99, "ms", target="<= 5 ms", meets_target=p99 <= 5, baseline=b99, ratio=p99 / b99),
        row(
            "pg.one_connection_inserts",
            throughput,
            "rows/s",
            target=">= 2000 rows/s",
            meets_target=throughput >= 2000,
            baseline=bare_throughput,
            ratio=throughput / bare_throughput,
        ),
        row(
            "pg.insert_many_pipeline",
            many,
            "rows/s",
            target=">= 10000 rows/s",
            meets_target=many >= 10000,
            baseline=many_bare,
            ratio=many / many_bare,
        ),
        row(
            "pg.concurrent_16_callers",
            many_rate,
            "rows/s",
            target=">= 3x one caller",
            meets_target=concurrency >= 3,
            baseline=one_rate,
            ratio=concurrency,
        ),
        row(
            "pg.chain_overhead_single_row",
            overhead,
            "%",
            target="<= 15 %",
            meets_target=overhead <= 15,
            baseline=constant_rate,
            ratio=chained_rate / constant_rate,
        ),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run")
    parser.add_argument("--rows", type=int, default=None, help="single-row inserts per figure")
    parser.add_argument("--dsn", default=None, help="a superuser DSN (default: HARNESS_TEST_PG_DSN)")
    parser.add_argument("--db-prefix", default="harness_bench", help="name prefix of the database it creates")
    args = parser.parse_args(argv)
    dsn = args.dsn or os.environ.get("HARNESS_TEST_PG_DSN", "")
    if not dsn:
        emit("ledger_pg", [], skipped="no PostgreSQL DSN: pass --dsn or set HARNESS_TEST_PG_DSN")
        return
    # The bench connects as a superuser, which the store rightly warns about; the warning is not a figure.
    logging.getLogger("harness.ledger").setLevel(logging.ERROR)
    redactor = bench_redactor()
    with bench_database(dsn, args.db_prefix) as db_dsn:
        host = conninfo_to_dict(db_dsn).get("host", "")
        results = measure(db_dsn, args.rows or (100 if args.quick else 2000), redactor, args.quick)
    emit("ledger_pg", results, server={"host": host})


if __name__ == "__main__":
    main()
