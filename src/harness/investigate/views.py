"""What the search operations show of stored records (docs/investigate.md §2, docs/investigate.md §9.2): pure renderers, no I/O."""

from __future__ import annotations

from collections.abc import KeysView, Mapping
from typing import Any

from harness.text.casefold import normalize_key
from harness.text.sanitize import sanitize_field
from harness.text.scalars import render_scalar

METADATA_ALLOWLIST: tuple[str, ...] = (
    "operation_count",
    "blobs_accessed",
    "bytes_read",
    "resource_count",
    "rows_affected",
    "export_format",
    "includes_pii",
    "ip",
    "location",
    "principal_id",
    "role",
    "user_agent",
    "job_id",
    "ticket_id",
    "schedule",
    "scheduled",
    "maintenance_window",
    "window_id",
    "post_deploy",
    "caller",
    "session_name",
    "source_ip",
)

_ABSENT = object()


class _Keyed:
    """`casefold.lookup` over one object with each key normalized once, for the 24 lookups a view makes."""

    __slots__ = ("_first", "_obj")

    def __init__(self, obj: Mapping[str, Any]) -> None:
        self._obj = obj
        self._first: dict[str, str] = {}
        for key in obj:
            self._first.setdefault(normalize_key(key), key)

    def get(self, name: str) -> Any:
        if name in self._obj:
            return self._obj[name]
        key = self._first.get(name)
        return _ABSENT if key is None else self._obj[key]

    def names(self) -> KeysView[str]:
        """The normalized names the object holds: of normalized names, `get` finds exactly these."""
        return self._first.keys()


def _nested(payload: _Keyed) -> _Keyed | None:
    nested = payload.get("metadata")
    return _Keyed(nested) if isinstance(nested, dict) else None


def _shown(payload: _Keyed, meta: _Keyed | None, name: str) -> str | None:
    value = meta.get(name) if meta is not None else _ABSENT
    if value is _ABSENT:
        value = payload.get(name)
    # An object or array found in metadata still decides: it is not rendered, and the top level is not consulted.
    rendered = None if value is _ABSENT else render_scalar(value)
    return None if rendered is None else sanitize_field(rendered)


def _metadata(payload: _Keyed) -> dict[str, str]:
    meta = _nested(payload)
    out: dict[str, str] = {}
    held = payload.names() | meta.names() if meta is not None else payload.names()
    # Allowlist order is the output's key order; a payload holds few of the 22 names, so only those are looked up.
    # This runs for every event of a result (2,000 at most): `_shown` is inlined, a string rendered in place.
    for name in METADATA_ALLOWLIST:
        if name not in held:
            continue
        value = meta.get(name) if meta is not None else _ABSENT
        if value is _ABSENT:
            value = payload.get(name)
        rendered = (value or None) if isinstance(value, str) else render_scalar(value)
        if rendered is not None:
            out[name] = sanitize_field(rendered)
    return out


def payload_value(payload: Any, name: str) -> str | None:
    """The value of `name` (a normalized key) an event payload shows, read as EventView metadata is read (the
    nested `metadata` object first, then the top level, rendered and sanitized) but for any key, not only the
    allowlist; None when the payload does not show one (resolve_finding's evidence, docs/investigate.md §9.7)."""
    if not isinstance(payload, dict):
        return None
    keyed = _Keyed(payload)
    return _shown(keyed, _nested(keyed), name)


def event_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """The EventView of a stored event: identifiers as stored, target/action/metadata from the payload, sanitized."""
    view = {
        "id": record["id"],
        "source": record["source"],
        "type": record["type"],
        "actor": record["actor"],
        "timestamp": record["timestamp"],
    }
    payload = record["payload"]
    if not isinstance(payload, dict):
        view.update(target="", action="", metadata={})
        return view
    keyed = _Keyed(payload)
    target, action = keyed.get("target"), keyed.get("action")
    view["target"] = sanitize_field(target) if isinstance(target, str) else ""
    view["action"] = sanitize_field(action) if isinstance(action, str) else ""
    view["metadata"] = _metadata(keyed)
    return view


def sanitize_leaves(value: Any) -> Any:
    """A copy of a JSON tree with every string leaf through sanitize_field; keys are kept as stored."""
    if isinstance(value, str):
        return sanitize_field(value)
    if isinstance(value, dict):
        return {key: sanitize_leaves(child) for key, child in value.items()}
    if isinstance(value, list):
        return [sanitize_leaves(child) for child in value]
    return value


def finding_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """A stored finding with every key, its reason and evidence string leaves sanitized."""
    return {**record, "reason": sanitize_field(record["reason"]), "evidence": sanitize_leaves(record["evidence"])}
