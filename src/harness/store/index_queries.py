"""Queries over the read index inside one read transaction: filtered pages in result order, whole streams,
stored lines, ids by exact key or prefix, the latest baseline. A query that meets a broken index is answered
from a full replay instead."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from harness.errors import InternalError
from harness.store.baseline_model import Baseline
from harness.store.index_schema import FILTER_COLUMNS, order_index, table_name
from harness.store.query import Page, RecordFilter, StoreView
from harness.store.replay import ReplayView
from harness.text.casefold import ci_key
from harness.text.rfc3339 import MAX_INSTANT

log = logging.getLogger("harness.store")


class IndexSource(Protocol):
    """What a view needs of the index it reads (store/index_catchup.py's Index)."""

    def replay_view(self, commit: str) -> ReplayView: ...

    def discard(self) -> None: ...

    def cached_baseline(self, digest: str) -> Baseline | None: ...

    def cache_baseline(self, digest: str, baseline: Baseline) -> None: ...


def _successor(prefix: str) -> str | None:
    """The smallest string greater than every string starting with `prefix` (None: no such bound)."""
    chars = list(prefix)
    while chars:
        point = ord(chars.pop()) + 1
        if point == 0xD800:
            point = 0xE000
        if point <= 0x10FFFF:
            return "".join(chars) + chr(point)
    return None


def _encodable(values: Iterable[str]) -> bool:
    # A lone surrogate cannot be bound (nor equal a stored value, which is always clean UTF-8).
    try:
        for value in values:
            value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class IndexView(StoreView):
    """Queries over the index inside one read transaction."""

    def __init__(self, index: IndexSource, conn: sqlite3.Connection, commit: str) -> None:
        self.commit = commit
        self._index = index
        self._conn = conn
        self._fallback: ReplayView | None = None

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, params).fetchall()

    def _replay(self) -> ReplayView:
        if self._fallback is None:
            log.warning("read index broke during a call; answering from a full replay of %s", self.commit)
            self._fallback = self._index.replay_view(self.commit)
            self._index.discard()
        return self._fallback

    def select(self, stream: str, flt: RecordFilter, limit: int) -> Page:
        if self._fallback is not None:
            return self._fallback.select(stream, flt, limit)
        if flt.ids is not None and not flt.ids:
            return Page()
        if not _encodable([flt.actor, flt.source, flt.type, flt.target, flt.ip, *(flt.ids or ())]):
            return Page()
        table = table_name(stream)
        where, params, index = _where(table, FILTER_COLUMNS[stream], flt)
        source = f"{table} INDEXED BY {index}"
        try:
            total = self._query(f"SELECT count(*) FROM {source} WHERE {where}", params)[0][0]
            if not total:
                return Page()
            rows = self._query(f"SELECT line FROM {source} WHERE {where} ORDER BY ts, seq LIMIT ?", [*params, limit])
        except sqlite3.DatabaseError:
            return self._replay().select(stream, flt, limit)
        return Page(records=[json.loads(line) for (line,) in rows], total=total)

    def records(self, stream: str) -> Iterator[dict[str, Any]]:
        if self._fallback is not None:
            return self._fallback.records(stream)
        try:
            rows = self._conn.execute(f"SELECT line FROM {table_name(stream)} ORDER BY seq")
            return (json.loads(line) for (line,) in rows)
        except sqlite3.DatabaseError:
            return self._replay().records(stream)

    def stored_line(self, stream: str, key: str) -> bytes | None:
        if self._fallback is not None:
            return self._fallback.stored_line(stream, key)
        if not _encodable([key]):
            return None
        try:
            rows = self._query(f"SELECT line FROM {table_name(stream)} WHERE lid = ?", (key,))
        except sqlite3.DatabaseError:
            return self._replay().stored_line(stream, key)
        return bytes(rows[0][0]) if rows else None

    def latest_baseline(self) -> Baseline | None:
        if self._fallback is not None:
            return self._fallback.latest_baseline()
        table = table_name("baseline")
        try:
            rows = self._query(f"SELECT seq, sha256 FROM {table} ORDER BY seq DESC LIMIT 1")
            if not rows:
                return None
            seq, digest = rows[0]
            cached = self._index.cached_baseline(digest)
            if cached is not None:
                return cached
            line = self._query(f"SELECT line FROM {table} WHERE seq = ?", (seq,))[0][0]
        except sqlite3.DatabaseError:
            return self._replay().latest_baseline()
        baseline = Baseline(record=json.loads(line), origin="store")
        self._index.cache_baseline(digest, baseline)
        return baseline

    def exact_id(self, stream: str, lowered: str) -> str | None:
        if self._fallback is not None:
            return self._fallback.exact_id(stream, lowered)
        if not _encodable([lowered]):
            return None
        try:
            rows = self._query(f"SELECT id FROM {table_name(stream)} WHERE lid = ?", (lowered,))
        except sqlite3.DatabaseError:
            return self._replay().exact_id(stream, lowered)
        return str(rows[0][0]) if rows else None

    def prefix_ids(self, stream: str, prefixes: Sequence[str], show: int) -> tuple[int, list[str]]:
        if self._fallback is not None:
            return self._fallback.prefix_ids(stream, prefixes, show)
        ranges, params = [], []
        for prefix in dict.fromkeys(p for p in prefixes if _encodable([p])):
            upper = _successor(prefix)
            ranges.append("(lid >= ?)" if upper is None else "(lid >= ? AND lid < ?)")
            params += [prefix] if upper is None else [prefix, upper]
        if not ranges:
            return 0, []
        where = " OR ".join(ranges)
        table = table_name(stream)
        try:
            count = self._query(f"SELECT count(*) FROM {table} WHERE {where}", params)[0][0]
            shown = self._query(f"SELECT id FROM {table} WHERE {where} ORDER BY lid LIMIT ?", [*params, show])
        except sqlite3.DatabaseError:
            return self._replay().prefix_ids(stream, prefixes, show)
        return count, [str(row[0]) for row in shown]


def _where(table: str, columns: Sequence[str], flt: RecordFilter) -> tuple[str, list[Any], str]:
    """The WHERE clause of a filter and the index that serves it in result order: the id index for ids (each
    id is one row, so at most MAX_IDS rows are sorted), else the order index of exactly the given equality
    columns, whose (ts, seq) tail is the window's range and the result order. The index is named, not left
    to the planner, so a plan that would sort the whole match set cannot be chosen."""
    given = [name for name in columns if getattr(flt, name)]
    unserved = [name for name in ("target", "ip") if getattr(flt, name) and name not in columns]
    if unserved:
        raise InternalError(f"{table} has no {', '.join(unserved)} column")
    conditions: list[str] = []
    params: list[Any] = []
    if flt.ids is not None:
        index = f"{table}_lid"
        wanted = sorted({ci_key(stored) for stored in flt.ids})
        conditions.append(f"lid IN ({', '.join('?' * len(wanted))})")
        params += wanted
    else:
        index = order_index(table, given)
    for name in given:
        conditions.append(f"{name} = ?")
        params.append(ci_key(getattr(flt, name)))
    if flt.since is not None:
        conditions.append("ts >= ?")
        params.append(flt.since)
    if flt.since is not None or flt.until is not None:
        # The upper bound also keeps undated records (ts = UNDATED) outside every window.
        conditions.append("ts <= ?")
        params.append(MAX_INSTANT if flt.until is None else min(flt.until, MAX_INSTANT))
    return " AND ".join(conditions) or "1", params, index
