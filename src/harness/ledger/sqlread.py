"""The read side shared by both backends: one snapshot's queries, and the snapshot of a ledger not created yet."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from harness.ledger import browse
from harness.ledger.catalog import SchemaObject, as_set
from harness.ledger.dialect import COLUMNS_SQL, ROW_BY_KEY, ROW_COLUMNS, Dialect
from harness.ledger.errors import LedgerValueError
from harness.ledger.model import LedgerRow
from harness.ledger.records import Call, CallFilter, ConversationInfo, ConversationSummary, Head, Tombstone
from harness.ledger.tail import Position

_CALL_SELECT = (
    "SELECT s.conversation_id, s.request_id, s.tool_call_id, s.tool_name, s.seq, s.started_at,"
    " e.ended_at, e.duration_ms, e.status, e.error, e.exit_code, e.result_bytes, e.result_truncated, {principal}"
    " FROM {starts} LEFT JOIN {ti} e ON e.conversation_id = s.conversation_id AND e.request_id = s.request_id"
    " AND e.tool_call_id = s.tool_call_id AND e.event = 'end'"
    " WHERE s.event = 'start'"
)
_SUMMARY_SELECT = (
    "SELECT c.id, c.created_at,"
    " (SELECT count(*) FROM {ti} t WHERE t.conversation_id = c.id AND t.event = 'start'),"
    " (SELECT max(t.chain_seq) FROM {ti} t WHERE t.conversation_id = c.id),"
    " (SELECT max(t.ts) FROM {ti} t WHERE t.conversation_id = c.id)"
    " FROM {co} c"
)
# Calls in flight are read from open_calls (schema v4 on SQLite, v5 on PostgreSQL; docs/decisions.md, "Open calls"):
# a missing end cannot be indexed in an append-only table, so triggers keep the calls that have none, and open_calls
# drives the join, so a read costs what is in flight and not the ledger's size. SQLite keeps the order a CROSS JOIN
# gives; PostgreSQL reorders it as any inner join and starts from the small table on its own.
_OPEN_STARTS = "{oc} o CROSS JOIN {ti} s"
_IS_OPEN = (
    " AND s.conversation_id = o.conversation_id AND s.request_id = o.request_id AND s.tool_call_id = o.tool_call_id"
)
IN_FLIGHT = (
    "SELECT "
    + ", ".join("s." + c for c in ROW_COLUMNS)
    + f" FROM {_OPEN_STARTS} WHERE s.event = 'start'{_IS_OPEN} AND s.ts < ? ORDER BY s.ts, s.id LIMIT ?"
)
# End rows naming a result that is not stored with them: sidecar files of the format before the result_sidecars
# table, which `harness ledger migrate` imports.
_UNSTORED_SIDECARS = (
    "SELECT " + COLUMNS_SQL + " FROM {ti} WHERE event = 'end' AND result_sidecar_path IS NOT NULL"
    " AND NOT EXISTS (SELECT 1 FROM {rs} r WHERE r.end_id = {ti}.id) ORDER BY conversation_id, chain_seq"
)
_HEADS = (
    "SELECT t.conversation_id, t.chain_seq, t.row_hash FROM {ti} t JOIN ("
    "SELECT conversation_id, max(chain_seq) AS last FROM {ti}{where} GROUP BY conversation_id"
    ") h ON h.conversation_id = t.conversation_id AND h.last = t.chain_seq ORDER BY t.conversation_id"
)


def calls_query(d: Dialect, where: CallFilter, limit: int) -> tuple[str, list[Any]]:
    """The SQL and parameters of `ledger list`'s calls: starts joined with their ends, newest first."""
    status = "in_flight" if where.in_flight_before is not None else where.status
    starts = _OPEN_STARTS if status == "in_flight" else "{ti} s"
    sql = _CALL_SELECT.replace("{principal}", d.principal_sql).replace("{starts}", starts)
    params: list[Any] = []
    if status == "in_flight":
        sql += _IS_OPEN
    ts = d.ts_to_db
    for clause, value in (
        (" AND s.conversation_id = ?", where.conversation_id),
        (" AND s.tool_name = ?", where.tool_name),
        (f" AND {d.principal_sql} = ?", where.principal),
        (" AND s.started_at >= ?", where.since and ts(_aware("since", where.since))),
        (" AND s.started_at < ?", where.until and ts(_aware("until", where.until))),
        (" AND s.ts < ?", where.in_flight_before and ts(_aware("in_flight_before", where.in_flight_before))),
    ):
        if value is not None:
            sql, params = sql + clause, [*params, value]
    if status not in (None, "in_flight"):
        sql, params = sql + " AND e.status = ?", [*params, status]
    sql += " ORDER BY s.started_at DESC, s.conversation_id, s.seq DESC LIMIT ?"
    return d.sql(sql), [*params, limit]


def _any_of(column: str, n: int) -> str:
    """`column` equal to one of `n` parameters; none matches no row."""
    return f"{column} IN ({', '.join(['?'] * n)})" if n else "1 = 0"


class SqlSnapshot:
    """The Snapshot protocol over one backend connection inside a read transaction."""

    def __init__(
        self,
        dialect: Dialect,
        fetch: Callable[[str, Sequence[Any]], list[Any]],
        stream: Callable[[str, Sequence[Any]], Iterator[Any]],
    ) -> None:
        self._d = dialect
        self._fetch = fetch
        self._stream = stream

    def _rows(self, template: str, params: Sequence[Any]) -> list[LedgerRow]:
        return [self._d.row_from_db(r) for r in self._fetch(self._d.sql(template), params)]

    def conversations(self, conversation_ids: Sequence[str] | None = None) -> list[ConversationInfo]:
        """Conversation rows ordered by id, optionally only the given ids."""
        sql, params = "SELECT id, created_at FROM {co}", list(conversation_ids or ())
        if conversation_ids is not None:
            sql += " WHERE " + _any_of("id", len(params))
        rows = self._fetch(self._d.sql(sql + " ORDER BY id"), params)
        return [ConversationInfo(cid, self._d.ts_from_db(created)) for cid, created in rows]

    def conversation_summaries(self, conversation_id: str | None, limit: int) -> list[ConversationSummary]:
        """Conversations, newest first, with their call counts and last chain position."""
        sql, params = _SUMMARY_SELECT, []
        if conversation_id is not None:
            sql, params = sql + " WHERE c.id = ?", [conversation_id]
        rows = self._fetch(self._d.sql(sql + " ORDER BY c.created_at DESC, c.id LIMIT ?"), [*params, limit])
        ts = self._d.ts_from_db
        return [
            ConversationSummary(cid, ts(created), calls, last_seq, None if last_ts is None else ts(last_ts))
            for cid, created, calls, last_seq, last_ts in rows
        ]

    def count_rows(self, conversation_id: str) -> int:
        """Number of rows of one conversation."""
        sql = self._d.sql("SELECT count(*) FROM {ti} WHERE conversation_id = ?")
        return int(self._fetch(sql, [conversation_id])[0][0])

    def row_by_key(self, key: tuple[str, str, str, str]) -> LedgerRow | None:
        """The row stored under an idempotency key, if any."""
        rows = self._rows(ROW_BY_KEY, key)
        return rows[0] if rows else None

    def rows(
        self,
        conversation_ids: Sequence[str] | None = None,
        since: datetime.datetime | None = None,
        until: datetime.datetime | None = None,
    ) -> Iterator[LedgerRow]:
        """Rows ordered by (conversation_id, chain_seq); `since` inclusive and `until` exclusive on ts."""
        clauses, params = _row_filters(self._d, conversation_ids, since, until)
        sql = "SELECT " + COLUMNS_SQL + " FROM {ti}" + clauses + " ORDER BY conversation_id, chain_seq"
        return map(self._d.row_from_db, self._stream(self._d.sql(sql), params))

    def tail_rows(
        self, after: Position | None, since: datetime.datetime | None, limit: int
    ) -> list[tuple[Position, LedgerRow]]:
        """Up to `limit` rows after `after` in the global tail order, only those no later commit can precede;
        `since` inclusive on ts."""
        d = self._d
        sql, params = f"SELECT {COLUMNS_SQL}, {d.tail_key_sql} FROM {{ti}} WHERE {d.tail_ready_sql}", []
        if after is not None:
            key = d.tail_param_sql
            sql += f" AND ({d.tail_key_sql} > {key} OR ({d.tail_key_sql} = {key} AND id > ?))"
            params += [str(after.key), str(after.key), d.id_to_db(after.row_id)]
        if since is not None:
            sql, params = sql + " AND ts >= ?", [*params, d.ts_to_db(_aware("since", since))]
        sql += f" ORDER BY {d.tail_key_sql}, id LIMIT ?"
        found = self._fetch(d.sql(sql), [*params, limit])
        rows = [(d.row_from_db(r[:-1]), int(str(r[-1]))) for r in found]
        return [(Position(key, row.id), row) for row, key in rows]

    def conversation_rows(
        self,
        conversation_id: str,
        *,
        after_chain_seq: int = 0,
        tool_call_id: str | None = None,
        limit: int | None = None,
    ) -> list[LedgerRow]:
        """One conversation's rows in chain order, optionally one call's and after a chain position."""
        sql = "SELECT " + COLUMNS_SQL + " FROM {ti} WHERE conversation_id = ? AND chain_seq > ?"
        params: list[Any] = [conversation_id, after_chain_seq]
        if tool_call_id is not None:
            sql, params = sql + " AND tool_call_id = ?", [*params, tool_call_id]
        sql += " ORDER BY chain_seq"
        if limit is not None:
            sql, params = sql + " LIMIT ?", [*params, limit]
        return self._rows(sql, params)

    def in_flight_before(self, cutoff: datetime.datetime, limit: int) -> list[LedgerRow]:
        """Starts older than `cutoff` that have no end, by ts then id."""
        return self._rows(IN_FLIGHT, [self._d.ts_to_db(_aware("cutoff", cutoff)), limit])

    def open_calls(self, conversation_ids: Sequence[str] | None = None) -> set[tuple[str, str, str]]:
        """The (conversation_id, request_id, tool_call_id) of each call the open_calls index lists."""
        sql, params = "SELECT conversation_id, request_id, tool_call_id FROM {oc}", list(conversation_ids or ())
        if conversation_ids is not None:
            sql += " WHERE " + _any_of("conversation_id", len(params))
        return {(c, r, t) for c, r, t in self._fetch(self._d.sql(sql), params)}

    def sidecar(self, end_id: uuid.UUID) -> str | None:
        """The stored full result of an end row, or None."""
        found = self._fetch(self._d.sql("SELECT content FROM {rs} WHERE end_id = ?"), [self._d.id_to_db(end_id)])
        return found[0][0] if found else None

    def count_sidecars(self) -> int:
        """How many full results the ledger stores."""
        return int(self._fetch(self._d.sql("SELECT count(*) FROM {rs}"), [])[0][0])

    def unstored_sidecars(self) -> list[LedgerRow]:
        """End rows whose named result is not stored in the ledger (sidecar files still to import)."""
        return self._rows(_UNSTORED_SIDECARS, [])

    def heads(self, conversation_id: str | None = None) -> list[Head]:
        """Each conversation's last chain position, sorted by conversation id."""
        if conversation_id is None:
            rows = self._fetch(self._d.sql(_HEADS.replace("{where}", "")), [])
        else:
            rows = self._fetch(self._d.sql(_HEADS.replace("{where}", " WHERE conversation_id = ?")), [conversation_id])
        return [Head(cid, seq, bytes(h)) for cid, seq, h in rows]

    def catalog(self) -> frozenset[SchemaObject]:
        """The ledger's schema objects as the database holds them."""
        return as_set(self._fetch(self._d.catalog_sql, []))

    def tombstones(self) -> list[Tombstone]:
        """Every tombstone, oldest first."""
        sql = self._d.sql(
            "SELECT id, conversation_id, deleted_at, deleted_by, row_count, final_chain_seq, final_row_hash"
            " FROM {tb} ORDER BY id"
        )
        return [
            Tombstone(tid, cid, self._d.ts_from_db(at), by, count, seq, None if h is None else bytes(h))
            for tid, cid, at, by, count, seq, h in self._fetch(sql, [])
        ]

    def conversation_page(
        self, where: browse.ConversationFilter, after: browse.PageKey | None, limit: int
    ) -> list[browse.ConversationRow]:
        """The web view's conversation list: newest first, filtered, one keyset page (browse.py)."""
        return browse.conversation_page(self._d, self._fetch, where, after, limit)

    def calls(self, where: CallFilter, limit: int) -> list[Call]:
        """Starts joined with their ends, newest first; at most `limit`."""
        sql, params = calls_query(self._d, where, limit)
        out = []
        from_ts = self._d.ts_from_db
        rows = self._fetch(sql, params)
        for cid, rid, tcid, tool, seq, started, ended, duration, st, error, exit_code, rbytes, trunc, who in rows:
            out.append(
                Call(
                    cid,
                    rid,
                    tcid,
                    tool,
                    seq,
                    from_ts(started),
                    None if ended is None else from_ts(ended),
                    duration,
                    st or "in_flight",
                    error,
                    exit_code,
                    rbytes,
                    None if trunc is None else bool(trunc),
                    who or "",
                )
            )
        return out


def _aware(name: str, value: datetime.datetime) -> datetime.datetime:
    if not isinstance(value, datetime.datetime) or value.tzinfo is None or value.utcoffset() is None:
        raise LedgerValueError(f"{name}: expected a timezone-aware datetime")
    return value


def _row_filters(
    d: Dialect,
    conversation_ids: Sequence[str] | None,
    since: datetime.datetime | None,
    until: datetime.datetime | None,
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if conversation_ids is not None:
        ids = list(conversation_ids)
        clauses.append(_any_of("conversation_id", len(ids)))
        params.extend(ids)
    if since is not None:
        clauses.append("ts >= ?")
        params.append(d.ts_to_db(_aware("since", since)))
    if until is not None:
        clauses.append("ts < ?")
        params.append(d.ts_to_db(_aware("until", until)))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


class EmptySnapshot:
    """The Snapshot of a ledger that does not exist yet: every read is empty."""

    def conversations(self, conversation_ids: Sequence[str] | None = None) -> list[ConversationInfo]:
        return []

    def conversation_summaries(self, conversation_id: str | None, limit: int) -> list[ConversationSummary]:
        return []

    def count_rows(self, conversation_id: str) -> int:
        return 0

    def row_by_key(self, key: tuple[str, str, str, str]) -> LedgerRow | None:
        return None

    def rows(
        self,
        conversation_ids: Sequence[str] | None = None,
        since: datetime.datetime | None = None,
        until: datetime.datetime | None = None,
    ) -> Iterator[LedgerRow]:
        return iter(())

    def tail_rows(
        self, after: Position | None, since: datetime.datetime | None, limit: int
    ) -> list[tuple[Position, LedgerRow]]:
        return []

    def conversation_rows(
        self,
        conversation_id: str,
        *,
        after_chain_seq: int = 0,
        tool_call_id: str | None = None,
        limit: int | None = None,
    ) -> list[LedgerRow]:
        return []

    def in_flight_before(self, cutoff: datetime.datetime, limit: int) -> list[LedgerRow]:
        _aware("cutoff", cutoff)
        return []

    def open_calls(self, conversation_ids: Sequence[str] | None = None) -> set[tuple[str, str, str]]:
        return set()

    def sidecar(self, end_id: uuid.UUID) -> str | None:
        return None

    def count_sidecars(self) -> int:
        return 0

    def unstored_sidecars(self) -> list[LedgerRow]:
        return []

    def heads(self, conversation_id: str | None = None) -> list[Head]:
        return []

    def catalog(self) -> frozenset[SchemaObject]:
        return frozenset()

    def tombstones(self) -> list[Tombstone]:
        return []

    def conversation_page(
        self, where: browse.ConversationFilter, after: browse.PageKey | None, limit: int
    ) -> list[browse.ConversationRow]:
        return []

    def calls(self, where: CallFilter, limit: int) -> list[Call]:
        return []


@contextmanager
def empty_snapshot() -> Iterator[EmptySnapshot]:
    """The snapshot context of a ledger that does not exist."""
    yield EmptySnapshot()
