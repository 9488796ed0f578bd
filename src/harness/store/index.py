"""The read index (docs/investigate.md §4): a disposable SQLite copy of the streams at one commit.

Each call resolves HEAD; when the indexed commit differs, the index catches up under an exclusive flock
in one BEGIN IMMEDIATE transaction (unchanged segments skipped, a grown last segment extended after a
sha256 check of its indexed prefix, new segments added, anything else rebuilt). Reads of one call run in
one read transaction. A corrupt or foreign file is deleted and rebuilt; an unwritable location falls back
to an in-memory index built by full replay.
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

from harness.errors import InternalError, UpstreamUnavailable
from harness.store.baseline_model import Baseline
from harness.store.eventfields import event_ip, event_target
from harness.store.git import Git, unavailable
from harness.store.query import Page, RecordFilter, StoreView, time_key
from harness.store.reader import duplicate_id, list_segments, read_stream, segment_records
from harness.store.replay import ReplayView
from harness.store.segments import Segment, SegmentMeta
from harness.store.streams import STREAMS, StreamSpec
from harness.text.casefold import ci_key
from harness.text.rfc3339 import MAX_INSTANT

log = logging.getLogger("harness.store")

# 2: ts is the result-order key and the order indexes end in (ts, seq); 3: events gain target and ip columns
SCHEMA_VERSION = "3"
BUSY_TIMEOUT_S = 5.0
_UNWRITABLE_CODES = {3, 8, 10, 13, 14}  # PERM, READONLY, IOERR, FULL, CANTOPEN
_BUSY_CODES = {5, 6}  # BUSY, LOCKED
_RECORD_COLUMNS = ("actor", "type", "source")
# The equality filters of each keyed stream: the record's own fields, and for events the payload's target and ip
# (store/eventfields.py).
_FILTER_COLUMNS = {"events": (*_RECORD_COLUMNS, "target", "ip"), "findings": _RECORD_COLUMNS}


def _order_keys(columns: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """Every combination of the equality filters has its own index of those columns then ts; SQLite ends every
    index key with the rowid (seq), so each is ordered by (columns, ts, seq), the result order: a page is read from
    the start of its range, never sorted, and the count reads the same index without touching a row."""
    return tuple(combo for size in range(len(columns) + 1) for combo in itertools.combinations(columns, size))


class _Unwritable(Exception):
    """The index location cannot be written."""


class _Reset(Exception):
    """The index file must be deleted and rebuilt (another schema version)."""


def _table(stream: str) -> str:
    return f"r_{stream}"


def _order_index(table: str, columns: Sequence[str]) -> str:
    return f"{table}_by_{'_'.join(columns) or 'time'}"


def _schema() -> list[str]:
    statements = [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE segments (stream TEXT NOT NULL, number INTEGER NOT NULL, blob TEXT NOT NULL,"
        " length INTEGER NOT NULL, lines INTEGER NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY (stream, number))",
    ]
    for spec in STREAMS.values():
        table = _table(spec.name)
        if not spec.keyed:
            statements.append(f"CREATE TABLE {table} (seq INTEGER PRIMARY KEY, sha256 TEXT NOT NULL, line BLOB NOT NULL)")
            continue
        # lid and the filter columns hold casefold.ci_key forms: ci-equal is never SQLite's lower() or LIKE.
        # ts is the record's time_key (UNDATED for a record without a timestamp).
        filters = _FILTER_COLUMNS[spec.name]
        statements += [
            f"CREATE TABLE {table} (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, lid TEXT NOT NULL,"
            f" {', '.join(f'{name} TEXT NOT NULL' for name in filters)}, ts INTEGER NOT NULL, line BLOB NOT NULL)",
            f"CREATE UNIQUE INDEX {table}_lid ON {table} (lid)",
            *(
                f"CREATE INDEX {_order_index(table, columns)} ON {table} ({', '.join((*columns, 'ts'))})"
                for columns in _order_keys(filters)
            ),
        ]
    return statements


def _error_kind(exc: sqlite3.DatabaseError) -> str:
    """"busy" (wait failed), "unwritable" (fall back to memory) or "broken" (delete and rebuild)."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in _BUSY_CODES:
        return "busy"
    return "unwritable" if code in _UNWRITABLE_CODES else "broken"


def _busy(exc: sqlite3.DatabaseError) -> UpstreamUnavailable:
    return unavailable(f"read index busy: {exc}")


def _meta(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


# Read connections to the index file at most, each with a page cache of at most PAGE_CACHE_KIB: the memory of
# reads is bounded however many threads or HTTP clients read at once (docs/decisions.md, "Team server limits").
READ_POOL_SIZE = 8
PAGE_CACHE_KIB = 16_384


def _connect(target: str) -> sqlite3.Connection:
    conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
    return conn


class _Backend(Protocol):
    description: str

    def reader(self) -> sqlite3.Connection | None: ...

    def reading(self) -> AbstractContextManager[Any]: ...

    def locked(self) -> AbstractContextManager[Any]: ...

    def writer(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def reset(self) -> None: ...


class _FileBackend:
    """The index file: a bounded pool of read connections (one is held for the length of `reading()`, and
    reopened when the file's inode changed), a fresh connection per write, and an exclusive flock on
    `<index>.lock` around every write and reset."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = str(path)
        self._lock_path = path.with_name(path.name + ".lock")
        self._slots = threading.BoundedSemaphore(READ_POOL_SIZE)
        self._idle_lock = threading.Lock()
        self._idle: list[tuple[sqlite3.Connection, tuple[int, int]]] = []
        self._local = threading.local()

    def _identity(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def reader(self) -> sqlite3.Connection | None:
        """The read connection this thread holds inside `reading()`, or None when the file does not exist."""
        return getattr(self._local, "conn", None)

    @contextmanager
    def reading(self) -> Iterator[None]:
        self._slots.acquire()
        try:
            identity = self._identity()
            with self._idle_lock:
                pooled = self._idle.pop() if self._idle else None
            if pooled is not None and pooled[1] != identity:
                pooled[0].close()
                pooled = None
            if pooled is None and identity is not None:
                pooled = (_connect(str(self.path)), identity)
            outer = getattr(self._local, "conn", None)
            self._local.conn = pooled[0] if pooled else None
            try:
                yield
            finally:
                self._local.conn = outer
                if pooled is not None:
                    with self._idle_lock:
                        self._idle.append(pooled)
        finally:
            self._slots.release()

    @contextmanager
    def locked(self) -> Iterator[None]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _Unwritable(exc.strerror or str(exc)) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    @contextmanager
    def writer(self) -> Iterator[sqlite3.Connection]:
        conn = _connect(str(self.path))
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            # The index is disposable: a crash costs a rebuild, never data.
            conn.execute("PRAGMA synchronous = NORMAL")
            yield conn
        finally:
            conn.close()

    def reset(self) -> None:
        """Delete the file with its -wal/-shm (the caller holds `locked()`); open read connections notice
        the new inode on their next use."""
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise _Unwritable(exc.strerror or str(exc)) from exc


class _MemoryBackend:
    """An in-memory index for an unwritable location: one connection, every use serialized."""

    def __init__(self, description: str) -> None:
        self.description = f"in-memory index for {description}"
        self._conn = _connect(":memory:")
        self._lock = threading.RLock()

    def reader(self) -> sqlite3.Connection | None:
        return self._conn

    def reading(self) -> AbstractContextManager[Any]:
        return self._lock

    def locked(self) -> AbstractContextManager[Any]:
        return self._lock

    @contextmanager
    def writer(self) -> Iterator[sqlite3.Connection]:
        yield self._conn

    def reset(self) -> None:
        # A view may still hold the old connection; it closes when the last reference goes.
        self._conn = _connect(":memory:")


def _filter_value(record: dict[str, Any], name: str) -> str:
    if name == "target":
        return event_target(record["payload"])
    if name == "ip":
        return event_ip(record["payload"])
    return str(record[name])


def _keyed_row(stream: str, seq: int, record: dict[str, Any], line: bytes) -> tuple[Any, ...]:
    return (
        seq,
        record["id"],
        ci_key(record["id"]),
        *(ci_key(_filter_value(record, name)) for name in _FILTER_COLUMNS[stream]),
        time_key(record["timestamp"]),
        line,
    )


def _insert_keyed(stream: str) -> str:
    return f"INSERT INTO {_table(stream)} VALUES ({', '.join('?' * (len(_FILTER_COLUMNS[stream]) + 5))})"


def _end_read(conn: sqlite3.Connection) -> None:
    """End a read transaction; on a database that broke meanwhile there is nothing to lose."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.DatabaseError:
        pass


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


class Index:
    """The read index of one store (see the module docstring)."""

    def __init__(self, path: Path, git: Git) -> None:
        self.path = path
        self._git = git
        self._repository = str(git.git_dir)
        self._backend: _Backend = _FileBackend(path)
        self._switch_lock = threading.Lock()
        self._baseline_cache: tuple[str, Baseline] | None = None

    @property
    def in_memory(self) -> bool:
        """Whether the location was unwritable and the index lives in memory."""
        return isinstance(self._backend, _MemoryBackend)

    @contextmanager
    def view(self, head: str) -> Iterator[StoreView]:
        """A view of one commit (HEAD at some instant of the call), catching up first when needed."""
        self._freshen(head)
        backend = self._backend
        with backend.reading():
            conn = backend.reader()
            try:
                if conn is None:
                    raise sqlite3.DatabaseError("the index file disappeared")
                conn.execute("BEGIN")
                commit = _meta(conn).get("commit", "")
            except sqlite3.DatabaseError:
                if conn is not None:
                    _end_read(conn)
                # Broken between the freshness check and the read: this call is served by replay.
                self.discard(backend)
                yield self.replay_view(self._git.head_commit())
                return
            try:
                yield IndexView(self, conn, commit)
            finally:
                _end_read(conn)

    def replay_view(self, commit: str) -> ReplayView:
        """A full replay of `commit`, for a call during which the index broke."""
        return ReplayView(commit, {name: read_stream(self._git, commit, spec) for name, spec in STREAMS.items()})

    def discard(self, backend: _Backend | None = None) -> None:
        """Delete a broken index so the next call rebuilds it."""
        backend = backend or self._backend
        log.warning("read index %s: unreadable; it will be rebuilt", backend.description)
        try:
            with backend.locked():
                backend.reset()
        except (_Unwritable, sqlite3.DatabaseError, OSError):
            pass

    def _current(self, conn: sqlite3.Connection, head: str) -> bool:
        meta = _meta(conn)
        return (
            meta.get("schema") == SCHEMA_VERSION
            and meta.get("repository") == self._repository
            and meta.get("commit") == head
        )

    def _freshen(self, head: str) -> None:
        """Make sure the index is at `head` or a later HEAD."""
        backend = self._backend
        try:
            with backend.reading():
                conn = backend.reader()
                if conn is not None and self._current(conn, head):
                    return
        except sqlite3.DatabaseError as exc:
            if _error_kind(exc) == "busy":
                raise _busy(exc) from exc
        self.catch_up()

    def catch_up(self) -> None:
        """Bring the index to the current HEAD (the write path; see the module docstring)."""
        for _ in range(3):
            backend = self._backend
            try:
                with backend.locked():
                    try:
                        with backend.writer() as conn:
                            self._sync(conn)
                        return
                    except (sqlite3.DatabaseError, _Reset) as exc:
                        kind = _error_kind(exc) if isinstance(exc, sqlite3.DatabaseError) else "reset"
                        if kind == "busy":
                            raise _busy(exc) from exc  # type: ignore[arg-type]
                        if kind == "unwritable":
                            raise _Unwritable(str(exc)) from exc
                        log.warning("read index %s: %s; deleting and rebuilding it", backend.description, exc)
                        backend.reset()
            except _Unwritable as exc:
                self._fall_back(backend, str(exc))
        raise unavailable(f"the read index {self._backend.description} could not be rebuilt")

    def _fall_back(self, broken: _Backend, reason: str) -> None:
        with self._switch_lock:
            if self._backend is broken:
                log.warning(
                    "read index %s cannot be written (%s); using an in-memory index built by full replay",
                    broken.description,
                    reason,
                )
                self._backend = _MemoryBackend(broken.description)

    def _sync(self, conn: sqlite3.Connection) -> None:
        head = self._git.head_commit()
        conn.execute("BEGIN IMMEDIATE")
        try:
            meta = self._prepare(conn)
            if meta.get("commit") != head or meta.get("repository") != self._repository:
                self._apply(conn, meta, head)
                conn.executemany(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    [("commit", head), ("repository", self._repository)],
                )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _prepare(self, conn: sqlite3.Connection) -> dict[str, str]:
        """The meta of a usable schema, creating it in an empty database; another version means reset."""
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            for statement in _schema():
                conn.execute(statement)
            # A new index is the (empty) index of this repository's empty commit.
            meta = {"schema": SCHEMA_VERSION, "commit": "", "repository": self._repository}
            conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
            return meta
        meta = _meta(conn) if "meta" in tables else {}
        if meta.get("schema") != SCHEMA_VERSION:
            raise _Reset(f"schema version {meta.get('schema', 'unknown')!r}, expected {SCHEMA_VERSION!r}")
        return meta

    def _apply(self, conn: sqlite3.Connection, meta: dict[str, str], head: str) -> None:
        listing = list_segments(self._git, head, list(STREAMS))
        with self._git.blobs() as blobs:
            if meta.get("repository") == self._repository and self._extend(conn, listing, blobs):
                return
            if head:
                log.warning("read index %s: rebuilding from commit %s", self._backend.description, head)
            for spec in STREAMS.values():
                conn.execute(f"DELETE FROM {_table(spec.name)}")
                conn.execute("DELETE FROM segments WHERE stream = ?", (spec.name,))
                for segment in listing[spec.name]:
                    self._add_segment(conn, spec, segment, blobs.read(segment.blob), 0, 0)

    def _extend(self, conn: sqlite3.Connection, listing: dict[str, list[Segment]], blobs: Any) -> bool:
        """Incremental catch-up; False when a difference needs a full rebuild (nothing kept then)."""
        for spec in STREAMS.values():
            indexed = conn.execute(
                "SELECT number, blob, length, lines, sha256 FROM segments WHERE stream = ? ORDER BY number",
                (spec.name,),
            ).fetchall()
            current = listing[spec.name]
            if len(current) < len(indexed):
                return False
            for position, (number, blob, length, lines, digest) in enumerate(indexed):
                segment = current[position]
                if segment.number != number:
                    return False
                if segment.blob == blob:
                    continue
                if position != len(indexed) - 1 or segment.size <= length:
                    return False
                data = blobs.read(segment.blob)
                if hashlib.sha256(data[:length]).hexdigest() != digest:
                    return False
                self._add_segment(conn, spec, segment, data, length, lines)
            for segment in current[len(indexed) :]:
                self._add_segment(conn, spec, segment, blobs.read(segment.blob), 0, 0)
        return True

    def _add_segment(
        self, conn: sqlite3.Connection, spec: StreamSpec, segment: Segment, data: bytes, offset: int, lines: int
    ) -> None:
        """Index the lines of `data` after byte `offset` (whose first `lines` lines are indexed already)."""
        table = _table(spec.name)
        seq = conn.execute(f"SELECT coalesce(max(seq) + 1, 0) FROM {table}").fetchone()[0]
        count = lines
        for number, line, record in segment_records(spec, segment.path, data[offset:], lines + 1):
            if spec.keyed:
                try:
                    conn.execute(_insert_keyed(spec.name), _keyed_row(spec.name, seq, record, line))
                except sqlite3.IntegrityError as exc:
                    raise duplicate_id(segment.path, number, record["id"]) from exc
            else:
                conn.execute(f"INSERT INTO {table} VALUES (?, ?, ?)", (seq, hashlib.sha256(line).hexdigest(), line))
            seq += 1
            count = number
        conn.execute(
            "INSERT OR REPLACE INTO segments VALUES (?, ?, ?, ?, ?, ?)",
            (spec.name, segment.number, segment.blob, len(data), count, hashlib.sha256(data).hexdigest()),
        )

    def advance(
        self, old: str, new: str, spec: StreamSpec, writes: Sequence[SegmentMeta], lines: Iterable[bytes]
    ) -> None:
        """After a successful append from `old` to `new`, add its lines when the index is exactly at `old`.

        The lines were validated and encoded by the append, so they are not decoded again; any problem
        only leaves the index behind, and the next read catches up.
        """
        backend = self._backend
        try:
            with backend.locked(), backend.writer() as conn:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    meta = self._prepare(conn)
                    if meta.get("commit") != old or meta.get("repository") != self._repository:
                        conn.execute("ROLLBACK")
                        return
                    self._insert_trusted(conn, spec, lines)
                    conn.executemany(
                        "INSERT OR REPLACE INTO segments VALUES (?, ?, ?, ?, ?, ?)",
                        [(spec.name, w.number, w.blob, w.length, w.lines, w.sha256) for w in writes],
                    )
                    conn.execute("UPDATE meta SET value = ? WHERE key = 'commit'", (new,))
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        except (sqlite3.DatabaseError, _Reset, _Unwritable, OSError) as exc:
            log.warning(
                "read index %s: not advanced after an append (%s); the next read catches up", backend.description, exc
            )

    def _insert_trusted(self, conn: sqlite3.Connection, spec: StreamSpec, lines: Iterable[bytes]) -> None:
        table = _table(spec.name)
        start = conn.execute(f"SELECT coalesce(max(seq) + 1, 0) FROM {table}").fetchone()[0]
        if spec.keyed:
            rows = (_keyed_row(spec.name, seq, json.loads(line), line) for seq, line in enumerate(lines, start))
            conn.executemany(_insert_keyed(spec.name), rows)
        else:
            rows2 = ((seq, hashlib.sha256(line).hexdigest(), line) for seq, line in enumerate(lines, start))
            conn.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", rows2)

    def cached_baseline(self, digest: str) -> Baseline | None:
        """The parsed baseline whose line has this sha256, if it is the one cached."""
        cached = self._baseline_cache
        return cached[1] if cached is not None and cached[0] == digest else None

    def cache_baseline(self, digest: str, baseline: Baseline) -> None:
        """Remember the last parsed baseline (parsing a large one costs more than the query)."""
        self._baseline_cache = (digest, baseline)


class IndexView(StoreView):
    """Queries over the index inside one read transaction."""

    def __init__(self, index: Index, conn: sqlite3.Connection, commit: str) -> None:
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
        table = _table(stream)
        where, params, index = _where(table, _FILTER_COLUMNS[stream], flt)
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
            rows = self._conn.execute(f"SELECT line FROM {_table(stream)} ORDER BY seq")
            return (json.loads(line) for (line,) in rows)
        except sqlite3.DatabaseError:
            return self._replay().records(stream)

    def stored_line(self, stream: str, key: str) -> bytes | None:
        if self._fallback is not None:
            return self._fallback.stored_line(stream, key)
        if not _encodable([key]):
            return None
        try:
            rows = self._query(f"SELECT line FROM {_table(stream)} WHERE lid = ?", (key,))
        except sqlite3.DatabaseError:
            return self._replay().stored_line(stream, key)
        return bytes(rows[0][0]) if rows else None

    def latest_baseline(self) -> Baseline | None:
        if self._fallback is not None:
            return self._fallback.latest_baseline()
        table = _table("baseline")
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
            rows = self._query(f"SELECT id FROM {_table(stream)} WHERE lid = ?", (lowered,))
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
        table = _table(stream)
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
        index = _order_index(table, given)
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
