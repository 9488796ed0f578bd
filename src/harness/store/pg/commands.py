"""`harness store migrate` (README "Moving the store to PostgreSQL"): the schema and roles of a PostgreSQL store."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness.config import Settings
from harness.errors import InvalidInput
from harness.store.backend import pg_connect_kwargs
from harness.store.pg import schema

NO_URL = "--store: store migrate needs a PostgreSQL store: pass --store postgresql://... or set HARNESS_STORE_URL"


def migrate_store(
    settings: Settings,
    redact: Callable[[str], str],
    *,
    admin_dsn: str | None = None,
    owner_role: str = schema.DEFAULT_OWNER_ROLE,
    app_role: str = schema.DEFAULT_APP_ROLE,
    grant_app_to: Sequence[str] = (),
    dry_run: bool = False,
) -> dict[str, Any]:
    """Apply the missing store migrations to the configured PostgreSQL store; the JSON report."""
    if not settings.store_url:
        raise InvalidInput(NO_URL)
    try:
        report = schema.migrate(
            settings.store_url,
            connect=pg_connect_kwargs(settings),
            admin_dsn=admin_dsn,
            owner_role=owner_role,
            app_role=app_role,
            grant_app_to=grant_app_to,
            dry_run=dry_run,
            redact=redact,
        )
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc
    return {
        "applied": [f"{m.version:04d}_{m.name}" for m in report.applied],
        "backend": "postgresql",
        "dry_run": report.dry_run,
        "from_version": report.from_version,
        "roles": {"app": report.app, "created": report.created, "owner": report.owner},
        "to_version": report.to_version,
    }
