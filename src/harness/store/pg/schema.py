"""The PostgreSQL store's schema (README "Moving the store to PostgreSQL"): shipped migrations, the version check
every connection makes, and `harness store migrate` with owner and app roles, as for the ledger (docs/ledger.md §7.4).

The migration files and the checks on applied ones are the ledger's (harness.ledger.migrations), so is the migration
runner (harness.ledger.postgres.migrate_schema); only the schema, its tables and the grants differ.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg import sql

from harness.ledger import migrations
from harness.ledger.errors import LedgerBackendError
from harness.ledger.postgres import MigrationReport, PgSchema, _describe, applied_migrations, migrate_schema
from harness.store.git import unavailable

SCHEMA = "store"
DEFAULT_OWNER_ROLE = "harness_store_owner"
DEFAULT_APP_ROLE = "harness_store_app"
# pg_advisory_lock key of the migration runner: the first 8 bytes of SHA-256("triage-harness.store.migrate").
MIGRATION_LOCK_KEY = 0x5B0E8A43C1D27F69
RECORD_TABLES = ("batches", "events", "findings", "baseline", "resolutions")


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


def _grant_app(cur: psycopg.Cursor[Any], app: str) -> None:
    app_id = sql.Identifier(app)
    tables = sql.SQL(", ").join(sql.Identifier(SCHEMA, name) for name in RECORD_TABLES)
    cur.execute("REVOKE ALL ON SCHEMA store FROM PUBLIC")
    cur.execute(sql.SQL("GRANT USAGE ON SCHEMA store TO {}").format(app_id))
    cur.execute(sql.SQL("GRANT SELECT, INSERT ON {} TO {}").format(tables, app_id))
    cur.execute(sql.SQL("GRANT SELECT ON store.schema_migrations TO {}").format(app_id))


SCHEMA_PLAN = PgSchema(name=SCHEMA, shipped=shipped, lock_key=MIGRATION_LOCK_KEY, grant_app=_grant_app)


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
    try:
        return migrate_schema(
            SCHEMA_PLAN,
            dsn,
            connect,
            admin_dsn=admin_dsn,
            owner_role=owner_role,
            app_role=app_role,
            grant_app_to=grant_app_to,
            dry_run=dry_run,
        )
    except psycopg.Error as exc:
        raise unavailable(f"migration failed: {_describe(exc, redact)}") from exc
    except LedgerBackendError as exc:
        raise unavailable(str(exc)) from exc
