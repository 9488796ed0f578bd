"""Ingestion (investigate.md §5): parse input files, validate every record, then append them as one commit."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO, TextIO, overload

from harness.errors import InvalidInput
from harness.store.append import StoredConflict
from harness.store.baseline import MAX_BASELINE_BYTES, parse_baseline
from harness.store.models import RecordError
from harness.store.store import Store
from harness.store.streams import StreamSpec, encode_record, record_key, stream_spec
from harness.text.canonjson import StrictJSONError, loads_strict
from harness.text.casefold import normalize_key
from harness.text.sanitize import echo, sanitize_field

MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
PROGRESS_EVERY = 50_000
PROGRESS_MIN_BYTES = 8 * 1024 * 1024
_JSON_WS = b" \t\r\n"
_SPOOL_CHUNK = 8 * 1024 * 1024


class _Input:
    """One input file (or stdin), counting the bytes read so far for the progress rule."""

    def __init__(self, path: str, stdin: BinaryIO) -> None:
        self.name = "<stdin>" if path == "-" else sanitize_field(path)
        self.size: int | None = None
        self.consumed = 0
        if path == "-":
            self._handle, self._owned = stdin, False
        else:
            try:
                self._handle, self._owned = open(path, "rb"), True  # noqa: SIM115 - closed by close()
                info = os.fstat(self._handle.fileno())
            except OSError as exc:
                raise InvalidInput(f"{self.name}: cannot read: {exc.strerror or exc}") from exc
            if stat.S_ISREG(info.st_mode):
                self.size = info.st_size

    @property
    def large(self) -> bool:
        return (self.size if self.size is not None else self.consumed) > PROGRESS_MIN_BYTES

    def readline(self, line_number: int) -> bytes:
        line = self._handle.readline(MAX_DOCUMENT_BYTES + 1)
        if len(line) > MAX_DOCUMENT_BYTES:
            raise InvalidInput(f"{self.name}:{line_number}: line longer than {MAX_DOCUMENT_BYTES} bytes")
        self.consumed += len(line)
        return line

    def rest(self, head: bytes, cap: int) -> bytes:
        data = head + self._handle.read(cap + 1 - len(head))
        if len(data) > cap:
            raise InvalidInput(f"{self.name}: input larger than {cap} bytes")
        self.consumed += len(data) - len(head)
        return data

    def close(self) -> None:
        if self._owned:
            self._handle.close()


def _parse(data: bytes, where: str) -> Any:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{where}: unrecognized input format (invalid UTF-8)") from exc
    try:
        return loads_strict(data)
    except StrictJSONError as exc:
        raise InvalidInput(f"{where}: {exc}") from exc


def _wrapped(value: Any, stream: str) -> list[Any] | None:
    """The records of `{"<stream>": [...]}` (the only key normalizing to the stream name), else None."""
    if isinstance(value, dict) and len(value) == 1:
        (key, records), = value.items()
        if normalize_key(key) == stream and isinstance(records, list):
            return records
    return None


class _Records:
    """The records of one input with their positions; `indexed` (set once parsing starts) says whether
    positions are 0-based array indexes (`<file>[<i>]`) or 1-based physical lines (`<file>:<n>`)."""

    def __init__(self, source: _Input, stream: str) -> None:
        self.source = source
        self.stream = stream
        self.indexed = False

    def loc(self, position: int) -> str:
        return f"{self.source.name}[{position}]" if self.indexed else f"{self.source.name}:{position}"

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        source = self.source
        head, number, line = b"", 0, b""
        while True:
            line = source.readline(number + 1)
            if not line:
                return
            number += 1
            head += line
            if line.strip(_JSON_WS):
                break
        start = line.lstrip(_JSON_WS)[:1]
        if start == b"[":
            yield from self._items(_parse(source.rest(head, MAX_DOCUMENT_BYTES), source.name))
            return
        if start != b"{":
            raise InvalidInput(f"{source.name}: unrecognized input format")
        try:
            first = loads_strict(line)
        except StrictJSONError:
            data = source.rest(head, MAX_DOCUMENT_BYTES)
            if sum(1 for part in data.split(b"\n") if part.strip(_JSON_WS)) == 1:
                _parse(line, f"{source.name}:{number}")  # one line: it is JSON Lines, and this line is bad
            document = _parse(data, source.name)
            records = _wrapped(document, self.stream)
            if records is None:
                raise InvalidInput(
                    f"{source.name}: a JSON document spanning several lines must be an array of records or "
                    f'{{"{self.stream}": [...]}}; JSON Lines need one complete record per line'
                ) from None
            yield from self._items(records)
            return
        wrapped = _wrapped(first, self.stream)
        if wrapped is not None:
            # Exactly one object holding the stream's array is the wrapped form; more lines make it JSON Lines.
            pending = self._next_record(number)
            if pending is None:
                yield from self._items(wrapped)
                return
            yield number, first
            number, value = pending
        else:
            value = first
        yield number, value
        while (pending := self._next_record(number)) is not None:
            number, value = pending
            yield number, value

    def _items(self, value: Any) -> Iterator[tuple[int, Any]]:
        self.indexed = True
        if not isinstance(value, list):
            raise InvalidInput(f"{self.source.name}: unrecognized input format")
        yield from enumerate(value)

    def _next_record(self, number: int) -> tuple[int, Any] | None:
        """The next non-blank JSON Lines record after physical line `number`."""
        while True:
            line = self.source.readline(number + 1)
            if not line:
                return None
            number += 1
            if line.strip(_JSON_WS):
                return number, _parse(line, f"{self.source.name}:{number}")


class _Spool(Sequence[tuple[str, bytes]]):
    """Encoded records on a temporary file, so memory does not grow with the input's size."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self._fd = self._file.fileno()
        self._keys: list[str] = []
        self._offsets = array("q", [0])

    def append(self, key: str, line: bytes) -> None:
        os.pwrite(self._fd, line, self._offsets[-1])
        self._offsets.append(self._offsets[-1] + len(line))
        self._keys.append(key)

    def __len__(self) -> int:
        return len(self._keys)

    @overload
    def __getitem__(self, index: int) -> tuple[str, bytes]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[str, bytes]]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        start, end = self._offsets[index], self._offsets[index + 1]
        return self._keys[index], os.pread(self._fd, end - start, start)

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        chunk_start, chunk = 0, b""
        for index, key in enumerate(self._keys):
            start, end = self._offsets[index], self._offsets[index + 1]
            if end > chunk_start + len(chunk):
                chunk_start, chunk = start, os.pread(self._fd, max(_SPOOL_CHUNK, end - start), start)
            yield key, chunk[start - chunk_start : end - chunk_start]

    def close(self) -> None:
        self._file.close()


def ingest_files(
    store: Store, stream: str, paths: Sequence[str], *, stderr: TextIO, stdin: BinaryIO | None = None
) -> dict[str, Any]:
    """`harness ingest <stream> FILE...`: all files are validated before one commit; returns the summary."""
    spec = stream_spec(stream)
    source_stdin = stdin if stdin is not None else sys.stdin.buffer
    if not spec.keyed:
        return _ingest_documents(store, spec, paths, source_stdin)
    spool = _Spool()
    try:
        return _ingest_records(store, spec, paths, source_stdin, spool, stderr)
    finally:
        spool.close()


def _ingest_records(
    store: Store, spec: StreamSpec, paths: Sequence[str], stdin: BinaryIO, spool: _Spool, stderr: TextIO
) -> dict[str, Any]:
    inputs: list[_Records] = []
    origin = array("I")  # per spooled record: index of its input
    positions = array("q")  # per spooled record: its position in that input
    first_seen: dict[str, int] = {}
    read = skipped = 0

    def loc(index: int) -> str:
        return inputs[origin[index]].loc(positions[index])

    with store.snapshot() as view:
        checked_at = view.commit
        for path in paths:
            source = _Input(path, stdin)
            records = _Records(source, spec.name)
            inputs.append(records)
            try:
                for count, (position, obj) in enumerate(records, start=1):
                    read += 1
                    if count % PROGRESS_EVERY == 0 and source.large:
                        print(f"ingest: {source.name}: {count} records read", file=stderr, flush=True)
                    try:
                        record, line = encode_record(spec, obj)
                    except RecordError as exc:
                        raise InvalidInput(f"{records.loc(position)}: {exc}") from exc
                    key = record_key(spec, record)
                    prior = first_seen.get(key)
                    stored = view.stored_line(spec.name, key) if prior is None else spool[prior][1]
                    if stored == line:
                        skipped += 1
                        continue
                    if stored is not None:
                        where = "already stored" if prior is None else f"appears earlier in this input ({loc(prior)})"
                        raise InvalidInput(
                            f"{records.loc(position)}: id {echo(record['id'])} {where} with different content"
                        )
                    first_seen[key] = len(spool)
                    spool.append(key, line)
                    origin.append(len(inputs) - 1)
                    positions.append(position)
            finally:
                source.close()
    try:
        result = store.append_encoded(spec.name, spool, checked_at=checked_at)
    except StoredConflict as exc:
        raise InvalidInput(f"{loc(exc.position)}: {exc.message}") from exc
    return _summary(spec, len(paths), read, result.added, skipped + result.skipped_duplicates, result.commit)


def _ingest_documents(store: Store, spec: StreamSpec, paths: Sequence[str], stdin: BinaryIO) -> dict[str, Any]:
    """Unkeyed streams (baseline): each file is one document, validated as a `--baseline` file (§6.3)."""
    batch: list[tuple[str, bytes]] = []
    for path in paths:
        source = _Input(path, stdin)
        try:
            data = source.rest(b"", MAX_BASELINE_BYTES)
        finally:
            source.close()
        try:
            _, line = encode_record(spec, parse_baseline(data))
        except RecordError as exc:
            raise InvalidInput(f"{source.name}: {exc}") from exc
        batch.append(("", line))
    result = store.append_encoded(spec.name, batch)
    return _summary(spec, len(paths), len(batch), result.added, result.skipped_duplicates, result.commit)


def _summary(spec: StreamSpec, files: int, records: int, added: int, skipped: int, commit: str) -> dict[str, Any]:
    return {
        "added": added,
        "commit": commit,
        "files": files,
        "records": records,
        "skipped_duplicates": skipped,
        "stream": spec.name,
    }
