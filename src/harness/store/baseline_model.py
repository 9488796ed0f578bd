"""The baseline record (docs/investigate.md §2, docs/investigate.md §6.3): validation of stored records and `--baseline` files alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.store.models import RecordError, check_string, field_error
from harness.text.canonjson import json_type
from harness.text.casefold import KeyCollisionError, normalize_record_keys
from harness.text.rfc3339 import TimestampError, normalize_timestamp
from harness.text.sanitize import echo, sanitize_field

SCHEMA_VERSION = 1
# Built strings join sanitized values (each at most 1,024 bytes), e.g. `role:target`; this bounds them all.
MAX_STRING_BYTES = 8192
MAX_SEEN_BYTES = 64
_INT64_MAX = 2**63 - 1

BASELINE_FIELDS = (
    "schema_version",
    "built_from_commit",
    "known_users",
    "known_actors",
    "known_created_entities",
    "frequency_tables",
    "actor_hours",
    "actor_roles",
    "relationships",
)
_TOP = ""
PROFILE_FIELDS = ("known_ips", "known_geos", "last_seen")
RELATIONSHIP_FIELDS = ("count", "first_seen", "last_seen")


def _path(parent: str, key: str) -> str:
    return f"{parent}.{sanitize_field(key)}"


def _fields(path: str, value: Any, allowed: tuple[str, ...]) -> dict[str, Any]:
    """An object whose field names go through normalize_key; unknown fields are refused."""

    def refuse(problem: str) -> RecordError:
        return RecordError(problem) if path == _TOP else field_error(path, problem)

    if not isinstance(value, dict):
        raise refuse(f"expected an object, got {json_type(value)}")
    try:
        fields = normalize_record_keys(value)
    except KeyCollisionError as exc:
        raise refuse(str(exc)) from exc
    for name in fields:
        if name not in allowed:
            raise refuse(f"unknown field {echo(name)} (allowed: {', '.join(allowed)})")
    return fields


def _string(path: str, value: Any, max_bytes: int = MAX_STRING_BYTES) -> str:
    return check_string(path, value, max_bytes=max_bytes)


def _optional_string(path: str, value: Any, max_bytes: int = MAX_STRING_BYTES) -> str:
    """A scalar string field; null means "" as for records (docs/investigate.md §5)."""
    return "" if value is None else _string(path, value, max_bytes)


def _map(path: str, value: Any, item: Callable[[str, Any], Any]) -> dict[str, Any]:
    """A map with clean keys (never normalized: they are actor names and the like); null means empty."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise field_error(path, f"expected an object, got {json_type(value)}")
    out = {}
    for key, child in value.items():
        check_string(f"{path} key", key, max_bytes=MAX_STRING_BYTES)
        out[key] = item(_path(path, key), child)
    return out


def _list(path: str, value: Any, item: Callable[[str, Any], Any]) -> list[Any]:
    """A list, sorted and de-duplicated; null means empty."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise field_error(path, f"expected an array, got {json_type(value)}")
    return sorted({item(f"{path}[{index}]", child) for index, child in enumerate(value)})


def _count(path: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise field_error(path, f"expected an integer, got {json_type(value)}")
    if not 0 <= value <= _INT64_MAX:
        raise field_error(path, f"must be a count of at least 0, got {value}")
    return value


def _hour(path: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise field_error(path, f"expected an integer hour, got {json_type(value)}")
    if not 0 <= value <= 23:
        raise field_error(path, f"must be an hour from 0 to 23, got {value}")
    return value


def _last_seen(path: str, value: Any) -> str:
    text = _optional_string(path, value)
    if not text:
        return ""
    try:
        return normalize_timestamp(text)
    except TimestampError as exc:
        raise field_error(path, str(exc)) from exc


def _profile(path: str, value: Any) -> dict[str, Any]:
    fields = _fields(path, value, PROFILE_FIELDS)
    return {
        "known_ips": _list(f"{path}.known_ips", fields.get("known_ips"), _string),
        "known_geos": _list(f"{path}.known_geos", fields.get("known_geos"), _string),
        "last_seen": _last_seen(f"{path}.last_seen", fields.get("last_seen")),
    }


def _relationship(path: str, value: Any) -> dict[str, Any]:
    fields = _fields(path, value, RELATIONSHIP_FIELDS)
    return {
        "count": _count(f"{path}.count", fields.get("count", 0)),
        "first_seen": _optional_string(f"{path}.first_seen", fields.get("first_seen"), MAX_SEEN_BYTES),
        "last_seen": _optional_string(f"{path}.last_seen", fields.get("last_seen"), MAX_SEEN_BYTES),
    }


def decode_baseline(obj: Any) -> dict[str, Any]:
    """Validate a baseline object (docs/investigate.md §6.3) and return its stored form, every collection present and sorted."""
    if not isinstance(obj, dict):
        raise RecordError(f"a baseline must be a JSON object, got {json_type(obj)}")
    fields = _fields(_TOP, obj, BASELINE_FIELDS)
    version = fields.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        raise field_error("schema_version", f"must be {SCHEMA_VERSION}")

    def strings(path: str, value: Any) -> list[str]:
        return _list(path, value, _string)

    def hours(path: str, value: Any) -> list[int]:
        return _list(path, value, _hour)

    return {
        "schema_version": SCHEMA_VERSION,
        "built_from_commit": _optional_string("built_from_commit", fields.get("built_from_commit"), MAX_SEEN_BYTES),
        "known_users": _map("known_users", fields.get("known_users"), _profile),
        "known_actors": strings("known_actors", fields.get("known_actors")),
        "known_created_entities": strings("known_created_entities", fields.get("known_created_entities")),
        "frequency_tables": _map("frequency_tables", fields.get("frequency_tables"), _count),
        "actor_hours": _map("actor_hours", fields.get("actor_hours"), hours),
        "actor_roles": _map("actor_roles", fields.get("actor_roles"), strings),
        "relationships": _map("relationships", fields.get("relationships"), _relationship),
    }


@dataclass(frozen=True)
class Baseline:
    """A validated baseline, from the store's last `baseline` record or a `--baseline` file."""

    record: Mapping[str, Any]
    origin: str

    @property
    def built_from_commit(self) -> str:
        return str(self.record["built_from_commit"])

    @property
    def known_users(self) -> Mapping[str, Mapping[str, Any]]:
        return self.record["known_users"]

    @property
    def known_actors(self) -> list[str]:
        return self.record["known_actors"]

    @property
    def known_created_entities(self) -> list[str]:
        return self.record["known_created_entities"]

    @property
    def frequency_tables(self) -> Mapping[str, int]:
        return self.record["frequency_tables"]

    @property
    def actor_hours(self) -> Mapping[str, list[int]]:
        return self.record["actor_hours"]

    @property
    def actor_roles(self) -> Mapping[str, list[str]]:
        return self.record["actor_roles"]

    @property
    def relationships(self) -> Mapping[str, Mapping[str, Any]]:
        return self.record["relationships"]
