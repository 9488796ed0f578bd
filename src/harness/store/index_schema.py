"""The read index's tables: one per stream, the equality-filter columns and order indexes of the keyed streams,
the DDL, and the row a record becomes. Shared by the catch-up (which writes rows) and the queries (which name
the indexes)."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Sequence
from typing import Any

from harness.store.eventfields import event_ip, event_target
from harness.store.query import time_key
from harness.store.streams import STREAMS
from harness.text.casefold import ci_key

# 2: ts is the result-order key and the order indexes end in (ts, seq); 3: events gain target and ip columns;
# 4: the resolutions stream's table
SCHEMA_VERSION = "4"
_RECORD_COLUMNS = ("actor", "type", "source")
# The equality filters of each keyed stream: the record's own fields, and for events the payload's target and ip
# (store/eventfields.py).
FILTER_COLUMNS = {"events": (*_RECORD_COLUMNS, "target", "ip"), "findings": _RECORD_COLUMNS}


def _order_keys(columns: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """Every combination of the equality filters has its own index of those columns then ts; SQLite ends every
    index key with the rowid (seq), so each is ordered by (columns, ts, seq), the result order: a page is read from
    the start of its range, never sorted, and the count reads the same index without touching a row."""
    return tuple(combo for size in range(len(columns) + 1) for combo in itertools.combinations(columns, size))


def table_name(stream: str) -> str:
    """The table holding one stream's rows."""
    return f"r_{stream}"


def order_index(table: str, columns: Sequence[str]) -> str:
    """The order index of `table` over exactly these equality columns (then ts, seq)."""
    return f"{table}_by_{'_'.join(columns) or 'time'}"


def schema_statements() -> list[str]:
    """The DDL of an empty index at SCHEMA_VERSION."""
    statements = [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE segments (stream TEXT NOT NULL, number INTEGER NOT NULL, blob TEXT NOT NULL,"
        " length INTEGER NOT NULL, lines INTEGER NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY (stream, number))",
    ]
    for spec in STREAMS.values():
        table = table_name(spec.name)
        if not spec.keyed:
            statements.append(f"CREATE TABLE {table} (seq INTEGER PRIMARY KEY, sha256 TEXT NOT NULL, line BLOB NOT NULL)")
            continue
        # lid and the filter columns hold casefold.ci_key forms: ci-equal is never SQLite's lower() or LIKE.
        # ts is the record's time_key (UNDATED for a record without a timestamp).
        filters = FILTER_COLUMNS[spec.name]
        statements += [
            f"CREATE TABLE {table} (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, lid TEXT NOT NULL,"
            f" {', '.join(f'{name} TEXT NOT NULL' for name in filters)}, ts INTEGER NOT NULL, line BLOB NOT NULL)",
            f"CREATE UNIQUE INDEX {table}_lid ON {table} (lid)",
            *(
                f"CREATE INDEX {order_index(table, columns)} ON {table} ({', '.join((*columns, 'ts'))})"
                for columns in _order_keys(filters)
            ),
        ]
    return statements


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The meta table: schema version, indexed commit and repository."""
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def _filter_value(record: dict[str, Any], name: str) -> str:
    if name == "target":
        return event_target(record["payload"])
    if name == "ip":
        return event_ip(record["payload"])
    return str(record[name])


def keyed_row(stream: str, seq: int, record: dict[str, Any], line: bytes) -> tuple[Any, ...]:
    """The row of one record of a keyed stream, in the column order of its table."""
    return (
        seq,
        record["id"],
        ci_key(record["id"]),
        *(ci_key(_filter_value(record, name)) for name in FILTER_COLUMNS[stream]),
        time_key(record["timestamp"]),
        line,
    )


def insert_keyed_sql(stream: str) -> str:
    """The INSERT statement for `keyed_row` rows of a keyed stream."""
    return f"INSERT INTO {table_name(stream)} VALUES ({', '.join('?' * (len(FILTER_COLUMNS[stream]) + 5))})"
