"""Reads of the PostgreSQL store inside one REPEATABLE READ transaction: the StoreView of store/query.py over the
tables of store/pg/migrations, answering as the SQLite read index does (store/index_queries.py)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg import sql

from harness.errors import InternalError
from harness.store.baseline_model import Baseline
from harness.store.index_queries import _encodable, _successor
from harness.store.index_schema import FILTER_COLUMNS
from harness.store.query import Page, RecordFilter, StoreView
from harness.text.canonjson import loads_line
from harness.text.casefold import ci_key
from harness.text.rfc3339 import MAX_INSTANT

_CURSOR_NAMES = itertools.count(1)
# Rows a named cursor fetches per round trip while a whole stream is read (a baseline build).
STREAM_FETCH = 5000


def key_bytes(value: str) -> bytes:
    """The stored form of a lower-cased key or filter value (a bytea column; see the migration's header)."""
    return value.encode("utf-8")


def table(stream: str) -> sql.Composed:
    """The table of one stream."""
    return sql.Identifier("store", stream)


def batch_name(n: int) -> str:
    """The commit name of batch `n` (what `ingest` prints and a baseline's `built_from_commit` holds)."""
    return str(n) if n else ""


class PgView(StoreView):
    """Every read of one call, on one connection inside one REPEATABLE READ READ ONLY transaction."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        commit: str,
        cached_baseline: Callable[[str], Baseline | None],
        cache_baseline: Callable[[str, Baseline], None],
    ) -> None:
        self.commit = commit
        self._conn = conn
        self._cached_baseline = cached_baseline
        self._cache_baseline = cache_baseline

    def _query(self, query: sql.Composable, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._conn.cursor() as cur:
            cur.execute(query, params)
            return cur.fetchall()

    def select(self, stream: str, flt: RecordFilter, limit: int) -> Page:
        if flt.ids is not None and not flt.ids:
            return Page()
        if not _encodable([flt.actor, flt.source, flt.type, flt.target, flt.ip, *(flt.ids or ())]):
            return Page()
        counting, paging, params = page_statements(stream, flt)
        total = self._query(counting, params)[0][0]
        if not total:
            return Page()
        rows = self._query(paging, [*params, limit])
        return Page(records=[loads_line(line) for (line,) in rows], total=total)

    def records(self, stream: str) -> Iterator[dict[str, Any]]:
        with self._conn.cursor(name=f"store_rows_{next(_CURSOR_NAMES)}") as cur:
            cur.itersize = STREAM_FETCH
            cur.execute(sql.SQL("SELECT line FROM {} ORDER BY seq").format(table(stream)))
            for (line,) in cur:
                yield loads_line(line)

    def stored_line(self, stream: str, key: str) -> bytes | None:
        if not _encodable([key]):
            return None
        rows = self._query(sql.SQL("SELECT line FROM {} WHERE lid = %s").format(table(stream)), (key_bytes(key),))
        return bytes(rows[0][0]) if rows else None

    def latest_baseline(self) -> Baseline | None:
        rows = self._query("SELECT seq, sha256 FROM store.baseline ORDER BY seq DESC LIMIT 1")
        if not rows:
            return None
        seq, digest = rows[0]
        cached = self._cached_baseline(digest)
        if cached is not None:
            return cached
        line = self._query("SELECT line FROM store.baseline WHERE seq = %s", (seq,))[0][0]
        baseline = Baseline(record=loads_line(bytes(line)), origin="store")
        self._cache_baseline(digest, baseline)
        return baseline

    def exact_id(self, stream: str, lowered: str) -> str | None:
        if not _encodable([lowered]):
            return None
        rows = self._query(sql.SQL("SELECT id FROM {} WHERE lid = %s").format(table(stream)), (key_bytes(lowered),))
        return str(rows[0][0]) if rows else None

    def prefix_ids(self, stream: str, prefixes: Sequence[str], show: int) -> tuple[int, list[str]]:
        ranges: list[sql.Composable] = []
        params: list[Any] = []
        for prefix in dict.fromkeys(p for p in prefixes if _encodable([p])):
            upper = _successor(prefix)
            ranges.append(sql.SQL("(lid >= %s)" if upper is None else "(lid >= %s AND lid < %s)"))
            params += [key_bytes(prefix)] if upper is None else [key_bytes(prefix), key_bytes(upper)]
        if not ranges:
            return 0, []
        where = sql.SQL(" OR ").join(ranges)
        count = self._query(sql.SQL("SELECT count(*) FROM {} WHERE {}").format(table(stream), where), params)[0][0]
        shown = self._query(
            sql.SQL("SELECT id FROM {} WHERE {} ORDER BY lid LIMIT %s").format(table(stream), where), [*params, show]
        )
        return count, [str(row[0]) for row in shown]


def page_statements(stream: str, flt: RecordFilter) -> tuple[sql.Composable, sql.Composable, list[Any]]:
    """The total's statement, the page's (its last parameter is the limit) and their shared parameters: what
    `select` runs, and what tests/store/test_pg_plans.py EXPLAINs."""
    where, params = _where(stream, flt)
    source = sql.SQL("FROM {} WHERE {}").format(table(stream), where)
    paging = sql.SQL("SELECT line {} ORDER BY ts, seq LIMIT %s").format(source)
    if params:
        return sql.SQL("SELECT count(*) {}").format(source), paging, params
    # Unfiltered: seq runs 1..n with no gap in every snapshot (appends take the store's lock in turn and commit
    # before the next one numbers its rows), so the largest is the count, read from the primary key instead of
    # counting the table (a sequential scan at 10,000,000 events).
    return sql.SQL("SELECT coalesce(max(seq), 0) FROM {}").format(table(stream)), paging, params


def _where(stream: str, flt: RecordFilter) -> tuple[sql.Composable, list[Any]]:
    """The WHERE clause of a filter: the equality columns given, the ids, and the inclusive window. Each
    combination of equality columns has an order index ending in (ts, seq), so a page is read in result order."""
    unserved = [name for name in ("target", "ip") if getattr(flt, name) and name not in FILTER_COLUMNS[stream]]
    if unserved:
        raise InternalError(f"store.{stream} has no {', '.join(unserved)} column")
    conditions: list[sql.Composable] = []
    params: list[Any] = []
    if flt.ids is not None:
        conditions.append(sql.SQL("lid = ANY(%s)"))
        params.append(sorted({key_bytes(ci_key(stored)) for stored in flt.ids}))
    for name in FILTER_COLUMNS[stream]:
        value = getattr(flt, name)
        if value:
            conditions.append(sql.SQL("{} = %s").format(sql.Identifier(name)))
            params.append(key_bytes(ci_key(value)))
    if flt.since is not None:
        conditions.append(sql.SQL("ts >= %s"))
        params.append(flt.since)
    if flt.since is not None or flt.until is not None:
        # The upper bound also keeps undated records (ts = UNDATED) outside every window.
        conditions.append(sql.SQL("ts <= %s"))
        params.append(MAX_INSTANT if flt.until is None else min(flt.until, MAX_INSTANT))
    return (sql.SQL(" AND ").join(conditions) if conditions else sql.SQL("true")), params
