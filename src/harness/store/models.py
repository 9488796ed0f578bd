"""Event and finding records (docs/investigate.md §2, docs/investigate.md §5 "Decoding"): one decoder shared by ingestion and the reader."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.text.canonjson import dumps, json_type
from harness.text.casefold import (
    KeyCollisionError,
    lookup,
    normalize_key,
    normalize_record_keys,
)
from harness.text.rfc3339 import TimestampError, normalize_timestamp
from harness.text.sanitize import echo, is_clean

MAX_FIELD_BYTES = 256
MAX_KEY_BYTES = 1024
MAX_REASON_BYTES = 65_536
MAX_EVIDENCE_BYTES = 8192
MAX_EVENT_IDS = 1000
# Not in the spec: the output side (pydantic serialization) cannot render trees much deeper than ~250,
# so ingestion refuses what the operations could not return (README, "Limits").
MAX_DEPTH = 64
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

EVENT_FIELDS = ("id", "source", "type", "actor", "org", "timestamp", "payload")
FINDING_FIELDS = ("id", "source", "severity", "type", "actor", "timestamp", "reason", "evidence", "event_ids")


class RecordError(ValueError):
    """A record that fails its model; the message is the `<problem>` of `<loc>: <problem>`."""


def field_error(name: str, problem: str) -> RecordError:
    """`field "<name>": <problem>`."""
    return RecordError(f'field "{name}": {problem}')


def utf8_size(value: str) -> int:
    """UTF-8 size in bytes; lone surrogates (never clean) count as three bytes."""
    return len(value.encode("utf-8", "surrogatepass"))


def clean_problem(value: str) -> str | None:
    """Why a string is not clean (docs/investigate.md §2), or None when it is."""
    if not is_clean(value):
        return "contains control, format, tab or line-break characters"
    if value.strip() != value:
        return "has leading or trailing whitespace"
    return None


def check_string(name: str, value: Any, *, max_bytes: int, colon: bool = True, clean: bool = True) -> str:
    """A string field: its type, cleanliness, size and (optionally) no `:`."""
    if not isinstance(value, str):
        raise field_error(name, f"expected a string, got {json_type(value)}")
    if clean and (problem := clean_problem(value)) is not None:
        raise field_error(name, problem)
    size = len(value) if value.isascii() else utf8_size(value)
    if size > max_bytes:
        raise field_error(name, f"must be at most {max_bytes} bytes (UTF-8), got {size}")
    if not colon and ":" in value:
        raise field_error(name, 'must not contain ":"')
    return value


def _optional_string(rec: dict[str, Any], name: str, *, colon: bool) -> str:
    value = rec.get(name)
    if value is None:
        return ""
    return check_string(name, value, max_bytes=MAX_FIELD_BYTES, colon=colon)


def _record_id(rec: dict[str, Any]) -> str:
    value = rec.get("id")
    if value is None:
        raise field_error("id", "is required")
    check_string("id", value, max_bytes=MAX_FIELD_BYTES)
    if not value:
        raise field_error("id", "must not be empty")
    return value


def _timestamp(rec: dict[str, Any], *, required: bool) -> str:
    value = rec.get("timestamp")
    if value is None or (value == "" and not required):
        if required:
            raise field_error("timestamp", "is required")
        return ""
    if not isinstance(value, str):
        raise field_error("timestamp", f"expected a string, got {json_type(value)}")
    try:
        return normalize_timestamp(value)
    except TimestampError as exc:
        raise field_error("timestamp", str(exc)) from exc


def _normalized(obj: Any, *, rename: dict[str, str]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise RecordError(f"a record must be a JSON object, got {json_type(obj)}")
    for key in obj:
        if not isinstance(key, str):
            raise RecordError(f"a record key must be a string, got {json_type(key)}")
    try:
        rec = normalize_record_keys(obj)
    except KeyCollisionError as exc:
        raise RecordError(str(exc)) from exc
    for old, new in rename.items():
        if old not in rec:
            continue
        if new in rec:
            originals = [key for key in obj if normalize_key(key) in (old, new)]
            raise RecordError(f"keys {echo(originals[0])} and {echo(originals[1])} both normalize to {echo(new)}")
        rec[new] = rec.pop(old)
    return rec


def _with_extras(name: str, rec: dict[str, Any], core: tuple[str, ...]) -> Any:
    """The container field (`payload`/`evidence`) with every non-core top-level key moved into it."""
    extras = {key: value for key, value in rec.items() if key not in core}
    if name not in rec:
        return extras
    container = rec[name]
    if not extras:
        return container
    if not isinstance(container, dict):
        listed = ", ".join(echo(key) for key in extras)
        raise field_error(name, f"must be an object to receive the other top-level fields ({listed})")
    for key in extras:
        if key in container:
            raise field_error(name, f"key {echo(key)} is given both at the top level and inside {name}")
    return {**container, **extras}


def check_json_tree(name: str, value: Any) -> None:
    """Every object key clean and at most 1,024 bytes; only JSON values (finite numbers, int64 integers);
    nesting at most MAX_DEPTH levels."""
    stack = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if type(node) is str:
            continue
        if isinstance(node, dict | list | tuple):
            level += 1
            if level > MAX_DEPTH:
                raise field_error(name, f"nesting is deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            for key, child in node.items():
                # The common key (printable ASCII, no edge spaces, short) passes every check below at once.
                if type(key) is str and key.isascii() and key.isprintable() and len(key) <= MAX_KEY_BYTES \
                        and key.strip() == key:
                    stack.append((child, level))
                    continue
                if not isinstance(key, str):
                    raise field_error(name, f"object keys must be strings, got {json_type(key)}")
                if (problem := clean_problem(key)) is not None:
                    raise field_error(name, f"object key {echo(key)} {problem}")
                if utf8_size(key) > MAX_KEY_BYTES:
                    raise field_error(name, f"object key {echo(key)} is longer than {MAX_KEY_BYTES} bytes")
                stack.append((child, level))
        elif isinstance(node, list | tuple):
            stack.extend((child, level) for child in node)
        elif isinstance(node, bool) or node is None or isinstance(node, str):
            continue
        elif isinstance(node, int):
            if not _INT64_MIN <= node <= _INT64_MAX:
                raise field_error(name, f"integer {node} is outside the signed 64-bit range")
        elif isinstance(node, float):
            if node != node or node in (float("inf"), float("-inf")):
                raise field_error(name, "numbers must be finite")
        else:
            raise field_error(name, f"holds {json_type(node)}")


def decode_event(obj: Any) -> dict[str, Any]:
    """Validate an event (docs/investigate.md §2) and return its stored form; raises RecordError."""
    rec = _normalized(obj, rename={"event_type": "type"})
    out = {
        "id": _record_id(rec),
        "source": _optional_string(rec, "source", colon=False),
        "type": _optional_string(rec, "type", colon=False),
        "actor": _optional_string(rec, "actor", colon=True),
        "org": _optional_string(rec, "org", colon=True),
        "timestamp": _timestamp(rec, required=True),
    }
    payload = _with_extras("payload", rec, EVENT_FIELDS)
    check_json_tree("payload", payload)
    out["payload"] = payload
    return out


def _event_ids(rec: dict[str, Any], evidence: Any) -> list[str]:
    given = rec.get("event_ids")
    if given is not None and not isinstance(given, list):
        raise field_error("event_ids", f"expected an array, got {json_type(given)}")
    if given:
        ids, name = given, "event_ids"
    else:
        ids, name = sorted(set(_evidence_event_ids(evidence))), "event_ids (from evidence)"
    if len(ids) > MAX_EVENT_IDS:
        raise field_error(name, f"must have at most {MAX_EVENT_IDS} items, got {len(ids)}")
    for index, value in enumerate(ids):
        check_string(f"{name}[{index}]", value, max_bytes=MAX_FIELD_BYTES)
    return list(ids)


def _evidence_event_ids(evidence: Any) -> Iterable[str]:
    if not isinstance(evidence, dict):
        return
    single = lookup(evidence, "event_id")
    if isinstance(single, str) and single:
        yield single
    many = lookup(evidence, "event_ids")
    if isinstance(many, list):
        yield from (value for value in many if isinstance(value, str) and value)


def decode_finding(obj: Any) -> dict[str, Any]:
    """Validate a finding (docs/investigate.md §2) and return its stored form; raises RecordError."""
    rec = _normalized(obj, rename={})
    out: dict[str, Any] = {"id": _record_id(rec)}
    for name in ("source", "severity", "type", "actor"):
        out[name] = _optional_string(rec, name, colon=True)
    out["timestamp"] = _timestamp(rec, required=False)
    reason = rec.get("reason")
    out["reason"] = "" if reason is None else check_string("reason", reason, max_bytes=MAX_REASON_BYTES, clean=False)
    evidence = _with_extras("evidence", rec, FINDING_FIELDS)
    check_json_tree("evidence", evidence)
    size = len(encode_json("evidence", evidence))
    if size > MAX_EVIDENCE_BYTES:
        raise field_error("evidence", f"canonical JSON must be at most {MAX_EVIDENCE_BYTES} bytes, got {size}")
    out["evidence"] = evidence
    out["event_ids"] = _event_ids(rec, evidence)
    return out


def encode_json(name: str, value: Any) -> bytes:
    """Canonical JSON bytes of a validated value; lone surrogates (not UTF-8 encodable) are refused."""
    try:
        return dumps(value).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise field_error(name, "contains a lone surrogate, which UTF-8 cannot encode") from exc
    except (TypeError, ValueError) as exc:
        raise field_error(name, f"is not JSON-encodable: {exc}") from exc
