"""The store handle: a git repository of streams plus its read index (docs/investigate.md §3, docs/investigate.md §4)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.errors import InvalidInput
from harness.store.append import AppendResult, EncodedBatch, append_encoded
from harness.store.git import Git, find_git_dir, init_bare
from harness.store.index_catchup import Index
from harness.store.models import RecordError
from harness.store.query import StoreView
from harness.store.replay import ReplayView, replay
from harness.store.segments import DEFAULT_MAX_BYTES, DEFAULT_MAX_RECORDS, Limits
from harness.store.streams import encode_record, record_key, stream_spec
from harness.text.sanitize import echo


def default_index_path(store_path: Path) -> Path:
    """`<store dir name>.index.sqlite3` beside the store directory."""
    return store_path.parent / f"{store_path.name}.index.sqlite3"


class Store:
    """The git store: reads through `snapshot()`, writes through `append_batch` (one commit per batch).

    A missing store reads as empty; the first write creates it as `harness init` does.
    """

    backend = "git"

    def __init__(
        self,
        path: Path,
        *,
        index_path: Path | None = None,
        segment_max_records: int = DEFAULT_MAX_RECORDS,
        segment_max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.path = Path(path)
        self.index_path = Path(index_path) if index_path is not None else default_index_path(self.path)
        self.limits = Limits(segment_max_records, segment_max_bytes)
        self._lock = threading.Lock()
        self._git: Git | None = None
        self._index: Index | None = None

    def git(self, *, create: bool = False) -> Git | None:
        """The store's git runner; None while the store does not exist (unless `create`)."""
        with self._lock:
            if self._git is None:
                git_dir = find_git_dir(self.path)
                if git_dir is None and create:
                    git_dir = init_bare(self.path)
                if git_dir is not None:
                    self._git = Git(git_dir)
                    self._index = Index(self.index_path, self._git)
            return self._git

    def _parts(self, *, create: bool) -> tuple[Git, Index] | None:
        git = self.git(create=create)
        if git is None or self._index is None:
            return None
        return git, self._index

    @property
    def index_in_memory(self) -> bool:
        """Whether the index location was unwritable and an in-memory index serves reads."""
        return self._index is not None and self._index.in_memory

    def local_index_path(self) -> Path | None:
        """The read index file, unless the index location was unwritable and the index lives in memory."""
        return None if self.index_in_memory else self.index_path

    def refresh_statistics(self) -> list[str]:
        """Nothing to refresh: the SQLite read index plans from its indexes alone."""
        return []

    def head(self) -> str:
        """HEAD's commit, or "" for an empty or missing store."""
        git = self.git()
        return git.head_commit() if git is not None else ""

    @contextmanager
    def snapshot(self) -> Iterator[StoreView]:
        """One consistent view for a whole call: every read sees the same commit."""
        parts = self._parts(create=False)
        if parts is None:
            yield ReplayView("", {})
            return
        git, index = parts
        with index.view(git.head_commit()) as view:
            yield view

    def replay(self) -> ReplayView:
        """A full replay of HEAD, bypassing the index (the oracle)."""
        return replay(self.git())

    def last_change(self, commit: str, stream: str) -> str:
        """The newest commit reachable from `commit` that changed `stream`, or ""."""
        git = self.git()
        return git.last_change(commit, stream_spec(stream).name) if git is not None else ""

    def append_encoded(
        self,
        stream: str,
        batch: EncodedBatch,
        *,
        checked_at: str | None = None,
        same: Callable[[bytes, bytes], bool] | None = None,
    ) -> AppendResult:
        """Append records already validated and encoded (see append.append_encoded), as one commit."""
        spec = stream_spec(stream)
        if not len(batch):
            return AppendResult(0, 0, "")
        parts = self._parts(create=True)
        assert parts is not None
        git, index = parts
        return append_encoded(git, index, spec, batch, self.limits, checked_at=checked_at, same=same)

    def append_batch(self, stream: str, records: Iterable[Any]) -> AppendResult:
        """Validate every record (one failure rejects the batch), drop duplicates, and append as one commit."""
        batch, skipped = encode_batch(stream, records)
        result = self.append_encoded(stream, batch)
        return AppendResult(result.added, result.skipped_duplicates + skipped, result.commit)

    def exists(self) -> bool:
        """Whether the store's repository exists (a missing store reads as empty)."""
        return self.git() is not None

    def create(self) -> None:
        """Create the store as `harness init` does, if it is missing."""
        self.git(create=True)

    def close(self) -> None:
        """Nothing held open between calls."""


def encode_batch(stream: str, records: Iterable[Any]) -> tuple[list[tuple[str, bytes]], int]:
    """Validate and encode every record of an `append_batch` (one failure rejects the batch): the encoded batch,
    without the records repeated identically inside it, and how many were dropped as such."""
    spec = stream_spec(stream)
    batch: list[tuple[str, bytes]] = []
    first: dict[str, int] = {}
    skipped = 0
    for position, obj in enumerate(records):
        try:
            record, line = encode_record(spec, obj)
        except RecordError as exc:
            raise InvalidInput(f"record {position}: {exc}") from exc
        key = record_key(spec, record)
        if spec.keyed and key in first:
            if batch[first[key]][1] == line:
                skipped += 1
                continue
            raise InvalidInput(
                f"record {position}: id {echo(record['id'])} appears earlier in this batch with different content"
            )
        first[key] = len(batch)
        batch.append((key, line))
    return batch, skipped
