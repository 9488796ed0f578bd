"""Queries over the read index inside one read transaction: filtered pages in result order, whole streams,
stored lines, ids by exact key or prefix, the latest baseline. A query that meets a broken index is answered
from a full replay instead."""

from __future__ import annotations

import functools
import logging
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from harness.errors import InternalError
from harness.store.baseline_model import Baseline
from harness.store.index_schema import FILTER_COLUMNS, order_index, table_name
from harness.store.query import Page, RecordFilter, StoreView
from harness.store.replay import ReplayView
from harness.text.canonjson import loads_line
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


# Nothing filters: the stream's size without walking an index, since seq is each record's position in its stream
# counted from 0 (docs/investigate.md §4; the catch-up appends max(seq) + 1, a rebuild starts again at 0).
_SIZE_SQL = "SELECT coalesce(max(seq) + 1, 0) FROM {}"

P = ParamSpec("P")
R = TypeVar("R")


def _or_replay(query: Callable[Concatenate[IndexView, P], R]) -> Callable[Concatenate[IndexView, P], R]:
    """A query that the view's full replay answers instead when the index broke earlier in this call, or breaks
    while it runs (the replay view has the same method)."""
    name = query.__name__

    @functools.wraps(query)
    def answered(view: IndexView, *args: P.args, **kwargs: P.kwargs) -> R:
        if view._fallback is not None:
            return getattr(view._fallback, name)(*args, **kwargs)
        try:
            return query(view, *args, **kwargs)
        except sqlite3.DatabaseError:
            return getattr(view._replay(), name)(*args, **kwargs)

    return answered


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

    @_or_replay
    def select(self, stream: str, flt: RecordFilter, limit: int) -> Page:
        if flt.ids is not None and not flt.ids:
            return Page()
        if not _encodable([flt.actor, flt.source, flt.type, flt.target, flt.ip, *(flt.ids or ())]):
            return Page()
        table = table_name(stream)
        where, params, index = _where(table, FILTER_COLUMNS[stream], flt)
        source = f"{table} INDEXED BY {index}"
        if flt.ids is not None:
            # At most two stored ids per requested one (docs/investigate.md §8), each one row of the unique id
            # index: their (ts, seq) keys are put in result order here, and only the page's lines are decoded.
            keyed = sorted(self._query(f"SELECT ts, seq, line FROM {source} WHERE {where}", params))
            return Page(records=[loads_line(line) for _, _, line in keyed[:limit]], total=len(keyed))
        counting = f"SELECT count(*) FROM {source} WHERE {where}" if params else _SIZE_SQL.format(table)
        total = self._query(counting, params)[0][0]
        if not total:
            return Page()
        rows = self._query(f"SELECT line FROM {source} WHERE {where} ORDER BY ts, seq LIMIT ?", [*params, limit])
        return Page(records=[loads_line(line) for (line,) in rows], total=total)

    @_or_replay
    def records(self, stream: str) -> Iterator[dict[str, Any]]:
        rows = self._conn.execute(f"SELECT line FROM {table_name(stream)} ORDER BY seq")
        return (loads_line(line) for (line,) in rows)

    @_or_replay
    def stored_line(self, stream: str, key: str) -> bytes | None:
        line = self._by_lid(stream, "line", key)
        return None if line is None else bytes(line)

    @_or_replay
    def latest_baseline(self) -> Baseline | None:
        table = table_name("baseline")
        rows = self._query(f"SELECT seq, sha256 FROM {table} ORDER BY seq DESC LIMIT 1")
        if not rows:
            return None
        seq, digest = rows[0]
        cached = self._index.cached_baseline(digest)
        if cached is not None:
            return cached
        line = self._query(f"SELECT line FROM {table} WHERE seq = ?", (seq,))[0][0]
        baseline = Baseline(record=loads_line(line), origin="store")
        self._index.cache_baseline(digest, baseline)
        return baseline

    @_or_replay
    def latest_baseline_digest(self) -> str | None:
        rows = self._query(f"SELECT sha256 FROM {table_name('baseline')} ORDER BY seq DESC LIMIT 1")
        return str(rows[0][0]) if rows else None

    @_or_replay
    def exact_id(self, stream: str, lowered: str) -> str | None:
        found = self._by_lid(stream, "id", lowered)
        return None if found is None else str(found)

    def _by_lid(self, stream: str, column: str, lid: str) -> Any:
        """`column` of the record whose lower-cased id is `lid`; None when there is none (or `lid` cannot be
        stored)."""
        if not _encodable([lid]):
            return None
        rows = self._query(f"SELECT {column} FROM {table_name(stream)} WHERE lid = ?", (lid,))
        return rows[0][0] if rows else None

    @_or_replay
    def prefix_ids(self, stream: str, prefixes: Sequence[str], show: int) -> tuple[int, list[str]]:
        ranges, params = [], []
        for prefix in dict.fromkeys(p for p in prefixes if _encodable([p])):
            upper = _successor(prefix)
            ranges.append("(lid >= ?)" if upper is None else "(lid >= ? AND lid < ?)")
            params += [prefix] if upper is None else [prefix, upper]
        if not ranges:
            return 0, []
        where = " OR ".join(ranges)
        table = table_name(stream)
        count = self._query(f"SELECT count(*) FROM {table} WHERE {where}", params)[0][0]
        shown = self._query(f"SELECT id FROM {table} WHERE {where} ORDER BY lid LIMIT ?", [*params, show])
        return count, [str(row[0]) for row in shown]


def _where(table: str, columns: Sequence[str], flt: RecordFilter) -> tuple[str, list[Any], str]:
    """The WHERE clause of a filter and the index that serves it: the unique id index for ids (each id is one
    row, put in result order by the caller), else the order index of exactly the given equality columns, whose
    (ts, seq) tail is the window's range and the result order. The index is named, not left to the planner, so a
    plan that would sort the whole match set cannot be chosen."""
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
