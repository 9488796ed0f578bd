"""SQL shared by both backends: the §8.2 write algorithm, the read queries, and a store built on backend hooks."""

from __future__ import annotations

import abc
import dataclasses
import datetime
import functools
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol, TypeVar

from harness.ledger import chain
from harness.ledger.errors import LedgerIntegrityError, LedgerValueError
from harness.ledger.model import (
    LedgerEvent,
    LedgerRedactor,
    LedgerRow,
    PreparedRow,
    build_row,
    prepare,
)
from harness.ledger.records import (
    Call,
    CallFilter,
    Clock,
    ConversationInfo,
    ConversationSummary,
    Head,
    InsertResult,
    Reservation,
    Tombstone,
)
from harness.ledger.settings import LedgerSettings

T = TypeVar("T")
Hasher = Callable[[tuple[Any, ...]], bytes]
Key3 = tuple[str, str, str]
WriteWork = Callable[["Connection"], T]

ROW_COLUMNS = (*chain.FIELD_NAMES, "row_hash")
_COLUMNS = ", ".join(ROW_COLUMNS)
_PROBE_CHUNK = 500


class Cursor(Protocol):
    """The DB-API subset both drivers share."""

    rowcount: int

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, seq: Sequence[Sequence[Any]], /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """A connection that hands out cursors (sqlite3 and psycopg both do)."""

    def cursor(self) -> Any: ...


@dataclasses.dataclass(frozen=True)
class Dialect:
    """How one backend spells tables, parameters and column values."""

    name: str
    prefix: str
    param: str
    meta_cast: str
    # With the writer lock held, the probes are authoritative, so a key conflict means a writer bypassed the lock.
    # SQLite (one writer at a time) skips such rows and compares the row count; PostgreSQL lets the unique
    # constraint raise inside the transaction, which lets the insert and the COMMIT share one round trip.
    skip_conflicts: bool
    id_to_db: Callable[[uuid.UUID], Any]
    ts_to_db: Callable[[datetime.datetime], Any]
    bool_to_db: Callable[[bool], Any]
    row_from_db: Callable[[Sequence[Any]], LedgerRow]
    ts_from_db: Callable[[Any], datetime.datetime]

    def sql(self, template: str) -> str:
        """Expand `{ti}`, `{co}`, `{tb}`, `{meta}` and turn `?` into this driver's parameter marker."""
        text = template.format(
            ti=self.prefix + "tool_invocations",
            co=self.prefix + "conversations",
            tb=self.prefix + "tombstones",
            meta="?" + self.meta_cast,
        )
        return text if self.param == "?" else text.replace("?", self.param)

    def row_params(self, row: LedgerRow) -> tuple[Any, ...]:
        """The INSERT parameters of a row, in ROW_COLUMNS order."""
        ts = self.ts_to_db
        return (
            self.id_to_db(row.id),
            row.conversation_id,
            row.request_id,
            row.tool_call_id,
            row.tool_name,
            row.event,
            row.seq,
            ts(row.ts),
            None if row.started_at is None else ts(row.started_at),
            None if row.ended_at is None else ts(row.ended_at),
            row.duration_ms,
            row.arguments,
            row.args_bytes,
            row.status,
            row.error,
            row.result_preview,
            row.preview_bytes,
            row.result_bytes,
            None if row.result_truncated is None else self.bool_to_db(row.result_truncated),
            row.result_sidecar_path,
            row.exit_code,
            row.meta,
            row.redaction_version,
            row.chain_seq,
            row.prev_hash,
            row.row_hash,
        )


_INSERT = "INSERT INTO {ti} (" + _COLUMNS + ") VALUES (" + ", ".join(["?"] * 21) + ", {meta}, ?, ?, ?, ?)"
_ON_CONFLICT = " ON CONFLICT (conversation_id, request_id, tool_call_id, event) DO NOTHING"
_HEADS_STATE = (
    "SELECT v.cid,"
    " (SELECT t.chain_seq FROM {ti} t WHERE t.conversation_id = v.cid ORDER BY t.chain_seq DESC LIMIT 1),"
    " (SELECT t.row_hash FROM {ti} t WHERE t.conversation_id = v.cid ORDER BY t.chain_seq DESC LIMIT 1),"
    " (SELECT max(t.seq) FROM {ti} t WHERE t.conversation_id = v.cid),"
    " (SELECT count(*) FROM {co} c WHERE c.id = v.cid),"
    " (SELECT count(*) FROM {tb} b WHERE b.conversation_id = v.cid)"
    " FROM ({values}) v"
)
_CREATE_CONVERSATION = "INSERT INTO {co} (id, created_at) VALUES (?, ?)"
_CALL_ROWS_ONE = (
    "SELECT conversation_id, request_id, tool_call_id, event, seq FROM {ti}"
    " WHERE conversation_id = ? AND request_id = ? AND tool_call_id = ?"
)
_CALL_ROWS_MANY = (
    "SELECT conversation_id, request_id, tool_call_id, event, seq FROM {ti}"
    " WHERE (conversation_id, request_id, tool_call_id) IN (VALUES {values})"
)
_ROW_BY_KEY = (
    "SELECT " + _COLUMNS + " FROM {ti} WHERE conversation_id = ? AND request_id = ? AND tool_call_id = ? AND event = ?"
)


@dataclasses.dataclass
class _ConversationHead:
    chain_seq: int
    row_hash: bytes
    max_seq: int
    exists: bool
    tombstoned: bool


def _send_probes(conn: Connection, d: Dialect, prepared: Sequence[PreparedRow]) -> tuple[list[Cursor], list[Cursor]]:
    """Issue every read the batch needs before reading any result, so a pipelining driver sends them at once.

    Returns the cursors of the call-key probes and of the conversation-head probes.
    """
    keys = sorted({p.key[:3] for p in prepared})
    call_cursors, head_cursors = [], []
    for start in range(0, len(keys), _PROBE_CHUNK):
        chunk = keys[start : start + _PROBE_CHUNK]
        cur = conn.cursor()
        if len(chunk) == 1:
            cur.execute(d.sql(_CALL_ROWS_ONE), chunk[0])
        else:
            values = ", ".join(["(?, ?, ?)"] * len(chunk))
            cur.execute(d.sql(_CALL_ROWS_MANY.replace("{values}", values)), [v for key in chunk for v in key])
        call_cursors.append(cur)
    conversations = sorted({p.conversation_id for p in prepared})
    for start in range(0, len(conversations), _PROBE_CHUNK):
        chunk = conversations[start : start + _PROBE_CHUNK]
        cur = conn.cursor()
        values = " UNION ALL ".join(["SELECT ? AS cid"] * len(chunk))
        cur.execute(d.sql(_HEADS_STATE.replace("{values}", values)), chunk)
        head_cursors.append(cur)
    return call_cursors, head_cursors


def _read_probes(
    call_cursors: list[Cursor], head_cursors: list[Cursor]
) -> tuple[dict[Key3, dict[str, int]], dict[str, _ConversationHead]]:
    calls: dict[Key3, dict[str, int]] = {}
    for cur in call_cursors:
        for cid, rid, tcid, event, seq in cur.fetchall():
            calls.setdefault((cid, rid, tcid), {})[event] = seq
    heads: dict[str, _ConversationHead] = {}
    for cur in head_cursors:
        for cid, chain_seq, row_hash, max_seq, exists, tombstoned in cur.fetchall():
            head_hash = chain.ZERO_HASH if row_hash is None else bytes(row_hash)
            heads[cid] = _ConversationHead(chain_seq or 0, head_hash, max_seq or 0, bool(exists), bool(tombstoned))
    return calls, heads


def _row_by_key(conn: Connection, d: Dialect, key: tuple[str, str, str, str]) -> LedgerRow:
    cur = conn.cursor()
    cur.execute(d.sql(_ROW_BY_KEY), key)
    return d.row_from_db(cur.fetchone())


def write_prepared(conn: Connection, d: Dialect, prepared: Sequence[PreparedRow], hasher: Hasher) -> list[InsertResult]:
    """§8.2 for a batch, inside a transaction whose writer lock covers every involved conversation."""
    existing, heads = _read_probes(*_send_probes(conn, d, prepared))
    written: dict[tuple[str, str, str, str], LedgerRow] = {}
    new_conversations: list[tuple[str, Any]] = []
    new_rows: list[LedgerRow] = []
    results: list[InsertResult] = []
    for p in prepared:
        key3 = (p.conversation_id, p.request_id, p.tool_call_id)
        stored = written.get(p.key)
        if stored is None and p.event in existing.get(key3, {}):
            stored = _row_by_key(conn, d, p.key)
        if stored is not None:
            # The same row id means a retry after an ambiguous commit: that write was ours.
            results.append(InsertResult(stored.id == p.id, stored))
            continue
        head = heads[p.conversation_id]
        if not head.exists:
            if head.tombstoned:
                raise LedgerIntegrityError(
                    f"conversation {p.conversation_id} was deleted from the ledger; use a new conversation id"
                )
            new_conversations.append((p.conversation_id, d.ts_to_db(p.ts)))
            head.exists = True
        if p.event == "start":
            seq = head.max_seq + 1
            head.max_seq = seq
        else:
            batch_start = written.get((*key3, "start"))
            seq = batch_start.seq if batch_start is not None else existing.get(key3, {}).get("start")
            if seq is None:
                raise LedgerIntegrityError(
                    f"end without start: conversation {p.conversation_id}, request {p.request_id},"
                    f" call {p.tool_call_id}"
                )
        row = build_row(p, seq=seq, chain_seq=head.chain_seq + 1, prev_hash=head.row_hash, hasher=hasher)
        head.chain_seq, head.row_hash = row.chain_seq, row.row_hash
        written[p.key] = row
        new_rows.append(row)
        results.append(InsertResult(True, row))
    if new_rows:
        cur = conn.cursor()
        if new_conversations:
            cur.executemany(d.sql(_CREATE_CONVERSATION), new_conversations)
        cur = conn.cursor()
        cur.executemany(
            d.sql(_INSERT + (_ON_CONFLICT if d.skip_conflicts else "")), [d.row_params(r) for r in new_rows]
        )
        if d.skip_conflicts and cur.rowcount != len(new_rows):
            raise LedgerIntegrityError("a concurrent writer took a call key without the writer lock")
    return results


def needs_full_sync(prepared: Sequence[PreparedRow], end_sync: str) -> bool:
    """Starts always commit with synchronous = FULL; a batch of end rows only follows `[ledger] end_sync`."""
    return end_sync == "full" or any(p.event == "start" for p in prepared)


_CALL_SELECT = (
    "SELECT s.conversation_id, s.request_id, s.tool_call_id, s.tool_name, s.seq, s.started_at,"
    " e.ended_at, e.duration_ms, e.status, e.error, e.exit_code, e.result_bytes, e.result_truncated"
    " FROM {ti} s LEFT JOIN {ti} e ON e.conversation_id = s.conversation_id AND e.request_id = s.request_id"
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
_IN_FLIGHT = (
    "SELECT " + _COLUMNS + " FROM {ti} s WHERE s.event = 'start' AND s.ts < ? AND NOT EXISTS ("
    "SELECT 1 FROM {ti} e WHERE e.conversation_id = s.conversation_id AND e.request_id = s.request_id"
    " AND e.tool_call_id = s.tool_call_id AND e.event = 'end') ORDER BY s.ts, s.id LIMIT ?"
)
_HEADS = (
    "SELECT t.conversation_id, t.chain_seq, t.row_hash FROM {ti} t JOIN ("
    "SELECT conversation_id, max(chain_seq) AS last FROM {ti}{where} GROUP BY conversation_id"
    ") h ON h.conversation_id = t.conversation_id AND h.last = t.chain_seq ORDER BY t.conversation_id"
)


def _placeholders(n: int) -> str:
    return ", ".join(["?"] * n)


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
            sql += f" WHERE id IN ({_placeholders(len(params))})" if params else " WHERE 1 = 0"
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
        rows = self._rows(_ROW_BY_KEY, key)
        return rows[0] if rows else None

    def rows(
        self,
        conversation_ids: Sequence[str] | None = None,
        since: datetime.datetime | None = None,
        until: datetime.datetime | None = None,
    ) -> Iterator[LedgerRow]:
        """Rows ordered by (conversation_id, chain_seq); `since` inclusive and `until` exclusive on ts."""
        clauses, params = _row_filters(self._d, conversation_ids, since, until)
        sql = "SELECT " + _COLUMNS + " FROM {ti}" + clauses + " ORDER BY conversation_id, chain_seq"
        return map(self._d.row_from_db, self._stream(self._d.sql(sql), params))

    def conversation_rows(
        self,
        conversation_id: str,
        *,
        after_chain_seq: int = 0,
        tool_call_id: str | None = None,
        limit: int | None = None,
    ) -> list[LedgerRow]:
        """One conversation's rows in chain order, optionally one call's and after a chain position."""
        sql = "SELECT " + _COLUMNS + " FROM {ti} WHERE conversation_id = ? AND chain_seq > ?"
        params: list[Any] = [conversation_id, after_chain_seq]
        if tool_call_id is not None:
            sql, params = sql + " AND tool_call_id = ?", [*params, tool_call_id]
        sql += " ORDER BY chain_seq"
        if limit is not None:
            sql, params = sql + " LIMIT ?", [*params, limit]
        return self._rows(sql, params)

    def in_flight_before(self, cutoff: datetime.datetime, limit: int) -> list[LedgerRow]:
        """Starts older than `cutoff` that have no end, by ts then id."""
        return self._rows(_IN_FLIGHT, [self._d.ts_to_db(_aware("cutoff", cutoff)), limit])

    def heads(self, conversation_id: str | None = None) -> list[Head]:
        """Each conversation's last chain position, sorted by conversation id."""
        if conversation_id is None:
            rows = self._fetch(self._d.sql(_HEADS.replace("{where}", "")), [])
        else:
            rows = self._fetch(self._d.sql(_HEADS.replace("{where}", " WHERE conversation_id = ?")), [conversation_id])
        return [Head(cid, seq, bytes(h)) for cid, seq, h in rows]

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

    def calls(self, where: CallFilter, limit: int) -> list[Call]:
        """Starts joined with their ends, newest first; at most `limit`."""
        sql, params = _CALL_SELECT, []
        ts = self._d.ts_to_db
        for clause, value in (
            (" AND s.conversation_id = ?", where.conversation_id),
            (" AND s.tool_name = ?", where.tool_name),
            (" AND s.started_at >= ?", where.since and ts(_aware("since", where.since))),
            (" AND s.started_at < ?", where.until and ts(_aware("until", where.until))),
            (" AND s.ts < ?", where.in_flight_before and ts(_aware("in_flight_before", where.in_flight_before))),
        ):
            if value is not None:
                sql, params = sql + clause, [*params, value]
        status = "in_flight" if where.in_flight_before is not None else where.status
        if status == "in_flight":
            sql += " AND e.id IS NULL"
        elif status is not None:
            sql, params = sql + " AND e.status = ?", [*params, status]
        sql += " ORDER BY s.started_at DESC, s.conversation_id, s.seq DESC LIMIT ?"
        out = []
        from_ts = self._d.ts_from_db
        for cid, rid, tcid, tool, seq, started, ended, duration, st, error, exit_code, rbytes, trunc in self._fetch(
            self._d.sql(sql), [*params, limit]
        ):
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
        clauses.append(f"conversation_id IN ({_placeholders(len(ids))})" if ids else "1 = 0")
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

    def heads(self, conversation_id: str | None = None) -> list[Head]:
        return []

    def tombstones(self) -> list[Tombstone]:
        return []

    def calls(self, where: CallFilter, limit: int) -> list[Call]:
        return []


class SqlStore(abc.ABC):
    """The Store protocol on top of two backend hooks: a locked write transaction and a read snapshot."""

    backend: str

    def __init__(
        self,
        *,
        dialect: Dialect,
        redactor: LedgerRedactor,
        clock: Clock,
        settings: LedgerSettings,
        redaction_version: int,
        hasher: Hasher = chain.hash_values,
    ) -> None:
        self._dialect = dialect
        self._redactor = redactor
        self._clock = clock
        self._settings = settings
        self._redaction_version = redaction_version
        self._hasher = hasher
        # Meta keys come from a small fixed set, so their redaction check is memoized per store.
        self._key_is_clean = functools.lru_cache(maxsize=4096)(lambda key: redactor.redact(key) == key)
        self.backend = dialect.name

    @abc.abstractmethod
    def _run_write(self, conversation_ids: Sequence[str], full_sync: bool, work: WriteWork[T]) -> T:
        """Run `work(connection)` in one write transaction holding the writer lock of every listed conversation."""

    @abc.abstractmethod
    def snapshot(self) -> AbstractContextManager[SqlSnapshot | EmptySnapshot]:
        """A consistent read view."""

    @abc.abstractmethod
    def schema_version(self) -> int:
        """The highest applied migration (0 for no schema)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections; idempotent."""

    def prepare(self, event: LedgerEvent) -> PreparedRow:
        """The §5 boundary conversion with this store's redactor, ruleset version and clock."""
        return prepare(
            event,
            self._redactor,
            redaction_version=self._redaction_version,
            now=self._clock(),
            key_is_clean=self._key_is_clean,
        )

    def insert(self, event: LedgerEvent) -> InsertResult:
        """Write one row (§8.2); idempotent on (conversation_id, request_id, tool_call_id, event)."""
        return self.insert_many([event])[0]

    def insert_many(self, events: Sequence[LedgerEvent]) -> list[InsertResult]:
        """Write all events in one transaction, in order, chaining each conversation in sequence."""
        prepared = [self.prepare(e) for e in events]
        if not prepared:
            return []
        full_sync = needs_full_sync(prepared, self._settings.end_sync)
        conversations = sorted({p.conversation_id for p in prepared})
        d, hasher = self._dialect, self._hasher
        return self._run_write(conversations, full_sync, lambda conn: write_prepared(conn, d, prepared, hasher))

    def reserve(self, start_event: LedgerEvent) -> Reservation:
        """Insert a start: owned when this call wrote it, else the stored start and its end for replay."""
        if start_event.event != "start":
            raise LedgerValueError("reserve accepts start events only")
        result = self.insert(start_event)
        if result.inserted:
            return Reservation(True, result.row, None)
        start = result.row
        return Reservation(False, start, self.get_end(start.conversation_id, start.request_id, start.tool_call_id))

    def get_end(self, conversation_id: str, request_id: str, tool_call_id: str) -> LedgerRow | None:
        """The end row of a call, or None while it is in flight."""
        with self.snapshot() as snap:
            return snap.row_by_key((conversation_id, request_id, tool_call_id, "end"))

    def list_by_conversation(
        self, conversation_id: str, *, after_chain_seq: int = 0, limit: int | None = None
    ) -> list[LedgerRow]:
        """A conversation's rows in chain_seq order."""
        with self.snapshot() as snap:
            return snap.conversation_rows(conversation_id, after_chain_seq=after_chain_seq, limit=limit)

    def list_in_flight_before(self, cutoff: datetime.datetime, *, limit: int = 1000) -> list[LedgerRow]:
        """Start rows with ts < cutoff and no end, ordered by ts, then id."""
        with self.snapshot() as snap:
            return snap.in_flight_before(cutoff, limit)

    def heads(self, conversation_id: str | None = None) -> list[Head]:
        """Last chain position of each conversation (or of one)."""
        with self.snapshot() as snap:
            return snap.heads(conversation_id)

    def iter_rows(
        self,
        conversation_ids: Sequence[str] | None = None,
        since: datetime.datetime | None = None,
        until: datetime.datetime | None = None,
    ) -> Iterator[LedgerRow]:
        """Stream rows by (conversation_id, chain_seq) from one snapshot."""
        with self.snapshot() as snap:
            yield from snap.rows(conversation_ids, since, until)

    def tombstones(self) -> list[Tombstone]:
        """Every tombstone, oldest first."""
        with self.snapshot() as snap:
            return snap.tombstones()


@contextmanager
def empty_snapshot() -> Iterator[EmptySnapshot]:
    """The snapshot context of a ledger that does not exist."""
    yield EmptySnapshot()
