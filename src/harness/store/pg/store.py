"""The PostgreSQL store (README "Moving the store to PostgreSQL"): the same streams, batches and answers as the git
store (docs/investigate.md §3), shared by every harness server that points at the database.

Appends are serialized by one transaction-scoped advisory lock per store: under it a batch reads the stored
duplicates, takes the next batch number and stream positions, inserts, and commits, so positions grow in commit
order (a reader's snapshot never holds a later position without every earlier one) and concurrent writers on
several machines neither lose nor duplicate a record. Reads run in one REPEATABLE READ transaction per call.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import psycopg_pool
from psycopg import sql

from harness.ledger.postgres import _describe, open_pool, pooled
from harness.store.append import AppendResult, EncodedBatch, StoredConflict, _document_survivors
from harness.store.baseline_model import Baseline
from harness.store.git import unavailable
from harness.store.index_schema import FILTER_COLUMNS, keyed_row
from harness.store.pg import schema
from harness.store.pg.view import PgView, batch_name, key_bytes, table
from harness.store.query import StoreView
from harness.store.streams import STREAMS, StreamSpec, stream_spec
from harness.text.canonjson import loads_line

# pg_advisory_xact_lock key of appends: the first 8 bytes of SHA-256("triage-harness.store.append").
APPEND_LOCK_KEY = 0x3D91F2B7A4C06E15
# Keys looked up per round trip of the duplicate probe.
PROBE_CHUNK = 10_000

_TIP = "SELECT coalesce(max(n), 0) FROM store.batches"


def _pg_unavailable(problem: str) -> Exception:
    return unavailable(f"PostgreSQL: {problem}")


class PgStore:
    """A store in schema `store` of one PostgreSQL database; see the module docstring."""

    backend = "postgresql"

    def __init__(self, pool: psycopg_pool.ConnectionPool, redact: Callable[[str], str]) -> None:
        self._pool = pool
        self._redact = redact
        self._baseline_lock = threading.Lock()
        self._baseline_cache: tuple[str, Baseline] | None = None

    def _unavailable(self, exc: BaseException) -> Exception:
        return unavailable(f"PostgreSQL: {_describe(exc, self._redact)}")

    def _connection(self) -> contextlib.AbstractContextManager[psycopg.Connection[Any]]:
        return pooled(self._pool, _pg_unavailable)

    def exists(self) -> bool:
        """A migrated database is a store (it may be empty)."""
        return True

    def create(self) -> None:
        """Nothing to do: `harness store migrate` creates the store."""

    def local_index_path(self) -> Path | None:
        """None: every server reads the shared database, so there is no local read index to keep derived ones."""
        return None

    def head(self) -> str:
        """The newest committed batch, or "" while the store is empty."""
        with self.snapshot() as view:
            return view.commit

    def _cached_baseline(self, digest: str) -> Baseline | None:
        with self._baseline_lock:
            cached = self._baseline_cache
        return cached[1] if cached is not None and cached[0] == digest else None

    def _cache_baseline(self, digest: str, baseline: Baseline) -> None:
        with self._baseline_lock:
            self._baseline_cache = (digest, baseline)

    @contextmanager
    def snapshot(self) -> Iterator[StoreView]:
        """One consistent view for a whole call: one REPEATABLE READ READ ONLY transaction."""
        with self._connection() as conn:
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                tip = conn.execute(_TIP).fetchone()[0]
                yield PgView(conn, batch_name(tip), self._cached_baseline, self._cache_baseline)
            except psycopg.Error as exc:
                raise self._unavailable(exc) from exc
            finally:
                if not conn.broken:
                    conn.rollback()

    def last_change(self, commit: str, stream: str) -> str:
        """The newest batch at or before `commit` that appended to `stream`, or ""."""
        if not commit:
            return ""
        with self._connection() as conn:
            try:
                row = conn.execute(
                    "SELECT coalesce(max(n), 0) FROM store.batches WHERE stream = %s AND n <= %s",
                    (stream_spec(stream).name, int(commit)),
                ).fetchone()
            except psycopg.Error as exc:
                raise self._unavailable(exc) from exc
        return batch_name(row[0])

    def append_encoded(
        self,
        stream: str,
        batch: EncodedBatch,
        *,
        checked_at: str | None = None,
        same: Callable[[bytes, bytes], bool] | None = None,
    ) -> AppendResult:
        """Append records already validated and encoded (see append.append_encoded) as one batch, all or nothing."""
        spec = stream_spec(stream)
        if not len(batch):
            return AppendResult(0, 0, "")
        with self._connection() as conn:
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK_KEY,))
                    return self._append_locked(conn, spec, batch, checked_at, same or bytes.__eq__)
            except psycopg.Error as exc:
                raise self._unavailable(exc) from exc

    def _append_locked(
        self,
        conn: psycopg.Connection[Any],
        spec: StreamSpec,
        batch: EncodedBatch,
        checked_at: str | None,
        same: Callable[[bytes, bytes], bool],
    ) -> AppendResult:
        tip = conn.execute(_TIP).fetchone()[0]
        if not spec.keyed:
            rows = conn.execute("SELECT line FROM store.baseline ORDER BY seq DESC LIMIT 1").fetchall()
            kept, skipped = _document_survivors(batch, bytes(rows[0][0]) + b"\n" if rows else b"")
        elif checked_at is not None and checked_at == batch_name(tip):
            kept, skipped = range(len(batch)), 0
        else:
            kept, skipped = _keyed_survivors(conn, spec, batch, same)
        if not kept:
            return AppendResult(0, skipped, "")
        n = tip + 1
        conn.execute(
            "INSERT INTO store.batches (n, stream, records) VALUES (%s, %s, %s)", (n, spec.name, len(kept))
        )
        base = conn.execute(sql.SQL("SELECT coalesce(max(seq), 0) FROM {}").format(table(spec.name))).fetchone()[0]
        lines = (batch[position][1] for position in kept)
        _copy_rows(conn, spec, n, base, lines)
        return AppendResult(len(kept), skipped, batch_name(n))

    def append_batch(self, stream: str, records: Iterable[Any]) -> AppendResult:
        """Validate every record (one failure rejects the batch), drop duplicates, and append as one batch."""
        from harness.store.store import encode_batch

        batch, skipped = encode_batch(stream, records)
        result = self.append_encoded(stream, batch)
        return AppendResult(result.added, result.skipped_duplicates + skipped, result.commit)

    def refresh_statistics(self) -> list[str]:
        """VACUUM (ANALYZE) every stream's table and the batches after a bulk append (`store copy`), so the planner
        knows the rows are there and a page total is counted from an index alone (the visibility map) instead of
        visiting every matching row; PostgreSQL's warnings (a role that does not own the tables is skipped, not
        refused)."""
        warnings: list[str] = []
        with self._connection() as conn:
            conn.add_notice_handler(lambda notice: warnings.append(str(notice.message_primary)))
            conn.autocommit = True
            try:
                # The batches too: every snapshot reads its tip, and last_change its (stream, n) index.
                for name in (*STREAMS, "batches"):
                    conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(table(name)))
            except psycopg.Error as exc:
                raise self._unavailable(exc) from exc
            finally:
                conn.autocommit = False
        return warnings

    def close(self) -> None:
        """Close the pool."""
        self._pool.close()


def _keyed_survivors(
    conn: psycopg.Connection[Any], spec: StreamSpec, batch: EncodedBatch, same: Callable[[bytes, bytes], bool]
) -> tuple[Sequence[int], int]:
    """Positions of records not stored yet; ones `same` as the stored line are skipped, others refused."""
    kept: list[int] = []
    skipped = 0
    query = sql.SQL("SELECT lid, line FROM {} WHERE lid = ANY(%s)").format(table(spec.name))
    for start in range(0, len(batch), PROBE_CHUNK):
        chunk = batch[start : start + PROBE_CHUNK]
        found = {bytes(lid): bytes(line) for lid, line in conn.execute(query, ([key_bytes(k) for k, _ in chunk],))}
        for offset, (key, line) in enumerate(chunk):
            stored = found.get(key_bytes(key))
            if stored is None:
                kept.append(start + offset)
            elif same(stored, line):
                skipped += 1
            else:
                raise StoredConflict(start + offset, str(loads_line(line)["id"]))
    return kept, skipped


def _copy_rows(conn: psycopg.Connection[Any], spec: StreamSpec, n: int, base: int, lines: Iterable[bytes]) -> None:
    """COPY the records into their stream table at positions base+1, base+2, ..."""
    if spec.keyed:
        filters = FILTER_COLUMNS[spec.name]
        columns = ("seq", "batch", "id", "lid", *filters, "ts", "line")
        types = ["int8", "int8", "text", "bytea", *(["bytea"] * len(filters)), "int8", "bytea"]
    else:
        columns, types = ("seq", "batch", "sha256", "line"), ["int8", "int8", "text", "bytea"]
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        table(spec.name), sql.SQL(", ").join(sql.Identifier(c) for c in columns)
    )
    with conn.cursor().copy(statement) as copy:
        copy.set_types(types)
        for seq, line in enumerate(lines, start=base + 1):
            if spec.keyed:
                # keyed_row: (seq, id, lid, *filters, ts, line), the SQLite index's row of the same record.
                row = keyed_row(spec.name, seq, loads_line(line), line)
                copy.write_row((seq, n, row[1], *(key_bytes(v) for v in row[2:-2]), row[-2], line))
            else:
                copy.write_row((seq, n, hashlib.sha256(line).hexdigest(), line))


def open_pg_store(dsn: str, *, connect: dict[str, Any], pool_max: int, redact: Callable[[str], str]) -> PgStore:
    """Connect, check the schema version (never migrating), and open the pool; a store behind the code's
    schema is `store unavailable: ... run harness store migrate`."""
    try:
        with psycopg.connect(dsn, **connect) as conn:
            schema.check_schema(conn.cursor())
    except psycopg.Error as exc:
        raise unavailable(f"PostgreSQL: {_describe(exc, redact)}") from exc
    pool = open_pool(
        dsn,
        connect,
        max_size=pool_max,
        timeout_s=connect["connect_timeout"],
        name="triage-harness-store",
        unavailable=_pg_unavailable,
    )
    return PgStore(pool, redact)
