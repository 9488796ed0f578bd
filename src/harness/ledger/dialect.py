"""How each SQL backend spells tables, parameters and values, and the row columns both share."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from harness.ledger import chain
from harness.ledger.model import LedgerRow

ROW_COLUMNS = (*chain.FIELD_NAMES, "row_hash")
COLUMNS_SQL = ", ".join(ROW_COLUMNS)


def as_is(value: Any) -> Any:
    """A Dialect conversion for a value the driver already gives (or takes) as the row holds it."""
    return value


class Cursor(Protocol):
    """The DB-API subset both drivers share."""

    rowcount: int

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, seq: Sequence[Sequence[Any]], /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """A connection that hands out cursors (sqlite3 and psycopg both do)."""

    def cursor(self) -> Any: ...


@dataclasses.dataclass(frozen=True)
class Dialect:
    """How one backend spells tables, parameters and column values."""

    name: str
    prefix: str
    param: str
    meta_cast: str
    # The SQL of the start row's meta.caller.principal (`s` is the start row's alias).
    principal_sql: str
    # With the writer lock held, the probes are authoritative, so a key conflict means a writer bypassed the lock.
    # SQLite (one writer at a time) skips such rows and compares the row count; PostgreSQL lets the unique
    # constraint raise inside the transaction, which lets the insert and the COMMIT share one round trip.
    skip_conflicts: bool
    id_to_db: Callable[[uuid.UUID], Any]
    ts_to_db: Callable[[datetime.datetime], Any]
    bool_to_db: Callable[[bool], Any]
    # The driver's values of the columns it does not hand back as LedgerRow holds them (a NULL is never converted).
    id_from_db: Callable[[Any], uuid.UUID]
    ts_from_db: Callable[[Any], datetime.datetime]
    bool_from_db: Callable[[Any], bool]
    meta_from_db: Callable[[Any], str]
    hash_from_db: Callable[[Any], bytes]
    # One query listing the ledger's schema objects as (kind, name, definition) rows (catalog.py).
    catalog_sql: str
    # `ledger tail`'s global order (docs/decisions.md, "Ledger tail and signed heads"): the SQL of a row's order
    # key as text, the same key compared with a parameter given as text, and the condition a row must meet
    # before it can be shown (no row may later become visible with a smaller key).
    tail_key_sql: str
    tail_param_sql: str
    tail_ready_sql: str

    def sql(self, template: str) -> str:
        """Expand `{ti}`, `{co}`, `{tb}`, `{rs}`, `{oc}`, `{meta}` and turn `?` into this driver's parameter marker."""
        return _expand(self.prefix, self.param, self.meta_cast, template)

    def row_from_db(self, r: Sequence[Any]) -> LedgerRow:
        """The LedgerRow of a row of ROW_COLUMNS as the driver returns it (the one row reader of both backends)."""
        ts = self.ts_from_db
        started, ended, truncated, meta = r[8], r[9], r[18], r[21]
        return LedgerRow(
            self.id_from_db(r[0]),
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            ts(r[7]),
            None if started is None else ts(started),
            None if ended is None else ts(ended),
            r[10],
            r[11],
            r[12],
            r[13],
            r[14],
            r[15],
            r[16],
            r[17],
            None if truncated is None else self.bool_from_db(truncated),
            r[19],
            r[20],
            None if meta is None else self.meta_from_db(meta),
            r[22],
            r[23],
            self.hash_from_db(r[24]),
            self.hash_from_db(r[25]),
        )

    def row_params(self, row: LedgerRow) -> tuple[Any, ...]:
        """The INSERT parameters of a row, in ROW_COLUMNS order."""
        ts = self.ts_to_db
        at = ts(row.ts)
        # A row's ts is usually its started_at or ended_at itself (docs/ledger.md §4 defaults): convert it once.
        started = row.started_at
        ended = row.ended_at
        return (
            self.id_to_db(row.id),
            row.conversation_id,
            row.request_id,
            row.tool_call_id,
            row.tool_name,
            row.event,
            row.seq,
            at,
            None if started is None else at if started is row.ts else ts(started),
            None if ended is None else at if ended is row.ts else ts(ended),
            row.duration_ms,
            row.arguments,
            row.args_bytes,
            row.status,
            row.error,
            row.result_preview,
            row.preview_bytes,
            row.result_bytes,
            None if row.result_truncated is None else self.bool_to_db(row.result_truncated),
            row.result_sidecar_path,
            row.exit_code,
            row.meta,
            row.redaction_version,
            row.chain_seq,
            row.prev_hash,
            row.row_hash,
        )


@functools.lru_cache(maxsize=512)
def _expand(prefix: str, param: str, meta_cast: str, template: str) -> str:
    # Every write expands the same few templates; memoized, they cost a dictionary lookup.
    text = template.format(
        ti=prefix + "tool_invocations",
        co=prefix + "conversations",
        tb=prefix + "tombstones",
        rs=prefix + "result_sidecars",
        oc=prefix + "open_calls",
        meta="?" + meta_cast,
    )
    return text if param == "?" else text.replace("?", param)


ROW_BY_KEY = (
    "SELECT "
    + COLUMNS_SQL
    + " FROM {ti} WHERE conversation_id = ? AND request_id = ? AND tool_call_id = ? AND event = ?"
)
