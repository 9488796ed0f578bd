"""The read index (docs/investigate.md §4): a disposable SQLite copy of the streams at one commit.

Each call resolves HEAD; when the indexed commit differs, the index catches up under an exclusive flock
in one BEGIN IMMEDIATE transaction (unchanged segments skipped, a grown last segment extended after a
sha256 check of its indexed prefix, new segments added, anything else rebuilt). Reads of one call run in
one read transaction. A corrupt or foreign file is deleted and rebuilt; an unwritable location falls back
to an in-memory index built by full replay.

Where the index lives is store/index_backends.py, its tables store/index_schema.py, and what a view reads
store/index_queries.py.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.store.baseline_model import Baseline
from harness.store.git import Git, unavailable
from harness.store.index_backends import (
    Backend,
    FileBackend,
    MemoryBackend,
    Unwritable,
    busy_error,
    end_read,
    error_kind,
)
from harness.store.index_bulk import rebuilt_indexes, worth_rebuilding
from harness.store.index_queries import IndexView
from harness.store.index_schema import (
    SCHEMA_VERSION,
    insert_keyed_sql,
    keyed_row,
    read_meta,
    schema_statements,
    table_name,
)
from harness.store.query import StoreView
from harness.store.reader import duplicate_id, list_segments, read_stream, segment_records
from harness.store.replay import ReplayView
from harness.store.segments import Segment, SegmentMeta
from harness.store.streams import STREAMS, StreamSpec
from harness.text.canonjson import loads_line

log = logging.getLogger("harness.store")


class _Reset(Exception):
    """The index file must be deleted and rebuilt (another schema version)."""


class Index:
    """The read index of one store (see the module docstring)."""

    def __init__(self, path: Path, git: Git) -> None:
        self.path = path
        self._git = git
        self._repository = str(git.git_dir)
        self._backend: Backend = FileBackend(path)
        self._switch_lock = threading.Lock()
        self._baseline_cache: tuple[str, Baseline] | None = None

    @property
    def in_memory(self) -> bool:
        """Whether the location was unwritable and the index lives in memory."""
        return isinstance(self._backend, MemoryBackend)

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
                commit = read_meta(conn).get("commit", "")
            except sqlite3.DatabaseError:
                if conn is not None:
                    end_read(conn)
                # Broken between the freshness check and the read: this call is served by replay.
                self.discard(backend)
                yield self.replay_view(self._git.head_commit())
                return
            try:
                yield IndexView(self, conn, commit)
            finally:
                end_read(conn)

    def replay_view(self, commit: str) -> ReplayView:
        """A full replay of `commit`, for a call during which the index broke."""
        return ReplayView(commit, {name: read_stream(self._git, commit, spec) for name, spec in STREAMS.items()})

    def discard(self, backend: Backend | None = None) -> None:
        """Delete a broken index so the next call rebuilds it."""
        backend = backend or self._backend
        log.warning("read index %s: unreadable; it will be rebuilt", backend.description)
        try:
            with backend.locked():
                backend.reset()
        except (Unwritable, sqlite3.DatabaseError, OSError):
            pass

    def _current(self, conn: sqlite3.Connection, head: str) -> bool:
        meta = read_meta(conn)
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
            if error_kind(exc) == "busy":
                raise busy_error(exc) from exc
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
                        kind = error_kind(exc) if isinstance(exc, sqlite3.DatabaseError) else "reset"
                        if kind == "busy":
                            raise busy_error(exc) from exc  # type: ignore[arg-type]
                        if kind == "unwritable":
                            raise Unwritable(str(exc)) from exc
                        log.warning("read index %s: %s; deleting and rebuilding it", backend.description, exc)
                        backend.reset()
            except Unwritable as exc:
                self._fall_back(backend, str(exc))
        raise unavailable(f"the read index {self._backend.description} could not be rebuilt")

    def _fall_back(self, broken: Backend, reason: str) -> None:
        with self._switch_lock:
            if self._backend is broken:
                log.warning(
                    "read index %s cannot be written (%s); using an in-memory index built by full replay",
                    broken.description,
                    reason,
                )
                self._backend = MemoryBackend(broken.description)

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
            for statement in schema_statements():
                conn.execute(statement)
            # A new index is the (empty) index of this repository's empty commit.
            meta = {"schema": SCHEMA_VERSION, "commit": "", "repository": self._repository}
            conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
            return meta
        meta = read_meta(conn) if "meta" in tables else {}
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
                table = table_name(spec.name)
                conn.execute(f"DELETE FROM {table}")
                conn.execute("DELETE FROM segments WHERE stream = ?", (spec.name,))
                segments = listing[spec.name]
                size = sum(segment.size for segment in segments)
                with rebuilt_indexes(conn, table, worth_rebuilding(0, size, in_bytes=True)):
                    for segment in segments:
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
            grown: tuple[Segment, bytes, int, int] | None = None
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
                grown = (segment, data, length, lines)
            added = current[len(indexed) :]
            growth = sum(segment.size for segment in added) + (grown[0].size - grown[2] if grown else 0)
            existing = sum(row[2] for row in indexed)
            with rebuilt_indexes(conn, table_name(spec.name), worth_rebuilding(existing, growth, in_bytes=True)):
                if grown is not None:
                    self._add_segment(conn, spec, *grown)
                for segment in added:
                    self._add_segment(conn, spec, segment, blobs.read(segment.blob), 0, 0)
        return True

    def _add_segment(
        self, conn: sqlite3.Connection, spec: StreamSpec, segment: Segment, data: bytes, offset: int, lines: int
    ) -> None:
        """Index the lines of `data` after byte `offset` (whose first `lines` lines are indexed already)."""
        table = table_name(spec.name)
        start = conn.execute(f"SELECT coalesce(max(seq) + 1, 0) FROM {table}").fetchone()[0]
        # The line number and record of the row executemany took last: the one it stopped at when it fails.
        last: tuple[int, dict[str, Any]] = (lines, {})

        def rows() -> Iterator[tuple[Any, ...]]:
            nonlocal last
            for seq, (number, line, record) in enumerate(segment_records(spec, segment.path, data[offset:], lines + 1), start):
                last = (number, record)
                if spec.keyed:
                    yield keyed_row(spec.name, seq, record, line)
                else:
                    yield seq, hashlib.sha256(line).hexdigest(), line

        try:
            conn.executemany(insert_keyed_sql(spec.name) if spec.keyed else f"INSERT INTO {table} VALUES (?, ?, ?)", rows())
        except sqlite3.IntegrityError as exc:
            raise duplicate_id(segment.path, last[0], last[1]["id"]) from exc
        count = last[0]
        conn.execute(
            "INSERT OR REPLACE INTO segments VALUES (?, ?, ?, ?, ?, ?)",
            (spec.name, segment.number, segment.blob, len(data), count, hashlib.sha256(data).hexdigest()),
        )

    def advance(
        self,
        old: str,
        new: str,
        spec: StreamSpec,
        writes: Sequence[SegmentMeta],
        lines: Iterable[bytes],
        count: int,
    ) -> None:
        """After a successful append from `old` to `new`, add its `count` lines when the index is exactly at `old`.

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
                    self._insert_trusted(conn, spec, lines, count)
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
        except (sqlite3.DatabaseError, _Reset, Unwritable, OSError) as exc:
            log.warning(
                "read index %s: not advanced after an append (%s); the next read catches up", backend.description, exc
            )

    def _insert_trusted(
        self, conn: sqlite3.Connection, spec: StreamSpec, lines: Iterable[bytes], count: int
    ) -> None:
        table = table_name(spec.name)
        start = conn.execute(f"SELECT coalesce(max(seq) + 1, 0) FROM {table}").fetchone()[0]
        if spec.keyed:
            rows = (keyed_row(spec.name, seq, loads_line(line), line) for seq, line in enumerate(lines, start))
            with rebuilt_indexes(conn, table, worth_rebuilding(start, count)):
                conn.executemany(insert_keyed_sql(spec.name), rows)
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
