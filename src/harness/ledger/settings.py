"""The `[ledger]` settings of harness.toml (docs/ledger.md §13): defaults, ranges and validation, in one model."""

from __future__ import annotations

import re
import urllib.parse
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

# libpq's key=value form (`host=db dbname=x`): a first word, optional spaces, then `=`.
_CONNINFO = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=")
CONNINFO_REFUSED = (
    "a key=value connection string is not accepted (it would be taken as a file name); "
    "write it as postgresql://user@host/dbname"
)


def is_conninfo(target: str) -> bool:
    """True when a ledger target is written in libpq's key=value form; it is refused, never opened as a path."""
    return _CONNINFO.match(target) is not None


def is_postgres_target(target: str) -> bool:
    """True when a ledger target is a PostgreSQL DSN (URI form) rather than a SQLite path."""
    return target.startswith(("postgresql://", "postgres://"))


def dsn_has_password(dsn: str) -> bool:
    """True when a PostgreSQL URI carries a password, in its userinfo or as a `password` query parameter."""
    if not is_postgres_target(dsn):
        return False
    parts = urllib.parse.urlsplit(dsn)
    query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    return parts.password is not None or "password" in query


def _check_url(url: str) -> str:
    if is_conninfo(url):
        raise ValueError(CONNINFO_REFUSED)
    if dsn_has_password(url):
        raise ValueError("must not hold a password; put the DSN in HARNESS_LEDGER_URL")
    return url


def _bounded(default: int, low: int, high: int, comment: str) -> int:
    # Every limit is bounded, so no timeout can be switched off; the range shows in `harness init`'s comment.
    return Field(default, ge=low, le=high, description=f"{comment} ({low}..{high})")  # type: ignore[no-any-return]


class LedgerSettings(BaseModel):
    """The `[ledger]` keys with their defaults; construction validates types and ranges (harness.validation
    words the errors as `[ledger] key: problem`)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    url: Annotated[str, AfterValidator(_check_url)] = Field(
        "", description="SQLite path or postgresql:// DSN without a password; empty = <workspace>/ledger.sqlite3"
    )
    sidecars: bool = Field(True, description="store full results over the 2 KiB preview cap in the ledger, beside their end row")
    sidecar_max_bytes: int = _bounded(1_048_576, 4096, 64 * 1024 * 1024, "cap of one stored full result")
    end_sync: Literal["full", "normal"] = Field("full", description='SQLite durability of end rows: "full" or "normal"')
    busy_timeout_ms: int = _bounded(5000, 1, 600_000, "SQLite busy timeout")
    pool_max: int = _bounded(4, 1, 64, "PostgreSQL pool size")
    connect_timeout_s: int = _bounded(5, 1, 300, "connection timeout")
    statement_timeout_ms: int = _bounded(5000, 1, 3_600_000, "PostgreSQL statement_timeout")
    lock_timeout_ms: int = _bounded(5000, 1, 3_600_000, "PostgreSQL lock_timeout")
