"""Bulk loads into the read index (docs/investigate.md §4): a large batch is inserted with its table's order
indexes dropped and rebuilt afterwards, inside the caller's transaction.

Growing each of a table's order B-trees one row at a time touches pages all over every one of them; building an
index once from the finished table is a sort and a sequential write, several times faster when the batch is as
large as what is indexed already (docs/decisions.md, "Ingest speed"). The unique id index stays in place, so a
duplicate id is still reported at the row that repeats it. Which indexes exist is read from the schema's DDL,
so the load stays right whatever order indexes the schema declares.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from harness.store.index_schema import schema_statements

# A batch this small (in rows, or in segment bytes where the catch-up has not counted rows yet) costs less to
# insert through the indexes than to rebuild them.
BULK_MIN_ROWS = 5_000
BULK_MIN_BYTES = 1 << 20
# The page cache of a bulk write: SQLite's sorter keeps this much of an index being built in memory before it
# spills sorted runs to temporary files, so it bounds the memory of the rebuild (docs/decisions.md, "Ingest speed").
BULK_CACHE_KIB = 65_536
_CREATE_INDEX = re.compile(r"CREATE INDEX (\w+) ON (\w+) ")


def order_indexes(table: str) -> list[tuple[str, str]]:
    """(name, CREATE statement) of every non-unique index the schema declares on `table`."""
    found = []
    for statement in schema_statements():
        match = _CREATE_INDEX.match(statement)
        if match is not None and match[2] == table:
            found.append((match[1], statement))
    return found


def worth_rebuilding(existing: int, added: int, *, in_bytes: bool = False) -> bool:
    """Whether rebuilding the order indexes over `existing + added` rows (or segment bytes) beats inserting
    `added` through them: the rebuild costs about the whole table, the inserts grow with `added` times the indexes."""
    return added >= (BULK_MIN_BYTES if in_bytes else BULK_MIN_ROWS) and added >= existing


@contextmanager
def rebuilt_indexes(conn: sqlite3.Connection, table: str, enabled: bool) -> Iterator[None]:
    """Inside a write transaction: drop `table`'s order indexes (when `enabled`), and create them again after
    the body. A failure leaves them dropped only inside the transaction, which the caller rolls back."""
    if not enabled:
        yield
        return
    indexes = order_indexes(table)
    previous = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
    try:
        for name, _ in indexes:
            conn.execute(f"DROP INDEX IF EXISTS {name}")
        yield
        for _, statement in indexes:
            conn.execute(statement)
    finally:
        conn.execute(f"PRAGMA cache_size = {int(previous)}")
