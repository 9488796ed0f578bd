"""SQLite ledger benchmarks (docs/ledger.md §15): durable single-row inserts, 500-row insert_many, chain overhead.

Usage: python bench/ledger_sqlite_bench.py [--quick] [--rows N]. Prints one JSON object on stdout:
{"bench", "machine", "results": [{"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}]}.
Baselines are measured in the same run: a bare table (same columns and pragmas; no triggers, indexes,
constraints or chain) for the insert figures, and the same store with a constant-hash hook for the chain.
"""

from __future__ import annotations

import argparse
import datetime
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import emit, median, row

from harness.ledger import chain
from harness.ledger.dialect import ROW_COLUMNS
from harness.ledger.model import LedgerEvent, LedgerRow, build_row
from harness.ledger.redaction_boundary import prepare
from harness.ledger.settings import LedgerSettings
from harness.ledger.sqlcore import SqlStore
from harness.ledger.sqlite import DIALECT, open_sqlite_store
from harness.text.redact import RULESET_VERSION, KnownSecrets, Redactor, build_redactor

BATCH = 500
# Concurrent callers of the group-commit figure (docs/decisions.md, "Ledger storage and group commit").
CALLERS = 16
ARGUMENTS = '{"actor":"admin-user","limit":100,"since":"2026-01-01T00:00:00Z","types":["login","role_assignment"]}'


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def bench_redactor() -> Redactor:
    """The production redactor with a few registered known secrets, as config.py would build it."""
    known = KnownSecrets()
    for n in range(4):
        known.add(f"bench-known-secret-value-{n:02d}-7f3a9c", f"BENCH_TOKEN_{n}")
    return build_redactor(known)


def sample_events(count: int, *, tag: str, conversations: int = 8) -> list[LedgerEvent]:
    """Start rows shaped like a dispatcher's: canonical JSON arguments and start-row meta."""
    meta = {"surface": "cli", "harness_version": "0.1.0", "conversation_source": "generated"}
    return [
        LedgerEvent(
            f"{tag}-c{n % conversations}",
            f"{tag}-r{n}",
            f"call-{n}",
            "search_events",
            "start",
            arguments=ARGUMENTS,
            meta=meta,
        )
        for n in range(count)
    ]


def constant_hash(values: tuple[Any, ...]) -> bytes:
    """The bench-only hook: a store that skips the SHA-256 chain work."""
    return chain.ZERO_HASH


def prepared_rows(redactor: Redactor, events: Sequence[LedgerEvent]) -> list[LedgerRow]:
    """The rows a store would write, for the bare-table baseline."""
    now = utc_now()
    return [
        build_row(
            prepare(e, redactor, redaction_version=RULESET_VERSION, now=now),
            seq=n + 1,
            chain_seq=n + 1,
            prev_hash=chain.ZERO_HASH,
        )
        for n, e in enumerate(events)
    ]


def bare_table(path: Path) -> sqlite3.Connection:
    """Same columns and pragmas as the ledger, nothing else."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute(f"CREATE TABLE bare ({', '.join(ROW_COLUMNS)})")
    return conn


def rate(count: int, work: Callable[[], None]) -> float:
    started = time.perf_counter()
    work()
    return count / (time.perf_counter() - started)


def bare_single(conn: sqlite3.Connection, rows: list[LedgerRow]) -> float:
    insert = f"INSERT INTO bare VALUES ({', '.join('?' * len(ROW_COLUMNS))})"

    def work() -> None:
        for r in rows:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(insert, DIALECT.row_params(r))
            conn.execute("COMMIT")

    return rate(len(rows), work)


def bare_batches(conn: sqlite3.Connection, rows: list[LedgerRow]) -> float:
    insert = f"INSERT INTO bare VALUES ({', '.join('?' * len(ROW_COLUMNS))})"

    def work() -> None:
        for start in range(0, len(rows), BATCH):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(insert, [DIALECT.row_params(r) for r in rows[start : start + BATCH]])
            conn.execute("COMMIT")

    return rate(len(rows), work)


def store_single(store: SqlStore, events: list[LedgerEvent]) -> float:
    def work() -> None:
        for event in events:
            store.insert(event)

    return rate(len(events), work)


def store_batches(store: SqlStore, events: list[LedgerEvent]) -> float:
    def work() -> None:
        for start in range(0, len(events), BATCH):
            store.insert_many(events[start : start + BATCH])

    return rate(len(events), work)


def concurrent_rate(store: SqlStore, callers: int, per_caller: int, tag: str) -> float:
    """Start rows/s of `callers` threads each writing single rows into a conversation of its own, all at once."""
    batches = [sample_events(per_caller, tag=f"{tag}-{n}", conversations=1) for n in range(callers)]
    ready = threading.Barrier(callers + 1)

    def caller(events: list[LedgerEvent]) -> None:
        ready.wait()
        for event in events:
            store.insert(event)

    threads = [threading.Thread(target=caller, args=(b,)) for b in batches]
    for t in threads:
        t.start()
    ready.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    return callers * per_caller / (time.perf_counter() - started)


def concurrency_ratio(store: SqlStore, per_caller: int, rounds: int = 3) -> tuple[float, float, float]:
    """(median 16-caller rate, median one-caller rate, median of the per-round ratios), rounds interleaved."""
    many, one, ratios = [], [], []
    for n in range(rounds):
        single = concurrent_rate(store, 1, per_caller * 4, f"one{n}")
        sixteen = concurrent_rate(store, CALLERS, per_caller, f"many{n}")
        one.append(single)
        many.append(sixteen)
        ratios.append(sixteen / single)
    return median(many), median(one), median(ratios)


def chain_overhead(chained: SqlStore, constant: SqlStore, count: int, rounds: int) -> tuple[float, float]:
    """Single-row rates of the pair: medians over interleaved rounds, so that disk noise hits both alike."""
    rates: dict[str, list[float]] = {"chained": [], "constant": []}
    pair = [(chained, "chained"), (constant, "constant")]
    for n in range(rounds):
        # Alternate which store goes first, so checkpoints and cache warmth do not favour one side.
        for store, tag in pair if n % 2 == 0 else pair[::-1]:
            rates[tag].append(store_single(store, sample_events(count, tag=f"{tag}{n}")))
    return median(rates["chained"]), median(rates["constant"])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run")
    parser.add_argument("--rows", type=int, default=None, help="rows per figure")
    args = parser.parse_args(argv)
    single_rows = args.rows or (200 if args.quick else 3000)
    batch_rows = args.rows or (2 * BATCH if args.quick else 40 * BATCH)
    redactor = bench_redactor()
    settings = LedgerSettings()
    results = []
    with tempfile.TemporaryDirectory(prefix="ledger-sqlite-bench-") as tmp:
        root = Path(tmp)

        def open_store(name: str, hasher: Callable[[tuple[Any, ...]], bytes] = chain.hash_values) -> SqlStore:
            return open_sqlite_store(
                root / name,
                redactor=redactor,
                clock=utc_now,
                settings=settings,
                redaction_version=RULESET_VERSION,
                hasher=hasher,
            )

        store = open_store("single.sqlite3")
        bare = bare_table(root / "bare.sqlite3")
        single = store_single(store, sample_events(single_rows, tag="single"))
        single_bare = bare_single(bare, prepared_rows(redactor, sample_events(single_rows, tag="bare")))
        results.append(
            row(
                "sqlite.single_row_inserts",
                single,
                "rows/s",
                target=">= 5000 rows/s",
                meets_target=single >= 5000,
                baseline=single_bare,
                ratio=single / single_bare,
            )
        )

        batches = store_batches(open_store("batch.sqlite3"), sample_events(batch_rows, tag="batch"))
        batches_bare = bare_batches(bare, prepared_rows(redactor, sample_events(batch_rows, tag="bare2")))
        results.append(
            row(
                "sqlite.insert_many_500",
                batches,
                "rows/s",
                target=">= 20000 rows/s",
                meets_target=batches >= 20000,
                baseline=batches_bare,
                ratio=batches / batches_bare,
            )
        )

        concurrent = open_store("concurrent.sqlite3")
        per_caller = max(10, single_rows // 40)
        many, one, ratio = concurrency_ratio(concurrent, per_caller)
        # The mechanism, free of this machine's scheduling noise: rows per COMMIT (per WAL sync) with 16 callers.
        commits = []
        concurrent._writer.set_trace_callback(lambda sql: commits.append(1) if sql == "COMMIT" else None)
        concurrent_rate(concurrent, CALLERS, per_caller, "count")
        concurrent._writer.set_trace_callback(None)
        results.append(
            row(
                "sqlite.concurrent_16_callers",
                many,
                "rows/s",
                target=">= 3x one caller",
                meets_target=ratio >= 3,
                baseline=one,
                ratio=ratio,
                rows_per_commit=round(CALLERS * per_caller / max(1, len(commits)), 2),
            )
        )

        chained, constant = chain_overhead(
            open_store("chained.sqlite3"),
            open_store("constant.sqlite3", constant_hash),
            count=max(25, single_rows // 30),
            rounds=6 if args.quick else 30,
        )
        overhead = (constant / chained - 1) * 100
        results.append(
            row(
                "sqlite.chain_overhead_single_row",
                overhead,
                "%",
                target="<= 15 %",
                meets_target=overhead <= 15,
                baseline=constant,
                ratio=chained / constant,
            )
        )
    emit("ledger_sqlite", results)


if __name__ == "__main__":
    main()
