"""Reading vendor records by field path, and the error every adapter raises."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from harness.text.canonjson import StrictJSONError, dumps, json_type, loads_strict
from harness.text.sanitize import echo

_ABSENT = object()


class AdapterError(ValueError):
    """A vendor record that cannot be mapped: `field "<path>": <problem>` (the caller adds the location)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f'field "{field}": {problem}' if field else problem)
        self.field = field
        self.problem = problem


def get(record: Any, path: str) -> Any:
    """The value at a dotted path, or None. Each step takes the exact key, else the first key equal ignoring
    case (CloudTrail Lake and some exports lower-case nested names); a number step indexes an array."""
    node = record
    for step in path.split("."):
        if isinstance(node, list) and step.isdigit():
            node = node[int(step)] if int(step) < len(node) else None
            continue
        if not isinstance(node, dict):
            return None
        if step in node:
            node = node[step]
            continue
        wanted = step.lower()
        node = next((value for key, value in node.items() if key.lower() == wanted), _ABSENT)
        if node is _ABSENT:
            return None
    return node


def text(record: Any, *paths: str) -> str:
    """The first string at `paths` that is non-empty after strip(), else ""; numbers (ids) as their digits."""
    for path in paths:
        value = get(record, path)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return str(value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a JSON array, in order; a value that is not an array holds none."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def required_text(record: Any, path: str) -> str:
    """The string at `path`; absent, empty or not a string is an AdapterError naming the field."""
    value = get(record, path)
    if value is None or value == "":
        raise AdapterError(path, "is required")
    if not isinstance(value, str):
        raise AdapterError(path, f"expected a string, got {json_type(value)}")
    return value


def vendor_id(record: Any, path: str) -> str:
    """The vendor's event id at `path` (absent means none); it must be a clean token usable as an id."""
    value = get(record, path)
    if value is None or value == "":
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise AdapterError(path, f"expected a string, got {json_type(value)}")
    if not value.isprintable() or value.strip() != value or " " in value or len(value.encode("utf-8")) > 200:
        raise AdapterError(path, f"is not usable as an event id: {echo(value)}")
    return value


def content_hash(record: Any) -> str:
    """A stable id for a record without one: sha256 of its canonical JSON, 32 hex digits."""
    return hashlib.sha256(dumps(record).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def compact(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """A metadata object of the non-empty values only (one shape per value: absent, never "")."""
    return {key: value for key, value in pairs if value}


def embedded_record(item: dict[str, Any], key: str) -> dict[str, Any]:
    """The vendor record a listing item holds as a JSON string at `key` (CloudTrail lookup-events, M365 audit
    search results)."""
    embedded = item[key]
    if not isinstance(embedded, str):
        raise AdapterError(key, f"expected a string holding a JSON record, got {json_type(embedded)}")
    try:
        record = loads_strict(embedded)
    except StrictJSONError as exc:
        raise AdapterError(key, f"is not JSON: {exc}") from exc
    if not isinstance(record, dict):
        raise AdapterError(key, f"expected a JSON object, got {json_type(record)}")
    return record
