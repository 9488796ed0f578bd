"""Ingestion (docs/investigate.md §5): parse input files, validate every record, then append them as one commit."""

from __future__ import annotations

import gzip
import os
import stat
import sys
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, TextIO

from harness.adapters import ADAPTERS, AUTO, HARNESS, AdapterError, choose
from harness.adapters.table import array_or_record
from harness.errors import InvalidInput
from harness.store.append import StoredConflict
from harness.store.baseline import MAX_BASELINE_BYTES, parse_baseline
from harness.store.models import RecordError
from harness.store.spool import Spool
from harness.store.store import Store
from harness.store.streams import StreamSpec, encode_record, record_key, stream_spec
from harness.text.canonjson import StrictJSONError, dumps, loads_strict
from harness.text.casefold import normalize_key
from harness.text.sanitize import echo, sanitize_field

MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
PROGRESS_EVERY = 50_000
PROGRESS_MIN_BYTES = 8 * 1024 * 1024
_JSON_WS = b" \t\r\n"
_GZIP_MAGIC = b"\x1f\x8b"
_UNREADABLE_GZIP = (EOFError, OSError, zlib.error)


def _gzip_magic(handle: BinaryIO) -> bool:
    """Whether the input starts with the gzip magic number, read without consuming it."""
    peek = getattr(handle, "peek", None)
    if peek is not None:
        return bytes(peek(2)[:2]) == _GZIP_MAGIC
    if handle.seekable():
        start = handle.tell()
        head = handle.read(2)
        handle.seek(start)
        return head == _GZIP_MAGIC
    return False


class _Input:
    """One input file (or stdin), counting the bytes read so far for the progress rule."""

    def __init__(self, path: str, stdin: BinaryIO, stdin_name: str = "<stdin>") -> None:
        self.name = stdin_name if path == "-" else sanitize_field(path)
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
        self._raw = self._handle
        if _gzip_magic(self._raw):
            self._handle = gzip.GzipFile(fileobj=self._raw, mode="rb")  # type: ignore[assignment]

    @property
    def large(self) -> bool:
        return (self.size if self.size is not None else self.consumed) > PROGRESS_MIN_BYTES

    def _read(self, read: Callable[[int], bytes], size: int) -> bytes:
        """`read(size)`, a read method of the handle; damaged gzip data is an InvalidInput naming the input (a plain
        file's errors are left as they are)."""
        try:
            return read(size)
        except _UNREADABLE_GZIP as exc:
            if self._handle is self._raw:
                raise
            raise InvalidInput(f"{self.name}: unreadable gzip data: {exc}") from exc

    def readline(self, line_number: int) -> bytes:
        line = self._read(self._handle.readline, MAX_DOCUMENT_BYTES + 1)
        if len(line) > MAX_DOCUMENT_BYTES:
            raise InvalidInput(f"{self.name}:{line_number}: line longer than {MAX_DOCUMENT_BYTES} bytes")
        self.consumed += len(line)
        return line

    def first_line(self) -> tuple[bytes, int, bytes] | None:
        """Everything read up to the first non-blank line, its line number and the line; None for blank input."""
        head, number = b"", 0
        while True:
            line = self.readline(number + 1)
            if not line:
                return None
            number += 1
            head += line
            if line.strip(_JSON_WS):
                return head, number, line

    def rest(self, head: bytes, cap: int) -> bytes:
        data = head + self._read(self._handle.read, cap + 1 - len(head))
        if len(data) > cap:
            raise InvalidInput(f"{self.name}: input larger than {cap} bytes")
        self.consumed += len(data) - len(head)
        return data

    def close(self) -> None:
        if self._handle is not self._raw:
            self._handle.close()  # a GzipFile leaves the file it reads open
        if self._owned:
            self._raw.close()


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
        opened = source.first_line()
        if opened is None:
            return
        head, number, line = opened
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


@dataclass(frozen=True)
class _Item:
    """One record read: `value` to encode as a harness record, or `problem` when it cannot be (then `original`
    is what goes to the rejects file)."""

    position: int
    value: Any
    problem: str = ""
    original: Any = None


def _harness_records(document: Any) -> Iterator[tuple[str, Any]]:
    """The harness shape under `--format auto`: an array, `{"events": [...]}`, or one record per line."""
    if isinstance(document, dict) and len(document) == 1:
        (key, value), = document.items()
        if normalize_key(key) == "events" and isinstance(value, list):
            document = value
    yield from array_or_record(document)


class _VendorRecords:
    """The records of one input in a vendor format (or `auto`): each JSON Lines line, or the whole file when it
    is one document, is a document the format unwraps into records. A position packs the physical line (0 for
    a whole-file document) with the item index + 1 inside the document (0 for none)."""

    def __init__(self, source: _Input, format_name: str, stderr: TextIO) -> None:
        self.source = source
        self.format_name = format_name
        self.stderr = stderr
        self.vendor = format_name != HARNESS

    def loc(self, position: int) -> str:
        line, item = position >> 32, position & 0xFFFFFFFF
        return f"{self.source.name}{f':{line}' if line else ''}{f'[{item - 1}]' if item else ''}"

    def _choose(self, document: Any, where: str) -> None:
        if self.format_name != AUTO:
            return
        try:
            self.format_name = choose(document)
        except AdapterError as exc:
            raise InvalidInput(f"{where}: {exc}") from exc
        self.vendor = self.format_name != HARNESS
        print(f"ingest: {self.source.name}: format {self.format_name} (auto)", file=self.stderr, flush=True)

    def _items(self, line: int, document: Any) -> Iterator[_Item]:
        unwrap = _harness_records if not self.vendor else ADAPTERS[self.format_name].records
        convert = ADAPTERS[self.format_name].events if self.vendor else None
        try:
            for suffix, record in unwrap(document):
                position = (line << 32) | (int(suffix[1:-1]) + 1 if suffix else 0)
                if convert is None:
                    yield _Item(position, record, original=record)
                    continue
                try:
                    events = convert(record)
                except AdapterError as exc:
                    yield _Item(position, None, str(exc), record)
                    continue
                for event in events:
                    yield _Item(position, event, original=record)
        except AdapterError as exc:
            yield _Item(line << 32, None, str(exc), document)

    def __iter__(self) -> Iterator[_Item]:
        source = self.source
        opened = source.first_line()
        if opened is None:
            return
        head, number, line = opened
        try:
            first = loads_strict(line) if line.lstrip(_JSON_WS)[:1] == b"{" else None
        except StrictJSONError:
            first = None
        if first is None:
            document = _parse(source.rest(head, MAX_DOCUMENT_BYTES), source.name)
            self._choose(document, source.name)
            yield from self._items(0, document)
            return
        self._choose(first, f"{source.name}:{number}")
        yield from self._items(number, first)
        while True:
            line = source.readline(number + 1)
            if not line:
                return
            number += 1
            if not line.strip(_JSON_WS):
                continue
            try:
                document = _parse(line, f"{source.name}:{number}")
            except InvalidInput as exc:
                text = line.decode("utf-8", "replace").rstrip("\r\n")
                yield _Item(number << 32, None, exc.message[len(f"{source.name}:{number}: ") :], text)
                continue
            yield from self._items(number, document)


def _harness_items(records: _Records) -> Iterator[_Item]:
    for position, obj in records:
        yield _Item(position, obj, original=obj)


def _raw_of(line: bytes) -> Any:
    payload = loads_strict(line).get("payload")
    return payload.get("raw") if isinstance(payload, dict) else None


def same_vendor_record(stored: bytes, line: bytes) -> bool:
    """Two mapped events of the same vendor record: identical, or holding the same vendor record under
    `payload.raw` (a mapping change between the two ingests changes the rest; README, "Loading your data")."""
    if stored == line:
        return True
    raw = _raw_of(line)
    return raw is not None and raw == _raw_of(stored)


class _Rejects:
    """`--rejects FILE`: each refused record as one JSON line `{"location", "reason", "record"}`."""

    def __init__(self, out: TextIO | None) -> None:
        self.out = out
        self.count = 0

    def refuse(self, location: str, reason: str, record: Any) -> None:
        if self.out is None:
            raise InvalidInput(f"{location}: {reason}")
        self.out.write(dumps({"location": location, "reason": reason, "record": record}) + "\n")
        self.count += 1


def ingest_files(
    store: Store,
    stream: str,
    paths: Sequence[str],
    *,
    stderr: TextIO,
    stdin: BinaryIO | None = None,
    format_name: str = HARNESS,
    rejects: TextIO | None = None,
    stdin_name: str = "<stdin>",
) -> dict[str, Any]:
    """`harness ingest <stream> [--format NAME] [--rejects FILE] FILE...`: every file is read and validated
    before one commit; returns the summary. Without `rejects` the first refused record aborts the run.
    `stdin_name` is how messages name `-` (a pull names its page)."""
    spec = stream_spec(stream)
    source_stdin = stdin if stdin is not None else sys.stdin.buffer
    if format_name != HARNESS and (spec.name != "events" or format_name not in (AUTO, *ADAPTERS)):
        raise InvalidInput(f"--format: unknown format {echo(format_name)} for {spec.name}")
    if not spec.keyed:
        return _ingest_documents(store, spec, paths, source_stdin)
    spool = Spool()
    try:
        return _ingest_records(
            store, spec, paths, source_stdin, spool, stderr, format_name, _Rejects(rejects), stdin_name
        )
    finally:
        spool.close()


def _ingest_records(
    store: Store,
    spec: StreamSpec,
    paths: Sequence[str],
    stdin: BinaryIO,
    spool: Spool,
    stderr: TextIO,
    format_name: str,
    rejects: _Rejects,
    stdin_name: str,
) -> dict[str, Any]:
    inputs: list[_Records | _VendorRecords] = []
    origin = array("I")  # per spooled record: index of its input
    positions = array("q")  # per spooled record: its position in that input
    read = skipped = 0
    vendor_seen = False

    def loc(index: int) -> str:
        return inputs[origin[index]].loc(positions[index])

    with store.snapshot() as view:
        checked_at = view.commit
        for path in paths:
            source = _Input(path, stdin, stdin_name)
            records: _Records | _VendorRecords
            if format_name == HARNESS:
                records = _Records(source, spec.name)
                items: Iterator[_Item] = _harness_items(records)
            else:
                records = _VendorRecords(source, format_name, stderr)
                items = iter(records)
            inputs.append(records)
            try:
                for count, item in enumerate(items, start=1):
                    read += 1
                    if count % PROGRESS_EVERY == 0 and source.large:
                        print(f"ingest: {source.name}: {count} records read", file=stderr, flush=True)
                    if item.problem:
                        rejects.refuse(records.loc(item.position), item.problem, item.original)
                        continue
                    try:
                        record, line = encode_record(spec, item.value)
                    except RecordError as exc:
                        rejects.refuse(records.loc(item.position), str(exc), item.original)
                        continue
                    vendor = isinstance(records, _VendorRecords) and records.vendor
                    vendor_seen = vendor_seen or vendor
                    same: Callable[[bytes, bytes], bool] = same_vendor_record if vendor else bytes.__eq__
                    key = record_key(spec, record)
                    prior = spool.position(key)
                    stored = view.stored_line(spec.name, key) if prior is None else spool[prior][1]
                    if stored is not None and same(stored, line):
                        skipped += 1
                        continue
                    if stored is not None:
                        found = "already stored" if prior is None else f"appears earlier in this input ({loc(prior)})"
                        problem = f"id {echo(record['id'])} {found} with different content"
                        rejects.refuse(records.loc(item.position), problem, item.original)
                        continue
                    spool.append(key, line)
                    origin.append(len(inputs) - 1)
                    positions.append(item.position)
            finally:
                source.close()
    try:
        result = store.append_encoded(
            spec.name, spool, checked_at=checked_at, same=same_vendor_record if vendor_seen else None
        )
    except StoredConflict as exc:
        raise InvalidInput(f"{loc(exc.position)}: {exc.message}") from exc
    return _summary(
        spec, len(paths), read, result.added, skipped + result.skipped_duplicates, result.commit, rejects.count
    )


def _ingest_documents(store: Store, spec: StreamSpec, paths: Sequence[str], stdin: BinaryIO) -> dict[str, Any]:
    """Unkeyed streams (baseline): each file is one document, validated as a `--baseline` file (docs/investigate.md §6.3)."""
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
    return _summary(spec, len(paths), len(batch), result.added, result.skipped_duplicates, result.commit, 0)


def _summary(
    spec: StreamSpec, files: int, records: int, added: int, skipped: int, commit: str, rejected: int
) -> dict[str, Any]:
    """records = added + skipped_duplicates + rejected."""
    return {
        "added": added,
        "commit": commit,
        "files": files,
        "records": records,
        "rejected": rejected,
        "skipped_duplicates": skipped,
        "stream": spec.name,
    }
