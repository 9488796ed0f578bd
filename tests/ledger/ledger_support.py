"""Shared helpers of the ledger tests (importable by name: tests/ledger is on sys.path)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
from pgsupport import PgServer
from psycopg import sql as psql

from harness.ledger.commands import migrate
from harness.ledger.settings import LedgerSettings
from harness.ledger.store import LedgerStore, open_store
from harness.text.redact import Redactor

# A known secret registered with the redactor: it must never reach a table.
KNOWN_SECRET = "opaque-ledger-test-value-6f1c2a"
T0 = datetime.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.UTC)


class FakeClock:
    """A deterministic clock: each reading is one millisecond after the previous one."""

    def __init__(self, start: datetime.datetime = T0, step: datetime.timedelta = datetime.timedelta(milliseconds=1)):
        self.now = start
        self.step = step
        self._lock = threading.Lock()

    def __call__(self) -> datetime.datetime:
        with self._lock:
            self.now += self.step
            return self.now


def open_test_store(target: str, redactor: Redactor, clock: FakeClock, **settings: object) -> LedgerStore:
    """open_store with test settings."""
    return open_store(target, redactor=redactor, clock=clock, settings=LedgerSettings(**settings), create=True)  # type: ignore[arg-type]


class SqliteAdmin:
    """Raw access to a SQLite ledger file, bypassing the store (what anyone who can write the file can do)."""

    backend = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path

    def connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None)
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def delete_conversation(self, conversation_id: str) -> None:
        with contextlib.closing(self.connect()) as conn:
            conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    def tamper(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Drop every guard trigger, run the statements, and restore the triggers exactly as they were."""
        with contextlib.closing(self.connect()) as conn:
            triggers = conn.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger'").fetchall()
            for name, _ in triggers:
                conn.execute(f'DROP TRIGGER "{name}"')
            try:
                for query, params in statements:
                    conn.execute(query.replace("ledger.", ""), params)
            finally:
                for _, statement in triggers:
                    conn.execute(statement)

    def query(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        with contextlib.closing(self.connect()) as conn:
            return conn.execute(query.replace("ledger.", ""), params).fetchall()


class PgAdmin:
    """Superuser access to a PostgreSQL ledger database, bypassing the store."""

    backend = "postgresql"

    def __init__(self, admin_dsn: str, owner_role: str) -> None:
        self.admin_dsn = admin_dsn
        self.owner_role = owner_role

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(self.admin_dsn, autocommit=True)

    def delete_conversation(self, conversation_id: str) -> None:
        with self.connect() as conn:
            conn.execute(psql.SQL("SET ROLE {}").format(psql.Identifier(self.owner_role)))
            conn.execute("DELETE FROM ledger.conversations WHERE id = %s", (conversation_id,))

    def tamper(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Disable the guard triggers as superuser, run the statements, and re-enable them (ALWAYS)."""
        with self.connect() as conn:
            triggers = conn.execute(
                "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
                " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'ledger' AND NOT t.tgisinternal"
            ).fetchall()
            for table, trigger in triggers:
                conn.execute(
                    psql.SQL("ALTER TABLE ledger.{} DISABLE TRIGGER {}").format(
                        psql.Identifier(table), psql.Identifier(trigger)
                    )
                )
            try:
                for query, params in statements:
                    conn.execute(query.replace("?", "%s"), params)
            finally:
                for table, trigger in triggers:
                    conn.execute(
                        psql.SQL("ALTER TABLE ledger.{} ENABLE ALWAYS TRIGGER {}").format(
                            psql.Identifier(table), psql.Identifier(trigger)
                        )
                    )

    def query(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.connect() as conn:
            return conn.execute(query.replace("?", "%s"), params).fetchall()


@dataclasses.dataclass(frozen=True)
class PgLedger:
    """One test's ledger database: the app login's DSN, a superuser DSN to it and the role names."""

    server: PgServer
    dbname: str
    dsn: str
    admin_dsn: str
    owner_role: str
    app_role: str
    login_role: str


@dataclasses.dataclass(frozen=True)
class PgUpgrade:
    """A new database with its own login and role names, migrated on demand: to the shipped migrations, or, with
    `migrations.shipped` patched, to an earlier release's (the upgrade tests)."""

    dbname: str
    dsn: str
    admin_dsn: str
    owner_role: str
    login_role: str
    app_role: str

    def migrate(self, redactor: Redactor) -> dict[str, Any]:
        return migrate(
            self.dsn,
            clock=FakeClock(),
            settings=LedgerSettings(),
            redactor=redactor,
            admin_dsn=self.admin_dsn,
            owner_role=self.owner_role,
            app_role=self.app_role,
            grant_app_to=[self.login_role],
        )


def new_pg_upgrade(server: PgServer, suffix: str) -> PgUpgrade:
    login = server.create_role(f"harness_ledger_login_{suffix}", login=True)
    dbname = server.create_database(f"harness_ledger_{suffix}")
    return PgUpgrade(
        dbname,
        server.dsn_for(dbname, login),
        server.dsn_for(dbname),
        server.reserve_role_name(f"harness_ledger_owner_{suffix}"),
        login,
        server.reserve_role_name(f"harness_ledger_app_{suffix}"),
    )


def concurrency_worker(target: str, worker: int, calls: int) -> int:
    """One spawned process of the concurrency test: `calls` calls (ok, error, invalid_input) into 3 shared
    conversations and 1 private one, each a start and an end; returns how many calls it recorded."""
    from harness.ledger.model import LedgerEvent, end_event
    from harness.text.redact import KnownSecrets, build_redactor

    def utc_now() -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC)

    settings = LedgerSettings(busy_timeout_ms=30_000, lock_timeout_ms=30_000, statement_timeout_ms=60_000)
    store = open_store(target, redactor=build_redactor(KnownSecrets()), clock=utc_now, settings=settings)
    try:
        for n in range(calls):
            conversation = f"shared-{n % 3}" if n % 4 else f"private-{worker}"
            start = LedgerEvent(conversation, f"w{worker}-{n}", f"call-{n}", "search_events", "start", arguments="{}")
            kind = n % 3
            if kind == 2:
                # invalid_input: refused before the handler, so the pair goes in one transaction.
                now = utc_now()
                end = LedgerEvent(
                    conversation,
                    start.request_id,
                    start.tool_call_id,
                    "search_events",
                    "end",
                    started_at=now,
                    ended_at=now,
                    duration_ms=0,
                    status="error",
                    error="invalid_input: limit: too big",
                    exit_code=2,
                )
                results = store.insert_many([dataclasses.replace(start, started_at=now), end])
                assert all(r.inserted for r in results)
                continue
            reservation = store.reserve(start)
            assert reservation.owned
            status, error = ("ok", None) if kind == 0 else ("error", "not_found: no such event")
            row = reservation.start
            ended = store.insert(end_event(row, ended_at=utc_now(), duration_ms=1, status=status, error=error))
            assert ended.inserted
    finally:
        store.close()
    return calls
