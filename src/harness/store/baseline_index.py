"""The baseline by entity (docs/investigate.md §6.3, §9.3; docs/decisions.md, "Cold start"): what check_baseline
needs of one entity, grouped once per baseline instead of parsed per process.

`EntityIndex` groups a parsed baseline in memory. `BaselineIndex` keeps the same groups for the store's newest
baseline in a SQLite file beside the read index (`store.index.baseline.sqlite3`), keyed by the sha256 of the stored
baseline line: a cold call reads one entity's row, not the whole record (which reaches 137 MB at a million
events). It is derived like the read index, may be deleted at any time, and is rebuilt for whichever baseline is
asked for; every read checks the digest inside its transaction, so a stale file is never answered from.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harness.store.baseline_model import Baseline

if TYPE_CHECKING:
    from harness.store.backend import EventStore

log = logging.getLogger("harness.store")

SCHEMA = "1"
BUSY_TIMEOUT_S = 5.0
# Rows per executemany batch while building (bounds the memory of one batch, not the answer).
_BATCH = 10_000


@dataclass(frozen=True)
class Entry:
    """Everything of one baseline that names one entity (matched as `str.lower()`, docs/investigate.md §0)."""

    profiles: tuple[Mapping[str, Any], ...] = ()
    actor: bool = False
    frequency: tuple[tuple[str, int], ...] = ()
    roles: frozenset[str] = field(default_factory=frozenset)
    relationship_keys: frozenset[str] = field(default_factory=frozenset)


NO_ENTRY = Entry()


class EntitySource(Protocol):
    """A baseline read entity by entity."""

    def entry(self, lowered: str) -> Entry:
        """The entries naming the lower-cased entity (NO_ENTRY when none does)."""
        ...

    def relationships(self, keys: Iterable[str]) -> dict[str, Mapping[str, Any]]:
        """The `relationships` values of these keys (each one a key an entry named)."""
        ...


def _split_relationship(key: str, actors: set[str]) -> list[tuple[str, str]]:
    """The lower-cased (actor, target) readings of an `actor:target` key.

    Either side may hold colons (an ARN, a `principal://` URI), so the key is split after each known actor that
    starts it; a key no known actor starts (a hand-written baseline file) is split at its first colon.
    """
    lowered = key.lower()
    splits = [
        (lowered[:at], lowered[at + 1 :])
        for at, char in enumerate(lowered)
        if char == ":" and lowered[:at] in actors
    ]
    if splits:
        return splits
    actor, _, target = lowered.partition(":")
    return [(actor, target)]


class EntityIndex:
    """A parsed baseline's entries grouped by lower-cased entity: a call costs its matches, not the baseline's size."""

    def __init__(self, found: Baseline) -> None:
        self.baseline = found
        self.profiles: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for actor, profile in found.known_users.items():
            self.profiles[actor.lower()].append(profile)
        self.actors = {actor.lower() for actor in found.known_actors}
        self.frequency: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for key, count in found.frequency_tables.items():
            parts = key.split(":", 2)
            # Everything after the second colon is the actor, so actors holding colons (ARNs) still count;
            # `time:HH:actor` and keys of fewer than three parts never do.
            if len(parts) == 3 and parts[0].lower() != "time":
                self.frequency[parts[2].lower()].append((parts[1], count))
        self.roles: dict[str, set[str]] = defaultdict(set)
        for actor, entries in found.actor_roles.items():
            self.roles[actor.lower()].update(entries)
        self.related: dict[str, set[str]] = defaultdict(set)
        for key in found.relationships:
            for actor, target in _split_relationship(key, self.actors):
                self.related[actor].add(key)
                if target:
                    self.related[target].add(key)

    def entities(self) -> set[str]:
        """Every lower-cased entity some entry names."""
        return {*self.profiles, *self.actors, *self.frequency, *self.roles, *self.related}

    def entry(self, lowered: str) -> Entry:
        return Entry(
            profiles=tuple(self.profiles.get(lowered, ())),
            actor=lowered in self.actors,
            frequency=tuple(self.frequency.get(lowered, ())),
            roles=frozenset(self.roles.get(lowered, ())),
            relationship_keys=frozenset(self.related.get(lowered, ())),
        )

    def relationships(self, keys: Iterable[str]) -> dict[str, Mapping[str, Any]]:
        stored = self.baseline.relationships
        return {key: stored[key] for key in keys}


def sidecar_path(index_path: Path) -> Path:
    """Beside the read index, derived like it: `store.index.sqlite3` has `store.index.baseline.sqlite3`."""
    return index_path.with_name(f"{index_path.with_suffix('').name}.baseline.sqlite3")


_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # doc: the entity's Entry as JSON; relationships are referred to by rel.id, numbered in key order.
    "CREATE TABLE entity (name TEXT PRIMARY KEY, doc TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE rel (id INTEGER PRIMARY KEY, key TEXT NOT NULL, doc TEXT NOT NULL)",
)


class StoredEntries:
    """One read of the sidecar, inside one transaction whose digest was checked; `close` ends it."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._ids: dict[str, int] = {}

    def entry(self, lowered: str) -> Entry:
        try:
            lowered.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate equals no stored name (stored text is clean UTF-8) and cannot be bound.
            return NO_ENTRY
        row = self._conn.execute("SELECT doc FROM entity WHERE name = ?", (lowered,)).fetchone()
        if row is None:
            return NO_ENTRY
        doc = json.loads(row[0])
        keys = doc["k"]
        self._ids.update(zip((key for key, _ in keys), (number for _, number in keys), strict=True))
        return Entry(
            profiles=tuple(doc["p"]),
            actor=doc["a"],
            frequency=tuple((kind, count) for kind, count in doc["f"]),
            roles=frozenset(doc["r"]),
            relationship_keys=frozenset(key for key, _ in keys),
        )

    def relationships(self, keys: Iterable[str]) -> dict[str, Mapping[str, Any]]:
        ids = [self._ids[key] for key in keys]
        out: dict[str, Mapping[str, Any]] = {}
        # Bound the number of SQL variables of one statement.
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self._conn.execute(
                f"SELECT key, doc FROM rel WHERE id IN ({', '.join('?' * len(chunk))})", chunk
            ).fetchall()
            out.update((key, json.loads(doc)) for key, doc in rows)
        return out

    def close(self) -> None:
        """End the read (the connection stays open for the thread's next call)."""
        end_read(self._conn)


def end_read(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass


def _entry_doc(index: EntityIndex, lowered: str, ids: Mapping[str, int]) -> str:
    entry = index.entry(lowered)
    return json.dumps(
        {
            "p": list(entry.profiles),
            "a": entry.actor,
            "f": [list(pair) for pair in entry.frequency],
            "r": sorted(entry.roles),
            "k": sorted([key, ids[key]] for key in entry.relationship_keys),
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


class BaselineIndex:
    """The sidecar file of one store's read index (see the module docstring)."""

    def __init__(self, index_path: Path) -> None:
        self.path = sidecar_path(index_path)
        # One read connection per thread, kept between calls: opening one and reading its schema cost a warm call
        # more than its queries.
        self._local = threading.local()

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)

    def _forget(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.close()

    def read(self, digest: str) -> StoredEntries | None:
        """A reader of the sidecar when it holds the baseline with this digest, else None (also when unreadable).

        A connection that finds another digest is closed, so that a file written anew since is opened afresh."""
        conn = getattr(self._local, "conn", None)
        try:
            if conn is None:
                if not self.path.exists():
                    return None
                conn = self._local.conn = self._connect()
            conn.execute("BEGIN")
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.Error:
            if conn is not None:
                end_read(conn)
            self._forget()
            return None
        if meta.get("schema") != SCHEMA or meta.get("digest") != digest:
            end_read(conn)
            self._forget()
            return None
        return StoredEntries(conn)

    def write(self, digest: str, index: EntityIndex) -> bool:
        """Store `index` as the baseline with this digest, replacing any other; False when it could not be written
        (a busy or unwritable file: the caller answers from memory, and a later call tries again). A file that is
        not a database (or not one of ours) is deleted and written anew, as the read index is."""
        for attempt in (1, 2):
            try:
                self._write(digest, index)
                return True
            except sqlite3.OperationalError as exc:
                problem: Exception = exc
                break
            except sqlite3.DatabaseError as exc:
                problem = exc
                if attempt == 1:
                    self._delete()
            except OSError as exc:
                problem = exc
                break
        log.warning("baseline index %s: not written (%s); answering from the parsed baseline", self.path, problem)
        return False

    def _delete(self) -> None:
        for name in (self.path.name, f"{self.path.name}-wal", f"{self.path.name}-shm"):
            self.path.with_name(name).unlink(missing_ok=True)

    def _write(self, digest: str, index: EntityIndex) -> None:
        with closing(self._connect()) as conn:
            # WAL: readers of the previous baseline keep reading while a new one is written.
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("BEGIN IMMEDIATE")
            try:
                tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if "meta" in tables:
                    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
                    if meta.get("schema") == SCHEMA and meta.get("digest") == digest:
                        conn.execute("COMMIT")
                        return
                for table in tables:
                    conn.execute(f"DROP TABLE {table}")
                for statement in _SCHEMA:
                    conn.execute(statement)
                self._fill(conn, index)
                conn.executemany("INSERT INTO meta VALUES (?, ?)", [("schema", SCHEMA), ("digest", digest)])
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    @staticmethod
    def _fill(conn: sqlite3.Connection, index: EntityIndex) -> None:
        relationships = index.baseline.relationships
        ids = {key: number for number, key in enumerate(sorted(relationships))}
        _insert(conn, "INSERT INTO rel VALUES (?, ?, ?)", (
            (number, key, json.dumps(relationships[key], ensure_ascii=False, separators=(",", ":")))
            for key, number in ids.items()
        ))  # fmt: skip
        _insert(conn, "INSERT INTO entity VALUES (?, ?)",
                ((name, _entry_doc(index, name, ids)) for name in sorted(index.entities())))  # fmt: skip


def _insert(conn: sqlite3.Connection, sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
    batch: list[tuple[Any, ...]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= _BATCH:
            conn.executemany(sql, batch)
            batch.clear()
    conn.executemany(sql, batch)


def index_baseline(store: EventStore, digest: str, index: EntityIndex) -> None:
    """Write the store's baseline index for the baseline with this digest (a store with no local read index, a
    PostgreSQL store or an index held in memory, has nowhere to keep one: its calls answer from the parsed
    baseline)."""
    path = store.local_index_path()
    if path is not None:
        BaselineIndex(path).write(digest, index)
