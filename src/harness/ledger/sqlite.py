"""The SQLite backend (docs/ledger.md §7.3, docs/ledger.md §10): one writer connection per process, WAL, BEGIN IMMEDIATE per write."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import os
import sqlite3
import threading
import urllib.parse
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.ledger import catalog, chain, migrations
from harness.ledger.dialect import Dialect, as_is
from harness.ledger.errors import LedgerBackendError, LedgerError, LedgerIntegrityError
from harness.ledger.model import format_ts
from harness.ledger.records import Clock
from harness.ledger.redaction_boundary import LedgerRedactor
from harness.ledger.settings import LedgerSettings
from harness.ledger.sqlcore import Guess, Hasher, SqlStore, WriteOutcome, WriteWork
from harness.ledger.sqlread import SqlSnapshot, empty_snapshot
from harness.text import redact

MIN_SQLITE_VERSION = (3, 37, 0)

_BOOTSTRAP = """CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY CHECK (version >= 1),
  name TEXT NOT NULL,
  checksum TEXT NOT NULL CHECK (length(checksum) = 64),
  applied_at TEXT NOT NULL,
  applied_by TEXT
) STRICT"""


# Statistics tables (ANALYZE, PRAGMA optimize) only steer the query planner; everything else is compared.
CATALOG_SQL = (
    "SELECT type, name, 'on ' || tbl_name || ': ' || coalesce(sql, '') FROM sqlite_schema"
    " WHERE substr(name, 1, 11) <> 'sqlite_stat'"
)


def _ts_from_db(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text)


DIALECT = Dialect(
    name="sqlite",
    prefix="",
    param="?",
    meta_cast="",
    principal_sql="json_extract(s.meta, '$.caller.principal')",
    skip_conflicts=True,
    id_to_db=str,
    ts_to_db=format_ts,
    bool_to_db=int,
    id_from_db=uuid.UUID,
    ts_from_db=_ts_from_db,
    bool_from_db=bool,
    meta_from_db=as_is,
    hash_from_db=as_is,
    catalog_sql=CATALOG_SQL,
    # One writer at a time assigns rowids in commit order.
    tail_key_sql="rowid",
    tail_param_sql="CAST(? AS INTEGER)",
    tail_ready_sql="1 = 1",
)


def _unavailable(exc: sqlite3.Error) -> LedgerError:
    if isinstance(exc, sqlite3.IntegrityError):
        return LedgerIntegrityError(f"ledger constraint failed: {exc}")
    return LedgerBackendError(f"SQLite ledger unavailable: {exc}")


def check_library() -> None:
    """Refuse SQLite builds older than 3.37 (STRICT tables)."""
    if sqlite3.sqlite_version_info < MIN_SQLITE_VERSION:
        raise LedgerBackendError(f"SQLite {sqlite3.sqlite_version} is too old; the ledger needs 3.37 or newer")


def connect(path: Path, *, busy_timeout_ms: int, query_only: bool) -> sqlite3.Connection:
    """The one connection factory: existing file only, foreign keys asserted, WAL, busy timeout, untrusted schema."""
    uri = "file:" + urllib.parse.quote(str(path.absolute())) + "?mode=rw"
    try:
        conn = sqlite3.connect(
            uri, uri=True, isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
        )
    except sqlite3.Error as exc:
        raise LedgerBackendError(f"cannot open the SQLite ledger: {exc}") from exc
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        # Without foreign keys there is no cascade, only orphans: refuse rather than run unguarded.
        if conn.execute("PRAGMA foreign_keys").fetchone()[0] != 1:
            raise LedgerBackendError("this SQLite build cannot enforce foreign keys")
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA trusted_schema = OFF")
        if hasattr(conn, "setconfig"):
            conn.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("SELECT json_valid('{}')")
        if query_only:
            conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        conn.close()
        raise LedgerBackendError(f"cannot open the SQLite ledger: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


def create_file(path: Path) -> bool:
    """Create an empty ledger file with mode 0600 (parents 0700); False when it already existed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise LedgerBackendError(f"cannot create the SQLite ledger's directory: {exc.strerror}") from exc
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return False
    except OSError as exc:
        raise LedgerBackendError(f"cannot create the SQLite ledger: {exc.strerror}") from exc
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return True


def statements(script: str) -> Iterator[str]:
    """Split a migration script into complete statements (trigger bodies keep their inner semicolons)."""
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \t\r\n;"):
                yield buffer
            buffer = ""


def _has_migrations_table(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'")
    return bool(row.fetchone()[0])


def applied_migrations(conn: sqlite3.Connection) -> list[migrations.Applied]:
    """The rows of schema_migrations (none before the first migration)."""
    if not _has_migrations_table(conn):
        return []
    rows = conn.execute("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
    return [migrations.Applied(*row) for row in rows]


def read_schema_version(conn: sqlite3.Connection) -> int:
    """The highest applied migration of an open database (0 without schema_migrations)."""
    applied = applied_migrations(conn)
    return max((a.version for a in applied), default=0)


def migrate_connection(conn: sqlite3.Connection, clock: Clock) -> tuple[int, list[migrations.Migration]]:
    """Apply the missing migrations, each in its own BEGIN EXCLUSIVE transaction; returns (from_version, applied)."""
    from_version: int | None = None
    done: list[migrations.Migration] = []
    while True:
        try:
            conn.execute("BEGIN EXCLUSIVE")
            conn.execute(_BOOTSTRAP)
            applied = applied_migrations(conn)
            if from_version is None:
                from_version = max((a.version for a in applied), default=0)
            todo = migrations.pending("sqlite", applied)
            if not todo:
                conn.execute("COMMIT")
                return from_version, done
            step = todo[0]
            for statement in statements(step.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum, applied_at, applied_by)"
                " VALUES (?, ?, ?, ?, NULL)",
                (step.version, step.name, step.checksum, format_ts(clock())),
            )
            conn.execute("COMMIT")
            done.append(step)
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise LedgerBackendError(f"SQLite ledger migration failed: {exc}") from exc
            raise


@functools.cache
def migrated_catalog(version: int) -> frozenset[catalog.SchemaObject]:
    """The schema the first `version` shipped migrations create, built in memory by the same statements."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute(_BOOTSTRAP)
        for step in migrations.shipped("sqlite")[:version]:
            for statement in statements(step.sql):
                conn.execute(statement)
        return catalog.as_set(conn.execute(CATALOG_SQL))
    finally:
        conn.close()


@dataclasses.dataclass(eq=False)
class _Pending:
    """One write waiting for a group commit, and what became of it."""

    full_sync: bool
    work: WriteWork[WriteOutcome]
    done: bool = False
    result: WriteOutcome | None = None
    error: BaseException | None = None


def _run_pending(conn: sqlite3.Connection, pending: _Pending, *, savepoint: bool) -> None:
    """Run one write of a group; a refused write is rolled back to its savepoint and keeps its error."""
    if savepoint:
        conn.execute("SAVEPOINT ledger_write")
    try:
        pending.result = pending.work(conn)
    except Exception as exc:
        if not savepoint:
            raise
        conn.execute("ROLLBACK TO ledger_write")
        conn.execute("RELEASE ledger_write")
        pending.result = None
        pending.error = _unavailable(exc) if isinstance(exc, sqlite3.Error) else exc
        return
    if savepoint:
        conn.execute("RELEASE ledger_write")


class SqliteStore(SqlStore):
    """A SQLite ledger file; writes serialize on a process lock and BEGIN IMMEDIATE across processes."""

    def __init__(
        self,
        path: Path,
        *,
        writer: sqlite3.Connection | None,
        redactor: LedgerRedactor,
        clock: Clock,
        settings: LedgerSettings,
        redaction_version: int,
        hasher: Hasher = chain.hash_values,
    ) -> None:
        super().__init__(
            dialect=DIALECT,
            redactor=redactor,
            clock=clock,
            settings=settings,
            redaction_version=redaction_version,
            hasher=hasher,
        )
        self.path = path
        self._writer = writer
        self._lock = threading.Lock()
        self._queue_lock = threading.Lock()
        self._queue: list[_Pending] = []
        self._synchronous = ""

    def _run_write(
        self,
        conversation_ids: Sequence[str],
        full_sync: bool,
        work: WriteWork[WriteOutcome],
        guess: Guess | None,
    ) -> WriteOutcome:
        # Group commit (docs/decisions.md, "Ledger storage and group commit"): a write joins the queue, and whoever
        # next holds the writer lock commits every queued write in one transaction, so callers that arrive while a
        # commit is syncing share the next one. Each write still returns only after the commit that holds it.
        pending = _Pending(full_sync, work)
        with self._queue_lock:
            self._queue.append(pending)
        with self._lock:
            if not pending.done:
                with self._queue_lock:
                    group, self._queue = self._queue, []
                self._commit_group(group)
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None
        return pending.result

    def _commit_group(self, group: list[_Pending]) -> None:
        """One transaction for the group, each write in a savepoint of its own so that a refused one undoes only
        itself; the results stand only once COMMIT returned."""
        conn = self._writer
        try:
            if conn is None:
                raise LedgerBackendError("the SQLite ledger was opened read-only")
            synchronous = "FULL" if any(p.full_sync for p in group) else "NORMAL"
            try:
                if synchronous != self._synchronous:
                    conn.execute(f"PRAGMA synchronous = {synchronous}")
                    self._synchronous = synchronous
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _unavailable(exc) from exc
            try:
                for pending in group:
                    _run_pending(conn, pending, savepoint=len(group) > 1)
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise _unavailable(exc) from exc
                raise
        except BaseException as exc:
            # Nothing of the group was committed: every write that had not failed on its own fails with this.
            failure = exc if isinstance(exc, Exception) else LedgerBackendError("the ledger write was interrupted")
            for pending in group:
                if pending.error is None:
                    pending.result, pending.error = None, failure
            if failure is not exc:
                raise
        finally:
            for pending in group:
                pending.done = True

    @contextmanager
    def snapshot(self) -> Iterator[SqlSnapshot]:
        """A read transaction on a fresh query_only connection."""
        conn = connect(self.path, busy_timeout_ms=self._settings.busy_timeout_ms, query_only=True)
        try:
            conn.execute("BEGIN")

            def fetch(sql: str, params: Sequence[Any]) -> list[Any]:
                try:
                    return conn.execute(sql, params).fetchall()
                except sqlite3.Error as exc:
                    raise _unavailable(exc) from exc

            def stream(sql: str, params: Sequence[Any]) -> Iterator[Any]:
                try:
                    yield from conn.execute(sql, params)
                except sqlite3.Error as exc:
                    raise _unavailable(exc) from exc

            yield SqlSnapshot(DIALECT, fetch, stream)
        finally:
            conn.close()

    def schema_version(self) -> int:
        """The highest applied migration."""
        conn = connect(self.path, busy_timeout_ms=self._settings.busy_timeout_ms, query_only=True)
        try:
            return read_schema_version(conn)
        except sqlite3.Error as exc:
            raise _unavailable(exc) from exc
        finally:
            conn.close()

    def expected_catalog(self) -> frozenset[catalog.SchemaObject]:
        """The schema the shipped migrations create (open refuses a ledger at another version)."""
        return migrated_catalog(migrations.target_version("sqlite"))

    def close(self) -> None:
        """Close the writer connection."""
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None


class MissingSqliteStore(SqlStore):
    """A ledger file that does not exist yet, opened for reading: reads are empty, writes refused, nothing created."""

    def __init__(self, path: Path, *, redactor: LedgerRedactor, clock: Clock, settings: LedgerSettings) -> None:
        super().__init__(
            dialect=DIALECT,
            redactor=redactor,
            clock=clock,
            settings=settings,
            redaction_version=redact.RULESET_VERSION,
        )
        self.path = path

    def _run_write(
        self,
        conversation_ids: Sequence[str],
        full_sync: bool,
        work: WriteWork[WriteOutcome],
        guess: Guess | None,
    ) -> WriteOutcome:
        raise LedgerBackendError("the SQLite ledger does not exist and was opened read-only")

    def snapshot(self) -> Any:
        """An empty snapshot."""
        return empty_snapshot()

    def schema_version(self) -> int:
        """No schema."""
        return 0

    def expected_catalog(self) -> frozenset[catalog.SchemaObject]:
        """No schema yet, and none expected."""
        return frozenset()

    def close(self) -> None:
        """Nothing to release."""


def open_sqlite_store(
    path: Path,
    *,
    redactor: LedgerRedactor,
    clock: Clock,
    settings: LedgerSettings,
    redaction_version: int,
    create: bool = True,
    hasher: Hasher = chain.hash_values,
) -> SqliteStore | MissingSqliteStore:
    """Open (and with `create`, create with mode 0600 and migrate) a SQLite ledger file."""
    check_library()
    if not create:
        if not path.exists():
            return MissingSqliteStore(path, redactor=redactor, clock=clock, settings=settings)
        conn = connect(path, busy_timeout_ms=settings.busy_timeout_ms, query_only=True)
        try:
            version = read_schema_version(conn)
        except sqlite3.Error as exc:
            raise _unavailable(exc) from exc
        finally:
            conn.close()
        if version == 0:
            return MissingSqliteStore(path, redactor=redactor, clock=clock, settings=settings)
        if version != migrations.target_version("sqlite"):
            raise migrations.schema_mismatch(version, migrations.target_version("sqlite"))
        return SqliteStore(
            path,
            writer=None,
            redactor=redactor,
            clock=clock,
            settings=settings,
            redaction_version=redaction_version,
            hasher=hasher,
        )
    create_file(path)
    writer = connect(path, busy_timeout_ms=settings.busy_timeout_ms, query_only=False)
    try:
        migrate_connection(writer, clock)
    except BaseException:
        writer.close()
        raise
    return SqliteStore(
        path,
        writer=writer,
        redactor=redactor,
        clock=clock,
        settings=settings,
        redaction_version=redaction_version,
        hasher=hasher,
    )
