"""The redaction boundary (docs/ledger.md §5): `prepare` turns a caller's LedgerEvent into a PreparedRow whose
every caller-supplied column is redacted, capped and checked; nothing reaches a backend any other way. Pure, no
database."""

from __future__ import annotations

import datetime
import hashlib
import re
import uuid
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Protocol

from harness.ledger import ids
from harness.ledger.errors import LedgerValueError
from harness.ledger.model import LedgerEvent, PreparedRow
from harness.ledger.sidecars import sidecar_relpath
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
# The default of `[ledger] sidecar_max_bytes` (settings.py), for callers of prepare without settings.
SIDECAR_CAP = 1_048_576
SIDECAR_META = ("sidecar_bytes", "sidecar_sha256", "sidecar_capped")

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


def _stored_result(event: LedgerEvent, redactor: LedgerRedactor, cap: int) -> tuple[str, dict[str, Any]]:
    """The redacted, capped full result of an end row and the meta that describes it (docs/ledger.md §11.3)."""
    if not isinstance(event.sidecar, str) or not event.sidecar:
        raise _refuse("sidecar: expected a non-empty text")
    if event.result_sidecar_path is not None:
        raise _refuse("result_sidecar_path: the store names a stored result itself")
    taken = [key for key in SIDECAR_META if key in (event.meta or {})]
    if taken:
        raise _refuse(f"meta: {', '.join(taken)} describe the stored result and are the store's to write")
    processed = redactor.process(event.sidecar, cap)
    content = processed[0]
    data = content.encode("utf-8")
    return content, {
        "sidecar_bytes": len(data),
        "sidecar_sha256": hashlib.sha256(data).hexdigest(),
        "sidecar_capped": bool(processed[2]),
    }


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
    "sidecar",
)


def prepare(
    event: LedgerEvent,
    redactor: LedgerRedactor,
    *,
    redaction_version: int,
    now: datetime.datetime | None = None,
    key_is_clean: Callable[[str], bool] | None = None,
    meta_cache: MutableMapping[str, str] | None = None,
    sidecar_cap: int = SIDECAR_CAP,
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
    row_id = event.id or ids.uuid7()
    sidecar = _sidecar_path(event.result_sidecar_path, redactor.redact)
    content, meta_in = None, event.meta
    if event.sidecar is not None:
        content, sidecar_meta = _stored_result(event, redactor, sidecar_cap)
        meta_in = {**(event.meta or {}), **sidecar_meta}
        sidecar = sidecar_relpath(event.conversation_id, row_id)
    meta = prepare_meta(meta_in, redactor, key_is_clean, meta_cache)

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
        id=row_id,
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
        sidecar=content,
    )
