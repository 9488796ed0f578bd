"""The write side shared by both backends: the docs/ledger.md §8.2 algorithm, and a store built on two backend hooks."""

from __future__ import annotations

import abc
import dataclasses
import datetime
import functools
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from harness.ledger import chain
from harness.ledger.catalog import SchemaObject
from harness.ledger.dialect import COLUMNS_SQL, ROW_BY_KEY, Connection, Cursor, Dialect
from harness.ledger.errors import LedgerIntegrityError, LedgerValueError
from harness.ledger.model import LedgerEvent, LedgerRow, PreparedRow, build_row
from harness.ledger.records import Clock, Head, InsertResult, Reservation, Tombstone
from harness.ledger.redaction_boundary import LedgerRedactor, prepare
from harness.ledger.settings import LedgerSettings
from harness.ledger.sqlread import EmptySnapshot, SqlSnapshot

T = TypeVar("T")
Hasher = Callable[[tuple[Any, ...]], bytes]
Key3 = tuple[str, str, str]
WriteWork = Callable[[Connection], T]
_PROBE_CHUNK = 500
# Rows per INSERT statement in a batch: PostgreSQL sets up the CHECK constraints once per statement, which costs
# more than a row does, so a batch sends a few multi-row statements rather than one statement per row.
_INSERT_CHUNK = 50
# What a store remembers for guessed writes (KnownHeads), least recently written first out.
KNOWN_CONVERSATIONS = 4096
KNOWN_STARTS = 16384

_ROW_VALUES = ", ".join(["?"] * 21) + ", {meta}, ?, ?, ?, ?"
_INSERT = "INSERT INTO {ti} (" + COLUMNS_SQL + ") VALUES "
_ON_CONFLICT = " ON CONFLICT (conversation_id, request_id, tool_call_id, event) DO NOTHING"
# One row, written only while the conversation's last row is still the row's predecessor; a taken call key writes
# nothing either (a chain_seq conflict still raises). Run after the writer lock is granted, under READ COMMITTED,
# so the head it reads is current.
_INSERT_IF_HEAD = (
    "INSERT INTO {ti} (" + COLUMNS_SQL + ") SELECT " + _ROW_VALUES + " WHERE (?, ?) = ("
    "SELECT t.chain_seq, t.row_hash FROM {ti} t WHERE t.conversation_id = ? ORDER BY t.chain_seq DESC LIMIT 1)"
    + _ON_CONFLICT
)
# The reads below ask for an order that only the right index gives: a planner without statistics (a fresh ledger,
# whose prepared statements keep their first plan) rates every index alike and could walk a whole conversation.
_HEAD = "SELECT chain_seq, row_hash FROM {ti} WHERE conversation_id = ? ORDER BY chain_seq DESC LIMIT 1"
_HEADS_STATE = (
    "SELECT v.cid,"
    " (SELECT t.chain_seq FROM {ti} t WHERE t.conversation_id = v.cid ORDER BY t.chain_seq DESC LIMIT 1),"
    " (SELECT t.row_hash FROM {ti} t WHERE t.conversation_id = v.cid ORDER BY t.chain_seq DESC LIMIT 1),"
    " (SELECT t.seq FROM {ti} t WHERE t.conversation_id = v.cid ORDER BY t.seq DESC LIMIT 1),"
    " (SELECT count(*) FROM {co} c WHERE c.id = v.cid),"
    " (SELECT count(*) FROM {tb} b WHERE b.conversation_id = v.cid)"
    " FROM ({values}) v"
)
_CREATE_CONVERSATION = "INSERT INTO {co} (id, created_at) VALUES (?, ?)"
_INSERT_SIDECAR = "INSERT INTO {rs} (end_id, content) VALUES (?, ?)"
_ADD_SIDECAR = (
    "INSERT INTO {rs} (end_id, content) SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM {rs} r WHERE r.end_id = ?)"
)
# A guessed row's result, written in the same implicit transaction only if that row landed under its own id.
_INSERT_SIDECAR_IF_ROW = (
    "INSERT INTO {rs} (end_id, content) SELECT ?, ? WHERE EXISTS (SELECT 1 FROM {ti} t WHERE t.id = ?)"
    " ON CONFLICT (end_id) DO NOTHING"
)
_CALL_ROWS_ONE = (
    "SELECT conversation_id, request_id, tool_call_id, event, seq FROM {ti}"
    " WHERE conversation_id = ? AND request_id = ? AND tool_call_id = ? ORDER BY event"
)
# A join driven by the keys: SQLite scanned the whole table for a row-value IN over VALUES, and looks each key up
# in the call-key index this way. PostgreSQL picks by cost.
_CALL_ROWS_MANY = (
    "SELECT t.conversation_id, t.request_id, t.tool_call_id, t.event, t.seq FROM (VALUES {values}) v"
    " JOIN {ti} t ON t.conversation_id = v.column1 AND t.request_id = v.column2 AND t.tool_call_id = v.column3"
)


@dataclasses.dataclass(frozen=True, slots=True)
class KnownHead:
    """A conversation's state after a write under its writer lock: last chain position and highest start seq."""

    chain_seq: int
    row_hash: bytes
    max_seq: int


@dataclasses.dataclass(frozen=True)
class WriteOutcome:
    """What a write transaction did, and the head it left in each conversation it touched."""

    results: list[InsertResult]
    heads: dict[str, KnownHead]


@dataclasses.dataclass(frozen=True, slots=True)
class Guess:
    """A row computed against a remembered head: it is written only if that head is still the conversation's."""

    row: LedgerRow
    max_seq: int
    sidecar: str | None = None

    def outcome(self) -> WriteOutcome:
        """The outcome of the write once the row is in."""
        row = self.row
        return WriteOutcome(
            [InsertResult(True, row)], {row.conversation_id: KnownHead(row.chain_seq, row.row_hash, self.max_seq)}
        )


class KnownHeads:
    """The heads this store last saw under the writer lock, and the seqs of starts it wrote; bounded, thread-safe.

    They let a single-row write be computed before any read. A guess is only a guess: its insert checks the
    head inside the writer lock, and a stale one falls back to the full docs/ledger.md §8.2 path.
    """

    def __init__(self, max_conversations: int = KNOWN_CONVERSATIONS, max_starts: int = KNOWN_STARTS) -> None:
        self._lock = threading.Lock()
        self._heads: OrderedDict[str, KnownHead] = OrderedDict()
        self._starts: OrderedDict[Key3, int] = OrderedDict()
        self._max_conversations = max_conversations
        self._max_starts = max_starts

    def guess(self, p: PreparedRow, hasher: Hasher) -> Guess | None:
        """The row `p` becomes if the conversation's head is still the remembered one; None without one."""
        with self._lock:
            head = self._heads.get(p.conversation_id)
            if head is None:
                return None
            if p.event == "start":
                seq = max_seq = head.max_seq + 1
            else:
                start_seq = self._starts.get((p.conversation_id, p.request_id, p.tool_call_id))
                if start_seq is None:
                    return None
                seq, max_seq = start_seq, head.max_seq
        row = build_row(p, seq=seq, chain_seq=head.chain_seq + 1, prev_hash=head.row_hash, hasher=hasher)
        return Guess(row, max_seq, p.sidecar)

    def learn(self, outcome: WriteOutcome) -> None:
        """Remember the heads a committed write left and the starts it wrote or found; forget starts that ended."""
        with self._lock:
            heads = self._heads
            for conversation_id, head in outcome.heads.items():
                known = heads.get(conversation_id)
                # Threads may commit in one order and report in another: never step a head back.
                if known is None or head.chain_seq >= known.chain_seq:
                    heads[conversation_id] = head
                heads.move_to_end(conversation_id)
            while len(heads) > self._max_conversations:
                heads.popitem(last=False)
            starts = self._starts
            for result in outcome.results:
                row = result.row
                key = (row.conversation_id, row.request_id, row.tool_call_id)
                if row.event == "start":
                    starts[key] = row.seq
                    starts.move_to_end(key)
                else:
                    starts.pop(key, None)
            while len(starts) > self._max_starts:
                starts.popitem(last=False)

    def forget(self, conversation_ids: Iterable[str]) -> None:
        """Drop the heads of conversations whose write failed (deleted, conflicting or unreachable)."""
        with self._lock:
            for conversation_id in conversation_ids:
                self._heads.pop(conversation_id, None)


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
            cur.execute(_call_rows_sql(d, len(chunk)), [v for key in chunk for v in key])
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


@functools.lru_cache(maxsize=64)
def _call_rows_sql(d: Dialect, keys: int) -> str:
    return d.sql(_CALL_ROWS_MANY.replace("{values}", ", ".join(["(?, ?, ?)"] * keys)))


@functools.lru_cache(maxsize=128)
def _insert_sql(d: Dialect, rows: int) -> str:
    values = ", ".join(["(" + _ROW_VALUES + ")"] * rows)
    return d.sql(_INSERT + values + (_ON_CONFLICT if d.skip_conflicts else ""))


def _insert_rows(conn: Connection, d: Dialect, rows: Sequence[LedgerRow]) -> int:
    """Insert rows in statements of up to _INSERT_CHUNK rows; returns the rows written (only meaningful where the
    driver reports counts at once, as sqlite3 does; a pipeline reports them at its sync)."""
    params = [d.row_params(r) for r in rows]
    full = len(params) - len(params) % _INSERT_CHUNK
    written = 0
    if full:
        cur = conn.cursor()
        chunks = [[v for p in params[n : n + _INSERT_CHUNK] for v in p] for n in range(0, full, _INSERT_CHUNK)]
        cur.executemany(_insert_sql(d, _INSERT_CHUNK), chunks)
        written += cur.rowcount
    if full < len(params):
        cur = conn.cursor()
        cur.execute(_insert_sql(d, len(params) - full), [v for p in params[full:] for v in p])
        written += cur.rowcount
    return written


def send_guess(conn: Connection, d: Dialect, guess: Guess) -> Cursor:
    """Issue a guessed row as one conditional insert; its cursor's rowcount is 1 once it landed, else 0.

    For a pipelining driver, whose results arrive only when the pipeline syncs.
    """
    row = guess.row
    cur = conn.cursor()
    cur.execute(d.sql(_INSERT_IF_HEAD), (*d.row_params(row), row.chain_seq - 1, row.prev_hash, row.conversation_id))
    if guess.sidecar is not None:
        row_id = d.id_to_db(row.id)
        conn.cursor().execute(d.sql(_INSERT_SIDECAR_IF_ROW), (row_id, guess.sidecar, row_id))
    return cur


def _row_by_key(conn: Connection, d: Dialect, key: tuple[str, str, str, str]) -> LedgerRow:
    cur = conn.cursor()
    cur.execute(d.sql(ROW_BY_KEY), key)
    return d.row_from_db(cur.fetchone())


def write_prepared(conn: Connection, d: Dialect, prepared: Sequence[PreparedRow], hasher: Hasher) -> WriteOutcome:
    """docs/ledger.md §8.2 for a batch, inside a transaction whose writer lock covers every involved conversation."""
    existing, heads = _read_probes(*_send_probes(conn, d, prepared))
    written: dict[tuple[str, str, str, str], LedgerRow] = {}
    new_conversations: list[tuple[str, Any]] = []
    new_rows: list[LedgerRow] = []
    new_sidecars: list[tuple[Any, str]] = []
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
        if p.sidecar is not None:
            new_sidecars.append((d.id_to_db(row.id), p.sidecar))
        results.append(InsertResult(True, row))
    if new_rows:
        if new_conversations:
            conn.cursor().executemany(d.sql(_CREATE_CONVERSATION), new_conversations)
        count = _insert_rows(conn, d, new_rows)
        if d.skip_conflicts and count != len(new_rows):
            raise LedgerIntegrityError("a concurrent writer took a call key without the writer lock")
        if new_sidecars:
            conn.cursor().executemany(d.sql(_INSERT_SIDECAR), new_sidecars)
    # Each conversation's head as this transaction leaves it, for the next guesses (an empty one has none).
    known = {
        cid: KnownHead(head.chain_seq, head.row_hash, head.max_seq) for cid, head in heads.items() if head.chain_seq
    }
    return WriteOutcome(results, known)


def needs_full_sync(prepared: Sequence[PreparedRow], end_sync: str) -> bool:
    """Starts always commit with synchronous = FULL; a batch of end rows only follows `[ledger] end_sync`."""
    return end_sync == "full" or any(p.event == "start" for p in prepared)


class SqlStore(abc.ABC):
    """The LedgerStore protocol on top of two backend hooks: a locked write transaction and a read snapshot."""

    backend: str
    # Whether single-row writes are guessed against remembered heads (KnownHeads). It pays only where it saves a
    # round trip (PostgreSQL); SQLite measured no gain (docs/decisions.md, "Ledger storage and group commit").
    guesses = False

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
        self._meta_cache: dict[str, str] = {}
        self._known = KnownHeads()
        self.backend = dialect.name

    @abc.abstractmethod
    def _run_write(
        self,
        conversation_ids: Sequence[str],
        full_sync: bool,
        work: WriteWork[WriteOutcome],
        guess: Guess | None,
    ) -> WriteOutcome:
        """Write under the writer lock of every listed conversation: the guess if it lands, else `work(connection)`."""

    @abc.abstractmethod
    def snapshot(self) -> AbstractContextManager[SqlSnapshot | EmptySnapshot]:
        """A consistent read view."""

    @abc.abstractmethod
    def schema_version(self) -> int:
        """The highest applied migration (0 for no schema)."""

    @abc.abstractmethod
    def expected_catalog(self) -> frozenset[SchemaObject]:
        """The schema objects the shipped migrations create (catalog.py)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections; idempotent."""

    def prepare(self, event: LedgerEvent) -> PreparedRow:
        """The docs/ledger.md §5 boundary conversion with this store's redactor, ruleset version and clock."""
        return prepare(
            event,
            self._redactor,
            redaction_version=self._redaction_version,
            now=self._clock(),
            key_is_clean=self._key_is_clean,
            meta_cache=self._meta_cache,
            sidecar_cap=self._settings.sidecar_max_bytes,
        )

    def insert(self, event: LedgerEvent) -> InsertResult:
        """Write one row (docs/ledger.md §8.2); idempotent on (conversation_id, request_id, tool_call_id, event)."""
        return self.insert_many([event])[0]

    def insert_many(self, events: Sequence[LedgerEvent]) -> list[InsertResult]:
        """Write all events in one transaction, in order, chaining each conversation in sequence."""
        prepared = [self.prepare(e) for e in events]
        if not prepared:
            return []
        full_sync = needs_full_sync(prepared, self._settings.end_sync)
        conversations = sorted({p.conversation_id for p in prepared})
        d, hasher = self._dialect, self._hasher
        # The dispatcher writes one row at a time, mostly into conversations this store wrote last: computing the
        # row against the remembered head saves reading it, in one round trip when nobody else wrote meanwhile.
        guess = self._known.guess(prepared[0], hasher) if self.guesses and len(prepared) == 1 else None
        try:
            outcome = self._run_write(
                conversations, full_sync, lambda conn: write_prepared(conn, d, prepared, hasher), guess
            )
        except BaseException:
            self._known.forget(conversations)
            raise
        self._known.learn(outcome)
        return outcome.results

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

    def add_sidecars(self, results: Sequence[tuple[uuid.UUID, str]]) -> int:
        """Store the full results of end rows written before the result_sidecars table (their sidecar files), in
        one transaction; a result stored already is kept. Returns how many were added."""
        d = self._dialect

        def work(conn: Connection) -> WriteOutcome:
            cur = conn.cursor()
            for row_id, content in results:
                cur.execute(d.sql(_ADD_SIDECAR), (d.id_to_db(row_id), content, d.id_to_db(row_id)))
            return WriteOutcome([], {})

        before = self._stored_sidecars()
        self._run_write([], True, work, None)
        return self._stored_sidecars() - before

    def _stored_sidecars(self) -> int:
        with self.snapshot() as snap:
            return snap.count_sidecars()

    def tombstones(self) -> list[Tombstone]:
        """Every tombstone, oldest first."""
        with self.snapshot() as snap:
            return snap.tombstones()
