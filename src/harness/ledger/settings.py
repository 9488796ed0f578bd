"""The `[ledger]` settings of harness.toml (docs/ledger.md §13): defaults, ranges and validation."""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

# Inclusive ranges; every limit is bounded (DESIGN rule 7), so no timeout can be switched off.
RANGES: dict[str, tuple[int, int]] = {
    "sidecar_max_bytes": (4096, 64 * 1024 * 1024),
    "busy_timeout_ms": (1, 600_000),
    "pool_max": (1, 64),
    "connect_timeout_s": (1, 300),
    "statement_timeout_ms": (1, 3_600_000),
    "lock_timeout_ms": (1, 3_600_000),
}
END_SYNC_VALUES = ("full", "normal")


class LedgerSettingsError(ValueError):
    """An invalid `[ledger]` key; `key` names it as `[ledger] <key>`."""

    def __init__(self, key: str, problem: str) -> None:
        self.key = f"[ledger] {key}"
        super().__init__(f"{self.key}: {problem}")


@dataclasses.dataclass(frozen=True)
class LedgerSettings:
    """The `[ledger]` keys with their defaults; construction validates types and ranges."""

    url: str = ""
    sidecars: bool = True
    sidecar_max_bytes: int = 1_048_576
    end_sync: str = "full"
    busy_timeout_ms: int = 5000
    pool_max: int = 4
    connect_timeout_s: int = 5
    statement_timeout_ms: int = 5000
    lock_timeout_ms: int = 5000

    def __post_init__(self) -> None:
        if not isinstance(self.url, str):
            raise LedgerSettingsError("url", "expected a string")
        if not isinstance(self.sidecars, bool):
            raise LedgerSettingsError("sidecars", "expected true or false")
        if self.end_sync not in END_SYNC_VALUES:
            raise LedgerSettingsError("end_sync", 'expected "full" or "normal"')
        for key, (low, high) in RANGES.items():
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise LedgerSettingsError(key, f"expected an integer in {low}..{high}")
            if not low <= value <= high:
                raise LedgerSettingsError(key, f"expected an integer in {low}..{high}, got {value}")

    @classmethod
    def from_table(cls, table: Mapping[str, Any]) -> LedgerSettings:
        """Settings from a parsed `[ledger]` TOML table: unknown keys and a password inside `url` are refused."""
        known = {f.name for f in dataclasses.fields(cls)}
        for key in table:
            if key not in known:
                raise LedgerSettingsError(str(key), "unknown key")
        url = table.get("url", "")
        if isinstance(url, str) and is_conninfo(url):
            raise LedgerSettingsError("url", CONNINFO_REFUSED)
        if isinstance(url, str) and dsn_has_password(url):
            raise LedgerSettingsError("url", "must not hold a password; put the DSN in HARNESS_LEDGER_URL")
        return cls(**dict(table))


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
