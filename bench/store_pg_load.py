"""Load N generated events straight into a migrated PostgreSQL store, for benchmarks at 1M and 10M events (issue 12
scope 5), without the ingest path's per-batch duplicate probe.

The events are bench/store_bench.py's (same generator, same actors, types and sources). Each record goes through
the store's own encoding (streams.encode_record) and its own COPY of rows (store/pg/store.py _copy_rows, which
derives lid, the filter columns and ts as every append does), in batches of CHUNK records with one store.batches
row each, numbered after the store's tip, so the store's reads and `store copy`'s digest accept the result.
Generated ids are unique, so skipping the duplicate probe changes nothing stored.

Maintaining the events table's 33 indexes row by row bounds a load (about 11 minutes for 1M events), so the
load first drops every events index but the primary key, COPYs the rows into the bare table, and builds the
indexes again from the migration's own CREATE INDEX statements, each in one sorted pass; the unique index on lid
then proves again that no two ids collide. It needs a role that owns the tables (the superuser of a benchmark).

Usage: python bench/store_pg_load.py --dsn POSTGRESQL_URI --events N [--check]. `--check` then reads the store
back through its own API: the events count and digest against the loaded lines, get() of a sample of ids, and
actor+type totals of a sample of pairs against the generated events. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
from store_bench import ACTORS, TYPES, generate

from harness.store.copy import digest
from harness.store.pg import schema
from harness.store.pg.store import _TIP, APPEND_LOCK_KEY, PgStore, _copy_rows, open_pg_store
from harness.store.query import RecordFilter
from harness.store.streams import encode_record, stream_spec

CHUNK = 10_000
SAMPLE = 20
CONNECT = {"connect_timeout": 10}
_EVENT_INDEX = re.compile(r"CREATE (?:UNIQUE )?INDEX (\w+) ON store\.events [^;]*;")


def _event_indexes() -> list[tuple[str, str]]:
    """(name, CREATE statement) of every secondary index the migrations give store.events."""
    text = "\n".join(migration.sql for migration in schema.shipped())
    return [(match.group(1), match.group(0)) for match in _EVENT_INDEX.finditer(text)]


def rebuild_indexes(conn: psycopg.Connection[Any], indexes: list[tuple[str, str]]) -> float:
    """Build the dropped indexes again, each in one sorted pass; the seconds it took."""
    started = time.perf_counter()
    conn.execute("SET maintenance_work_mem = '1GB'")
    conn.execute("SET max_parallel_maintenance_workers = 2")
    for _, create in indexes:
        conn.execute(create)
    return time.perf_counter() - started


def load(dsn: str, events_file: Path) -> dict[str, Any]:
    """Append every line of `events_file` as store events, CHUNK per batch; the count, digest and samples to check."""
    spec = stream_spec("events")
    hasher = hashlib.sha256()
    rng = random.Random(5)
    pairs = {(f"actor-{rng.randrange(ACTORS):04d}", rng.choice(TYPES)) for _ in range(SAMPLE)}
    totals: collections.Counter[tuple[str, str]] = collections.Counter()
    sample_ids: list[str] = []
    count = 0
    indexes = _event_indexes()
    # Autocommit, so each `transaction()` below is one committed batch rather than a savepoint of one long one.
    with psycopg.connect(dsn, autocommit=True, **CONNECT) as conn, events_file.open("rb") as lines:
        if conn.execute("SELECT count(*) FROM store.batches").fetchone()[0]:
            raise SystemExit("--dsn: the store is not empty; the load needs a freshly migrated store")
        with conn.transaction():
            for name, _ in indexes:
                conn.execute(f"DROP INDEX store.{name}")
        conn.execute("SET synchronous_commit = off")
        chunk: list[bytes] = []

        def flush() -> None:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK_KEY,))
                n = conn.execute(_TIP).fetchone()[0] + 1
                conn.execute("INSERT INTO store.batches (n, stream, records) VALUES (%s, 'events', %s)", (n, len(chunk)))
                base = conn.execute("SELECT coalesce(max(seq), 0) FROM store.events").fetchone()[0]
                _copy_rows(conn, spec, n, base, chunk)
            chunk.clear()

        for raw in lines:
            record, line = encode_record(spec, json.loads(raw))
            hasher.update(line + b"\n")
            if (record["actor"], record["type"]) in pairs:
                totals[(record["actor"], record["type"])] += 1
            if count % 997 == 0 and len(sample_ids) < SAMPLE:
                sample_ids.append(record["id"])
            chunk.append(line)
            count += 1
            if len(chunk) == CHUNK:
                flush()
        if chunk:
            flush()
        index_s = rebuild_indexes(conn, indexes)
    return {"count": count, "index_build_s": round(index_s, 1), "sha256": hasher.hexdigest(), "ids": sample_ids,
            "totals": {f"{a}|{t}": totals[(a, t)] for a, t in sorted(pairs)}}


def check(store: PgStore, expected: dict[str, Any]) -> list[str]:
    """What the store's own reads disagree on with the loaded lines ([] when nothing)."""
    problems = []
    count, sha = digest(store, "events")
    if (count, sha) != (expected["count"], expected["sha256"]):
        problems.append(f"events digest: stored {count} {sha}, loaded {expected['count']} {expected['sha256']}")
    with store.snapshot() as view:
        for stored_id in expected["ids"]:
            if view.resolve("events", stored_id) != (stored_id,) or view.get("events", stored_id) is None:
                problems.append(f"id {stored_id} does not resolve to its record")
        for pair, total in expected["totals"].items():
            actor, type_ = pair.split("|")
            page = view.select("events", RecordFilter(actor=actor, type=type_), 200)
            stamps = [record["timestamp"] for record in page.records]
            if page.total != total or stamps != sorted(stamps) or len(page.records) != min(total, 200):
                problems.append(f"actor {actor} type {type_}: total {page.total}, generated {total}")
    return problems


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="a postgresql:// URI of a migrated store database")
    parser.add_argument("--events", type=int, required=True, help="events to generate and load")
    parser.add_argument("--check", action="store_true", help="read the store back through its API and compare")
    args = parser.parse_args(argv)
    if args.events < 1:
        parser.error("--events: must be at least 1")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pgstore-load-") as tmp:
        events_file = Path(tmp) / "events.jsonl"
        generate(events_file, args.events)
        expected = load(args.dsn, events_file)
    report: dict[str, Any] = {"events": expected["count"], "index_build_s": expected["index_build_s"],
                              "load_wall_s": round(time.perf_counter() - started, 1)}
    with psycopg.connect(args.dsn, autocommit=True, **CONNECT) as conn:
        conn.execute("VACUUM ANALYZE store.events")
    if args.check:
        store = open_pg_store(args.dsn, connect=CONNECT, pool_max=2, redact=str)
        try:
            problems = check(store, expected)
        finally:
            store.close()
        report.update(checked=not problems, problems=problems)
    print(json.dumps(report, sort_keys=True))
    if args.check and problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
