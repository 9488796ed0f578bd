"""Appending a batch (docs/investigate.md §3.3): one commit per batch, published by compare-and-swap of the branch."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from harness.errors import InvalidInput
from harness.store.git import Git, unavailable
from harness.store.index_catchup import Index
from harness.store.reader import list_segments
from harness.store.segments import Limits, SegmentMeta, fill, segment_path
from harness.store.streams import StreamSpec
from harness.text.canonjson import loads_line
from harness.text.sanitize import echo

MAX_ATTEMPTS = 128
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()

# One entry per record: (duplicate key, canonical line without newline); see streams.record_key.
EncodedBatch = Sequence[tuple[str, bytes]]


@dataclass(frozen=True)
class AppendResult:
    """What an append did: records written, records dropped as duplicates, and the new commit ("" if none)."""

    added: int
    skipped_duplicates: int
    commit: str


class StoredConflict(InvalidInput):
    """A record whose id is already stored (ignoring case) with different content."""

    def __init__(self, position: int, record_id: str) -> None:
        super().__init__(f"id {echo(record_id)} already stored with different content")
        self.position = position
        self.record_id = record_id


def _process_lock(git_dir: str) -> threading.Lock:
    # Only reduces contention between threads of one process; the compare-and-swap gives correctness.
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(git_dir, threading.Lock())


def _keyed_survivors(
    index: Index, spec: StreamSpec, batch: EncodedBatch, old: str, same: Callable[[bytes, bytes], bool]
) -> tuple[Sequence[int], int]:
    """Positions of records not stored yet at `old` (or later); ones `same` as the stored line are skipped,
    others refused."""
    kept: list[int] = []
    skipped = 0
    with index.view(old) as view:
        for position, (key, line) in enumerate(batch):
            stored = view.stored_line(spec.name, key)
            if stored is None:
                kept.append(position)
            elif same(stored, line):
                skipped += 1
            else:
                raise StoredConflict(position, _record_id(line))
    return kept, skipped


def _record_id(line: bytes) -> str:
    return str(loads_line(line)["id"])


def _document_survivors(batch: EncodedBatch, last_data: bytes) -> tuple[Sequence[int], int]:
    """Unkeyed streams: a record equal to the one before it (the stream's last record first) is a duplicate."""
    previous = last_data[: -1].rpartition(b"\n")[2] if last_data else None
    kept: list[int] = []
    for position, (_, line) in enumerate(batch):
        if line != previous:
            kept.append(position)
        previous = line
    return kept, len(batch) - len(kept)


def _lines(batch: EncodedBatch, kept: Sequence[int]) -> Iterator[bytes]:
    if len(kept) == len(batch):
        return (line for _, line in batch)
    return (batch[position][1] for position in kept)


def append_encoded(
    git: Git,
    index: Index,
    spec: StreamSpec,
    batch: EncodedBatch,
    limits: Limits,
    *,
    checked_at: str | None = None,
    same: Callable[[bytes, bytes], bool] | None = None,
) -> AppendResult:
    """Append validated, encoded records as one commit; `checked_at` is a commit the caller already checked
    every record against for stored duplicates (the check is skipped when HEAD is still there). A record whose
    id is stored is a duplicate when `same(stored line, line)` (default: byte equality)."""
    if not len(batch):
        return AppendResult(0, 0, "")
    with _process_lock(str(git.git_dir)):
        for attempt in range(1, MAX_ATTEMPTS + 1):
            branch, old = git.head()
            segments = list_segments(git, old or "", [spec.name])[spec.name]
            last = segments[-1] if segments else None
            with git.blobs() as blobs:
                last_data = blobs.read(last.blob) if last is not None else b""
            if not spec.keyed:
                kept, skipped = _document_survivors(batch, last_data)
            elif checked_at is not None and checked_at == (old or ""):
                kept, skipped = range(len(batch)), 0
            else:
                kept, skipped = _keyed_survivors(index, spec, batch, old or "", same or bytes.__eq__)
            if not kept:
                return AppendResult(0, skipped, "")
            metas = [
                write.meta(git.run("hash-object", "-w", "--stdin", stdin=write.data).decode("ascii").strip())
                for write in fill(last, last_data, _lines(batch, kept), limits)
            ]
            new = _commit(git, spec, old, metas, len(kept))
            reason = git.compare_and_swap(branch, new, old)
            if reason is None:
                index.advance(old or "", new, spec, metas, _lines(batch, kept), len(kept))
                return AppendResult(len(kept), skipped, new)
            if git.ref_commit(branch) == old:
                raise unavailable(reason)
            time.sleep(min(0.002 * attempt, 0.05) + random.uniform(0, 0.002))
    raise unavailable(f"concurrent writers kept winning after {MAX_ATTEMPTS} attempts")


def _commit(git: Git, spec: StreamSpec, old: str | None, metas: list[SegmentMeta], count: int) -> str:
    """Build the new tree in a temporary index file inside the git dir and commit it on top of `old`."""
    temp_index = git.git_dir / f"harness-index-{uuid.uuid4().hex}"
    env = {"GIT_INDEX_FILE": str(temp_index)}
    try:
        git.run("read-tree", *([old] if old else ["--empty"]), extra_env=env)
        entries = "".join(f"100644 blob {m.blob}\t{segment_path(spec.name, m.number)}\n" for m in metas)
        git.run("update-index", "--add", "--index-info", stdin=entries.encode("ascii"), extra_env=env)
        tree = git.run("write-tree", extra_env=env).decode("ascii").strip()
    finally:
        for leftover in (temp_index, temp_index.with_name(temp_index.name + ".lock")):
            leftover.unlink(missing_ok=True)
    parents = ["-p", old] if old else []
    message = f"store: append {spec.name} (n={count})"
    return git.run("commit-tree", tree, *parents, "-m", message).decode("ascii").strip()
