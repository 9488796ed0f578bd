"""Ledger events and rows, and the boundary conversion `prepare` (docs/ledger.md §4 and §5): pure, no database."""

from __future__ import annotations

import dataclasses
import datetime
import json
import operator
import re
import uuid
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Protocol

from harness.ledger import chain, ids
from harness.ledger.errors import LedgerValueError
from harness.text import canonjson

ARGUMENTS_CAP = 8192
PREVIEW_CAP = 2048
ERROR_CAP = 2048
META_LEAF_CAP = 1024
META_CAP = 8192
META_CACHE_SIZE = 1024
META_MAX_DEPTH = 4
META_MAX_LIST = 64
META_MAX_INT = 2**53
CAP_MARKER = "...[capped]"
SIDECAR_PATH_MAX = 1024

INT64_MAX = 2**63 - 1
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

EVENTS = ("start", "end")
STATUSES = ("ok", "error")

_META_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_PATH_PART = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


class LedgerRedactor(Protocol):
    """The part of `harness.text.redact.Redactor` the ledger boundary uses."""

    def redact(self, s: str) -> str: ...

    def redact_for_ledger(self, s: str, cap_bytes: int) -> str: ...

    def process(self, s: str, cap_bytes: int) -> Any: ...

    def redact_json_leaves(self, obj: Any, leaf_cap: int) -> Any: ...


@dataclasses.dataclass(frozen=True)
class LedgerEvent:
    """The write input: raw text from the caller; the store redacts, caps, sequences and chains it."""

    conversation_id: str
    request_id: str
    tool_call_id: str
    tool_name: str
    event: str
    id: uuid.UUID | None = None
    ts: datetime.datetime | None = None
    started_at: datetime.datetime | None = None
    ended_at: datetime.datetime | None = None
    duration_ms: int | None = None
    arguments: str | None = None
    status: str | None = None
    error: str | None = None
    result_preview: str | None = None
    result_bytes: int | None = None
    result_truncated: bool = False
    result_sidecar_path: str | None = None
    exit_code: int | None = None
    meta: Mapping[str, Any] | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class PreparedRow:
    """An event after the boundary conversion: every caller-supplied column final, seq and chain still to come."""

    id: uuid.UUID
    conversation_id: str
    request_id: str
    tool_call_id: str
    tool_name: str
    event: str
    ts: datetime.datetime
    started_at: datetime.datetime | None
    ended_at: datetime.datetime | None
    duration_ms: int | None
    arguments: str | None
    args_bytes: int | None
    status: str | None
    error: str | None
    result_preview: str | None
    preview_bytes: int | None
    result_bytes: int | None
    result_truncated: bool | None
    result_sidecar_path: str | None
    exit_code: int | None
    meta: str | None
    redaction_version: int

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The idempotency key (conversation_id, request_id, tool_call_id, event)."""
        return (self.conversation_id, self.request_id, self.tool_call_id, self.event)


@dataclasses.dataclass(frozen=True, slots=True)
class LedgerRow:
    """A stored row: the 25 chained fields in chain order, then its row_hash."""

    id: uuid.UUID
    conversation_id: str
    request_id: str
    tool_call_id: str
    tool_name: str
    event: str
    seq: int
    ts: datetime.datetime
    started_at: datetime.datetime | None
    ended_at: datetime.datetime | None
    duration_ms: int | None
    arguments: str | None
    args_bytes: int | None
    status: str | None
    error: str | None
    result_preview: str | None
    preview_bytes: int | None
    result_bytes: int | None
    result_truncated: bool | None
    result_sidecar_path: str | None
    exit_code: int | None
    meta: str | None
    redaction_version: int
    chain_seq: int
    prev_hash: bytes
    row_hash: bytes

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The idempotency key (conversation_id, request_id, tool_call_id, event)."""
        return (self.conversation_id, self.request_id, self.tool_call_id, self.event)

    @property
    def meta_object(self) -> dict[str, Any] | None:
        """The meta column parsed back into an object (None when NULL)."""
        return None if self.meta is None else json.loads(self.meta)

    def chain_values(self) -> tuple[Any, ...]:
        """The 25 hashed field values in chain order."""
        return _CHAIN_GETTER(self)

    def to_json(self) -> dict[str, Any]:
        """The full-row object of `ledger show` and `export`: NULL as null, bytes as hex, 27-character timestamps."""
        out: dict[str, Any] = {}
        for field in _ROW_FIELDS:
            value = getattr(self, field)
            if value is None or isinstance(value, (str, int)):
                out[field] = value
            elif isinstance(value, datetime.datetime):
                out[field] = format_ts(value)
            elif isinstance(value, bytes):
                out[field] = value.hex()
            else:
                out[field] = str(value)
        out["meta"] = self.meta_object
        return out


_ROW_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(LedgerRow))
_CHAIN_GETTER: Callable[[LedgerRow], tuple[Any, ...]] = operator.attrgetter(*chain.FIELD_NAMES)


def format_ts(value: datetime.datetime) -> str:
    """The stored 27-character UTC form `YYYY-MM-DDTHH:MM:SS.ffffffZ` (sorts in time order)."""
    u = value if value.tzinfo is datetime.UTC else value.astimezone(datetime.UTC)
    # isoformat pads the year to four digits and, with this timespec, always writes six fraction digits.
    return u.isoformat(timespec="microseconds")[:-6] + "Z"


def parse_ts(text: str) -> datetime.datetime:
    """Inverse of `format_ts`."""
    return datetime.datetime.fromisoformat(text)


def build_row(
    prepared: PreparedRow,
    *,
    seq: int,
    chain_seq: int,
    prev_hash: bytes,
    hasher: Callable[[tuple[Any, ...]], bytes] = chain.hash_values,
) -> LedgerRow:
    """Complete a prepared row with its sequence numbers and chain link, and hash it."""
    values = (
        prepared.id,
        prepared.conversation_id,
        prepared.request_id,
        prepared.tool_call_id,
        prepared.tool_name,
        prepared.event,
        seq,
        prepared.ts,
        prepared.started_at,
        prepared.ended_at,
        prepared.duration_ms,
        prepared.arguments,
        prepared.args_bytes,
        prepared.status,
        prepared.error,
        prepared.result_preview,
        prepared.preview_bytes,
        prepared.result_bytes,
        prepared.result_truncated,
        prepared.result_sidecar_path,
        prepared.exit_code,
        prepared.meta,
        prepared.redaction_version,
        chain_seq,
        prev_hash,
    )
    return LedgerRow(*values, hasher(values))


def _refuse(message: str) -> LedgerValueError:
    return LedgerValueError(message)


def _aware_utc(name: str, value: object) -> datetime.datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime.datetime):
        raise _refuse(f"{name}: expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise _refuse(f"{name}: naive datetimes are refused; give a timezone-aware one")
    return value.astimezone(datetime.UTC)


def _count(name: str, value: object, *, minimum: int = 0) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(f"{name}: expected an integer, got {type(value).__name__}")
    if value < minimum:
        raise _refuse(f"{name}: must be >= {minimum}, got {value}")
    return min(value, INT64_MAX)


def _exit_code(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(f"exit_code: expected an integer, got {type(value).__name__}")
    return max(INT32_MIN, min(value, INT32_MAX))


def _text(name: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _refuse(f"{name}: expected a string, got {type(value).__name__}")
    return value or None


def _check_meta_tree(node: Any, depth: int, path: str, key_is_clean: Callable[[str], bool]) -> None:
    if isinstance(node, dict):
        if depth >= META_MAX_DEPTH:
            raise _refuse(f"meta{path}: nesting deeper than {META_MAX_DEPTH} levels")
        for key, value in node.items():
            if not isinstance(key, str) or _META_KEY.fullmatch(key) is None:
                raise _refuse(f"meta{path}: key {key!r} does not match {_META_KEY.pattern}")
            if not key_is_clean(key):
                raise _refuse(f"meta{path}: a key would be changed by redaction")
            _check_meta_tree(value, depth + 1, f"{path}.{key}", key_is_clean)
    elif isinstance(node, list):
        if depth >= META_MAX_DEPTH:
            raise _refuse(f"meta{path}: nesting deeper than {META_MAX_DEPTH} levels")
        if len(node) > META_MAX_LIST:
            raise _refuse(f"meta{path}: a list holds at most {META_MAX_LIST} items, got {len(node)}")
        for index, value in enumerate(node):
            _check_meta_tree(value, depth + 1, f"{path}[{index}]", key_is_clean)
    elif isinstance(node, bool) or node is None or isinstance(node, str):
        return
    elif isinstance(node, int):
        if abs(node) > META_MAX_INT:
            raise _refuse(f"meta{path}: integers are limited to |n| <= 2^53")
    elif isinstance(node, float):
        raise _refuse(f"meta{path}: floats are refused (their text does not survive jsonb)")
    else:
        raise _refuse(f"meta{path}: unsupported value type {type(node).__name__}")


def prepare_meta(
    meta: Mapping[str, Any] | None,
    redactor: LedgerRedactor,
    key_is_clean: Callable[[str], bool] | None = None,
    cache: MutableMapping[str, str] | None = None,
) -> str | None:
    """Validate meta (docs/ledger.md §5), redact and cap every string leaf, and return its canonical JSON (None when empty).

    `key_is_clean(key)` says whether redaction leaves a key unchanged; a caller may pass a memoized one.
    `cache` maps the canonical JSON of an accepted meta to its stored text: a store's rows repeat a few metas,
    and the result is a pure function of the input for one redactor.
    """
    if meta is None:
        return None
    if not isinstance(meta, Mapping):
        raise _refuse(f"meta: expected an object, got {type(meta).__name__}")
    tree = dict(meta)
    if not tree:
        return None
    key = None
    if cache is not None:
        try:
            key = canonjson.dumps(tree)
        except (TypeError, ValueError):
            key = None  # not JSON: the checks below refuse it
        if key is not None and key in cache:
            return cache[key]
    _check_meta_tree(tree, 0, "", key_is_clean or (lambda key: redactor.redact(key) == key))
    text = canonjson.dumps(redactor.redact_json_leaves(tree, META_LEAF_CAP))
    size = len(text.encode("utf-8"))
    if size > META_CAP:
        raise _refuse(f"meta: {size} bytes of canonical JSON, more than the {META_CAP}-byte cap")
    if cache is not None and key is not None and len(cache) < META_CACHE_SIZE:
        cache[key] = text
    return text


def _sidecar_path(value: object, redact: Callable[[str], str]) -> str | None:
    path = _text("result_sidecar_path", value)
    if path is None:
        return None
    parts = path.split("/")
    if (
        len(path.encode("utf-8")) > SIDECAR_PATH_MAX
        or any(_PATH_PART.fullmatch(p) is None or p in (".", "..") for p in parts)
        or redact(path) != path
    ):
        raise _refuse("result_sidecar_path: must be a workspace-relative POSIX path of plain name components")
    return path


def _processed(redactor: LedgerRedactor, text: str | None, cap: int) -> tuple[str | None, int | None, bool]:
    if text is None:
        return None, None, False
    result = redactor.process(text, cap)
    return result[0], result[1], bool(result[2])


def _check_ids(event: LedgerEvent) -> None:
    for name in ("conversation_id", "request_id", "tool_call_id"):
        if not ids.is_id(getattr(event, name)):
            raise _refuse(f"{name}: must match {ids.ID_RE.pattern}")
    if not ids.is_tool_name(event.tool_name):
        raise _refuse(f"tool_name: must match {ids.TOOL_NAME_RE.pattern}")
    if event.event not in EVENTS:
        raise _refuse(f"event: must be 'start' or 'end', got {event.event!r}")
    if event.id is not None and not isinstance(event.id, uuid.UUID):
        raise _refuse("id: expected a uuid.UUID")
    if not isinstance(event.result_truncated, bool):
        raise _refuse("result_truncated: expected a boolean")


_END_ONLY = (
    "ended_at",
    "duration_ms",
    "status",
    "error",
    "result_preview",
    "result_bytes",
    "result_sidecar_path",
    "exit_code",
)


def prepare(
    event: LedgerEvent,
    redactor: LedgerRedactor,
    *,
    redaction_version: int,
    now: datetime.datetime | None = None,
    key_is_clean: Callable[[str], bool] | None = None,
    meta_cache: MutableMapping[str, str] | None = None,
) -> PreparedRow:
    """The only path from caller text to a table (docs/ledger.md §5): validate, cap, redact, default timestamps.

    Raises LedgerValueError for an invalid event; nothing is repaired.
    """
    _check_ids(event)
    is_start = event.event == "start"
    ts = _aware_utc("ts", event.ts)
    started_at = _aware_utc("started_at", event.started_at)
    ended_at = _aware_utc("ended_at", event.ended_at)
    now_utc = _aware_utc("now", now)
    if is_start:
        present = [name for name in _END_ONLY if getattr(event, name) not in (None, "")]
        if present or event.result_truncated:
            raise _refuse(f"a start row carries no end columns, got {', '.join(present) or 'result_truncated'}")
        ts = ts or started_at or now_utc
        started_at = started_at or ts
    else:
        if event.arguments not in (None, ""):
            raise _refuse("arguments: an end row carries none")
        if ended_at is None:
            raise _refuse("ended_at: required on an end row")
        if event.status not in STATUSES:
            raise _refuse(f"status: an end row needs 'ok' or 'error', got {event.status!r}")
        if event.duration_ms is None:
            raise _refuse("duration_ms: required on an end row")
        ts = ts or ended_at
    if ts is None:
        raise _refuse("ts: no timestamp given and no clock reading")

    duration_ms = _count("duration_ms", event.duration_ms)
    result_bytes = _count("result_bytes", event.result_bytes)
    exit_code = _exit_code(event.exit_code)
    error_text = _text("error", event.error)
    if event.status == "error" and error_text is None:
        raise _refuse("error: status 'error' needs error text")
    if event.status == "ok" and error_text is not None:
        raise _refuse("error: status 'ok' carries no error text")
    sidecar = _sidecar_path(event.result_sidecar_path, redactor.redact)
    meta = prepare_meta(event.meta, redactor, key_is_clean, meta_cache)

    arguments, args_bytes, _ = _processed(redactor, _text("arguments", event.arguments), ARGUMENTS_CAP)
    preview, preview_bytes, preview_capped = _processed(
        redactor, _text("result_preview", event.result_preview), PREVIEW_CAP
    )
    error = None if error_text is None else redactor.redact_for_ledger(error_text, ERROR_CAP)
    if preview_bytes is not None and result_bytes is not None and preview_bytes > result_bytes:
        raise _refuse(f"result_bytes: {result_bytes} is less than the {preview_bytes}-byte preview source")

    truncated: bool | None = None
    if not is_start:
        truncated = (
            event.result_truncated
            or preview_capped
            or (preview_bytes is not None and result_bytes is not None and preview_bytes < result_bytes)
        )
        if sidecar is not None and not truncated:
            raise _refuse("result_sidecar_path: a sidecar implies a truncated result")

    return PreparedRow(
        id=event.id or ids.uuid7(),
        conversation_id=event.conversation_id,
        request_id=event.request_id,
        tool_call_id=event.tool_call_id,
        tool_name=event.tool_name,
        event=event.event,
        ts=ts,
        started_at=started_at,
        ended_at=ended_at,
        duration_ms=duration_ms,
        arguments=arguments,
        args_bytes=args_bytes,
        status=event.status if not is_start else None,
        error=error,
        result_preview=preview,
        preview_bytes=preview_bytes,
        result_bytes=result_bytes,
        result_truncated=truncated,
        result_sidecar_path=sidecar,
        exit_code=exit_code,
        meta=meta,
        redaction_version=redaction_version,
    )


def end_event(start: LedgerRow, **fields: Any) -> LedgerEvent:
    """An end event for a stored start: same ids and tool_name, started_at copied, the rest from `fields`."""
    return LedgerEvent(
        conversation_id=start.conversation_id,
        request_id=start.request_id,
        tool_call_id=start.tool_call_id,
        tool_name=start.tool_name,
        event="end",
        started_at=fields.pop("started_at", start.started_at),
        **fields,
    )
