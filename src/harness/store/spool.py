"""The records of one ingest run before its commit (docs/investigate.md §5): encoded lines on a temporary file and
the duplicate keys seen so far in a temporary SQLite table, so memory stays flat whatever the input's size."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

_READ_CHUNK = 8 * 1024 * 1024
# The page cache of the key table: enough that lookups of recent keys stay in memory, small beside the
# ingest's memory bound (docs/decisions.md, "Ingest speed").
_KEYS_CACHE_KIB = 32_768
# Key and line are stored as `key \n line`: a key is a clean id (no line breaks, docs/investigate.md §2)
# lower-cased, and a canonical line has none either, so the first newline splits them.
_SEP = b"\n"


class Spool(Sequence[tuple[str, bytes]]):
    """(duplicate key, line) per record in append order, and which position first held a key."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self._fd = self._file.fileno()
        self._offsets = array("q", [0])
        # "" opens a private on-disk database that SQLite deletes when it is closed.
        self._keys = sqlite3.connect("", isolation_level=None)
        self._keys.execute(f"PRAGMA cache_size = -{_KEYS_CACHE_KIB}")
        self._keys.execute("PRAGMA journal_mode = OFF")
        self._keys.execute("PRAGMA synchronous = OFF")
        self._keys.execute("CREATE TABLE seen (key TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID")
        self._keys.execute("BEGIN")

    def position(self, key: str) -> int | None:
        """The position of the record appended under `key`, if any."""
        found = self._keys.execute("SELECT position FROM seen WHERE key = ?", (key,)).fetchone()
        return None if found is None else int(found[0])

    def append(self, key: str, line: bytes) -> None:
        """Add a record whose key is not spooled yet."""
        end = self._offsets[-1]
        data = key.encode("utf-8") + _SEP + line
        os.pwrite(self._fd, data, end)
        self._keys.execute("INSERT INTO seen VALUES (?, ?)", (key, len(self._offsets) - 1))
        self._offsets.append(end + len(data))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, index: int) -> tuple[str, bytes]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[str, bytes]]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        index %= len(self)
        start, end = self._offsets[index], self._offsets[index + 1]
        return _split(os.pread(self._fd, end - start, start))

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        chunk_start, chunk = 0, b""
        for index in range(len(self)):
            start, end = self._offsets[index], self._offsets[index + 1]
            if end > chunk_start + len(chunk):
                chunk_start, chunk = start, os.pread(self._fd, max(_READ_CHUNK, end - start), start)
            yield _split(chunk[start - chunk_start : end - chunk_start])

    def close(self) -> None:
        self._keys.close()
        self._file.close()


def _split(data: bytes) -> tuple[str, bytes]:
    key, _, line = data.partition(_SEP)
    return key.decode("utf-8"), line
