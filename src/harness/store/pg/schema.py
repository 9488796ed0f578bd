"""The PostgreSQL store's schema (README "Moving the store to PostgreSQL"): shipped migrations, the version check
every connection makes, and `harness store migrate` with owner and app roles, as for the ledger (docs/ledger.md §7.4).

The migration files and the checks on applied ones are the ledger's (harness.ledger.migrations), so are the role
helpers; only the schema, its tables and the grants differ.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg import sql

from harness.ledger import migrations
from harness.ledger.errors import LedgerBackendError
from harness.ledger.postgres import _check_role_name, _describe, _role_exists, applied_migrations, apply_as_owner
from harness.store.git import unavailable

SCHEMA = "store"
DEFAULT_OWNER_ROLE = "harness_store_owner"
DEFAULT_APP_ROLE = "harness_store_app"
# pg_advisory_lock key of the migration runner: the first 8 bytes of SHA-256("triage-harness.store.migrate").
MIGRATION_LOCK_KEY = 0x5B0E8A43C1D27F69
RECORD_TABLES = ("batches", "events", "findings", "baseline", "resolutions")

_BOOTSTRAP = """CREATE TABLE IF NOT EXISTS store.schema_migrations (
  version integer PRIMARY KEY CHECK (version >= 1),
  name text NOT NULL,
  checksum text NOT NULL CHECK (length(checksum) = 64),
  applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  applied_by text NOT NULL DEFAULT session_user
)"""


def shipped() -> tuple[migrations.Migration, ...]:
    """The store migrations shipped with this harness, in version order."""
    return migrations.read_folder(importlib.resources.files(__package__).joinpath("migrations"), "store")


def target_version() -> int:
    """The store schema version this harness needs."""
    return len(shipped())


def applied(cur: psycopg.Cursor[Any]) -> list[migrations.Applied]:
    """The rows of store.schema_migrations ([] before the first migration)."""
    return applied_migrations(cur, SCHEMA)


def check_schema(cur: psycopg.Cursor[Any]) -> int:
    """The applied version when it is exactly the code's; otherwise store unavailable, naming the remedy."""
    done = applied(cur)
    current = max((a.version for a in done), default=0)
    needed = target_version()
    try:
        todo = migrations.still_to_apply(shipped(), done, "store")
    except LedgerBackendError as exc:
        raise unavailable(str(exc)) from exc
    if current > needed:
        raise unavailable(f"store schema {current} is newer than this harness ({needed}); refusing")
    if todo or current != needed:
        raise unavailable(f"store schema {current}, harness needs {needed}: run harness store migrate")
    return current


@dataclasses.dataclass(frozen=True)
class MigrationReport:
    """What `harness store migrate` did (or, with dry_run, would do)."""

    from_version: int
    to_version: int
    applied: list[migrations.Migration]
    owner: str | None
    app: str | None
    created: list[str]
    dry_run: bool

    def document(self) -> dict[str, Any]:
        """The JSON the command prints."""
        return {
            "applied": [f"{m.version:04d}_{m.name}" for m in self.applied],
            "backend": "postgresql",
            "dry_run": self.dry_run,
            "from_version": self.from_version,
            "roles": {"app": self.app, "created": self.created, "owner": self.owner},
            "to_version": self.to_version,
        }


def _grant_app(cur: psycopg.Cursor[Any], app: str) -> None:
    app_id = sql.Identifier(app)
    tables = sql.SQL(", ").join(sql.Identifier(SCHEMA, name) for name in RECORD_TABLES)
    cur.execute("REVOKE ALL ON SCHEMA store FROM PUBLIC")
    cur.execute(sql.SQL("GRANT USAGE ON SCHEMA store TO {}").format(app_id))
    cur.execute(sql.SQL("GRANT SELECT, INSERT ON {} TO {}").format(tables, app_id))
    cur.execute(sql.SQL("GRANT SELECT ON store.schema_migrations TO {}").format(app_id))


def migrate(
    dsn: str,
    *,
    connect: dict[str, Any],
    admin_dsn: str | None = None,
    owner_role: str = DEFAULT_OWNER_ROLE,
    app_role: str = DEFAULT_APP_ROLE,
    grant_app_to: Sequence[str] = (),
    dry_run: bool = False,
    redact: Callable[[str], str],
) -> MigrationReport:
    """Apply the missing migrations under pg_advisory_lock; with `admin_dsn`, also create the roles, make the owner
    own the schema and grant the app role INSERT and SELECT only. `connect` is the connection keywords."""
    owner, app = _check_role_name(owner_role), _check_role_name(app_role)
    logins = [_check_role_name(name) for name in grant_app_to]
    try:
        with psycopg.connect(admin_dsn or dsn, **connect) as conn:
            cur = conn.cursor()
            cur.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
            try:
                return _migrate_locked(cur, owner, app, logins, admin=admin_dsn is not None, dry_run=dry_run)
            finally:
                if not conn.broken:
                    cur.execute("RESET ROLE")
                    cur.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
    except psycopg.Error as exc:
        raise unavailable(f"migration failed: {_describe(exc, redact)}") from exc
    except LedgerBackendError as exc:
        raise unavailable(str(exc)) from exc


def _migrate_locked(
    cur: psycopg.Cursor[Any], owner: str, app: str, logins: list[str], *, admin: bool, dry_run: bool
) -> MigrationReport:
    done = applied(cur)
    from_version = max((a.version for a in done), default=0)
    todo = migrations.still_to_apply(shipped(), done, "store")
    to_version = target_version()
    app_exists = _role_exists(cur, app)
    if admin:
        created = [name for name in (owner, app) if not _role_exists(cur, name)]
    else:
        cur.execute("SELECT current_user")
        owner = cur.fetchone()[0]
        created = []
    for login in logins:
        if not _role_exists(cur, login):
            raise LedgerBackendError(f"--grant-app-to: role {login} does not exist")
    granted = app if admin or app_exists else None
    if dry_run:
        return MigrationReport(from_version, to_version, todo, owner, granted, created, True)
    apply_as_owner(cur, SCHEMA, owner, created, todo, admin=admin, bootstrap=_BOOTSTRAP)
    if granted is not None:
        _grant_app(cur, app)
    cur.execute("RESET ROLE")
    for login in logins:
        cur.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(app), sql.Identifier(login)))
    return MigrationReport(from_version, to_version, todo, owner, granted, created, False)
