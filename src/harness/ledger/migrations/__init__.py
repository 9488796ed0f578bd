"""Shipped ledger migrations (docs/ledger.md §7.4): numbered SQL files per backend and the plan to apply them."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.resources
import re
from collections.abc import Sequence
from importlib.resources.abc import Traversable

from harness.ledger.errors import LedgerBackendError

_FILE_NAME = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")
BACKENDS = ("sqlite", "postgres")


@dataclasses.dataclass(frozen=True)
class Migration:
    """One shipped migration: its number, name, SQL text and the SHA-256 (hex) of that text."""

    version: int
    name: str
    sql: str
    checksum: str


@dataclasses.dataclass(frozen=True)
class Applied:
    """A row of schema_migrations."""

    version: int
    name: str
    checksum: str


def shipped(backend: str) -> tuple[Migration, ...]:
    """The migrations shipped for `backend` ("sqlite" or "postgres"), in version order."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown ledger backend {backend!r}")
    return read_folder(importlib.resources.files(__name__).joinpath(backend), backend)


def read_folder(folder: Traversable, what: str) -> tuple[Migration, ...]:
    """The numbered `NNNN_name.sql` files of one folder, in version order (also the store's, store/pg/schema.py)."""
    found = []
    for entry in folder.iterdir():
        match = _FILE_NAME.fullmatch(entry.name)
        if match is None:
            continue
        data = entry.read_bytes()
        found.append(Migration(int(match[1]), match[2], data.decode("utf-8"), hashlib.sha256(data).hexdigest()))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise RuntimeError(f"{what} migrations are not numbered contiguously from 0001")
    return tuple(found)


def target_version(backend: str) -> int:
    """The schema version this harness needs."""
    return len(shipped(backend))


def pending(backend: str, applied: list[Applied]) -> list[Migration]:
    """The migrations still to apply; refuses a schema ahead of the code or an applied file whose text changed."""
    return still_to_apply(shipped(backend), applied, "ledger")


def still_to_apply(shipped: Sequence[Migration], applied: list[Applied], subject: str) -> list[Migration]:
    """`pending` over any shipped list; `subject` names the schema in the refusals ("ledger", "store")."""
    by_version = {m.version: m for m in shipped}
    for row in applied:
        migration = by_version.get(row.version)
        if migration is None:
            raise LedgerBackendError(
                f"{subject} schema {max(a.version for a in applied)} is newer than this harness ({len(by_version)})"
            )
        if migration.checksum != row.checksum:
            raise LedgerBackendError(
                f"migration {row.version:04d}_{row.name} was applied from different text (checksum mismatch); refusing"
            )
    done = {row.version for row in applied}
    return [m for v, m in sorted(by_version.items()) if v not in done]


def schema_mismatch(current: int, needed: int) -> LedgerBackendError:
    """The error for a schema that is not at the version the code needs."""
    if current > needed:
        return LedgerBackendError(f"ledger schema {current} is newer than this harness ({needed}); refusing")
    return LedgerBackendError(f"ledger schema {current}, harness needs {needed}: run harness ledger migrate")
