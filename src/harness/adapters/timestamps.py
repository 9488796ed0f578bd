"""Vendor event times, whatever their form, as stored RFC 3339 UTC timestamps."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from harness.adapters.fields import AdapterError
from harness.text.canonjson import json_type
from harness.text.rfc3339 import MAX_INSTANT, MIN_INSTANT, TimestampError, normalize_timestamp, render
from harness.text.sanitize import echo

# A number at or above this is epoch milliseconds (as seconds it would be past the year 5000).
MILLIS_FROM = 100_000_000_000
# Times with no zone: RFC 3339 without its offset, or the space-separated form CloudTrail Lake returns. Both are UTC.
_NO_ZONE = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?)")
_SPACED = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}) ([0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?)([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_EPOCH_TEXT = re.compile(r"-?[0-9]{1,16}(?:\.[0-9]{1,9})?")
_EXPECTED = "expected an RFC 3339 time, a UTC time without offset, or epoch seconds or milliseconds"


def _from_epoch(number: Decimal, field: str, shown: str) -> str:
    micros = int(number * (1_000 if abs(number) >= MILLIS_FROM else 1_000_000))
    if not MIN_INSTANT <= micros <= MAX_INSTANT:
        raise AdapterError(field, f"epoch time {shown} is outside years 0001..9999")
    return render(micros)


def event_time(value: Any, field: str) -> str:
    """The stored form of a vendor time found at `field`; AdapterError when absent or unreadable."""
    if value is None or value == "":
        raise AdapterError(field, "is required")
    if isinstance(value, bool):
        raise AdapterError(field, f"{_EXPECTED}, got {json_type(value)}")
    if isinstance(value, int | float):
        return _from_epoch(Decimal(repr(value)) if isinstance(value, float) else Decimal(value), field, repr(value))
    if not isinstance(value, str):
        raise AdapterError(field, f"{_EXPECTED}, got {json_type(value)}")
    if _EPOCH_TEXT.fullmatch(value):
        try:
            return _from_epoch(Decimal(value), field, value)
        except InvalidOperation as exc:
            raise AdapterError(field, f"{_EXPECTED}, got {echo(value)}") from exc
    spaced = _SPACED.fullmatch(value)
    candidate = f"{spaced.group(1)}T{spaced.group(2)}{spaced.group(3)}" if spaced else value
    no_zone = _NO_ZONE.fullmatch(value)
    if no_zone:
        candidate = f"{no_zone.group(1)}T{no_zone.group(2)}Z"
    try:
        return normalize_timestamp(candidate)
    except TimestampError as exc:
        raise AdapterError(field, f"{_EXPECTED}, got {echo(value)}") from exc
