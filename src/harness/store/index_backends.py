"""Where the read index lives: the index file (a bounded pool of read connections, a flock around writes) or,
for an unwritable location, one in-memory database; and how SQLite errors on it are classified."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

from harness.errors import UpstreamUnavailable
from harness.store.git import unavailable

BUSY_TIMEOUT_S = 5.0
_UNWRITABLE_CODES = {3, 8, 10, 13, 14}  # PERM, READONLY, IOERR, FULL, CANTOPEN
_BUSY_CODES = {5, 6}  # BUSY, LOCKED


class Unwritable(Exception):
    """The index location cannot be written."""


def error_kind(exc: sqlite3.DatabaseError) -> str:
    """"busy" (wait failed), "unwritable" (fall back to memory) or "broken" (delete and rebuild)."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in _BUSY_CODES:
        return "busy"
    return "unwritable" if code in _UNWRITABLE_CODES else "broken"


def busy_error(exc: sqlite3.DatabaseError) -> UpstreamUnavailable:
    """The error of a call that waited for the index in vain."""
    return unavailable(f"read index busy: {exc}")


# Read connections to the index file at most, each with a page cache of at most PAGE_CACHE_KIB: the memory of
# reads is bounded however many threads or HTTP clients read at once (docs/decisions.md, "Team server limits").
READ_POOL_SIZE = 8
PAGE_CACHE_KIB = 16_384


def connect(target: str) -> sqlite3.Connection:
    """A connection to the index file (or `:memory:`) with the busy timeout and the capped page cache."""
    conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
    return conn


class Backend(Protocol):
    """Where the index lives: read connections, the write lock, a write connection and a reset."""

    description: str

    def reader(self) -> sqlite3.Connection | None: ...

    def reading(self) -> AbstractContextManager[Any]: ...

    def locked(self) -> AbstractContextManager[Any]: ...

    def writer(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def reset(self) -> None: ...


class FileBackend:
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
                pooled = (connect(str(self.path)), identity)
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
            raise Unwritable(exc.strerror or str(exc)) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    @contextmanager
    def writer(self) -> Iterator[sqlite3.Connection]:
        conn = connect(str(self.path))
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
                raise Unwritable(exc.strerror or str(exc)) from exc


class MemoryBackend:
    """An in-memory index for an unwritable location: one connection, every use serialized."""

    def __init__(self, description: str) -> None:
        self.description = f"in-memory index for {description}"
        self._conn = connect(":memory:")
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
        self._conn = connect(":memory:")


def end_read(conn: sqlite3.Connection) -> None:
    """End a read transaction; on a database that broke meanwhile there is nothing to lose."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.DatabaseError:
        pass
