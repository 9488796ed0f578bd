"""The payload fields an event is filtered by: the same values search_events shows as `target` and
`metadata.ip` (docs/decisions.md, "Target and ip filters, baseline relationships")."""

from __future__ import annotations

from typing import Any

from harness.text.casefold import MISSING, lookup


def event_target(payload: Any) -> str:
    """`payload.target` when a string (keys normalized), else ""."""
    if not isinstance(payload, dict):
        return ""
    value = lookup(payload, "target")
    return value if isinstance(value, str) else ""


def event_ip(payload: Any) -> str:
    """`payload.metadata.ip` when metadata has an ip key, else `payload.ip`; the value when a string, else ""."""
    if not isinstance(payload, dict):
        return ""
    nested = lookup(payload, "metadata")
    value = lookup(nested, "ip") if isinstance(nested, dict) else MISSING
    if value is MISSING:
        value = lookup(payload, "ip")
    return value if isinstance(value, str) else ""
