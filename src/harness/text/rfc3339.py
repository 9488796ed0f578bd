"""RFC3339 timestamps (docs/investigate.md §1.3) as integer microseconds since 1970-01-01T00:00:00Z."""

from __future__ import annotations

import datetime
import re
from typing import Literal

from harness.text.sanitize import echo

_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]{1,9}))?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))"
)
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")

_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_US_PER_SECOND = 1_000_000
_US_PER_DAY = 86_400 * _US_PER_SECOND
# Instants must render back as four-digit years, so an offset may not push one outside 0001..9999 in UTC.
MIN_INSTANT = (datetime.date.min.toordinal() - _EPOCH_ORDINAL) * _US_PER_DAY
MAX_INSTANT = (datetime.date.max.toordinal() - _EPOCH_ORDINAL + 1) * _US_PER_DAY - 1

_EXPECTED_TIMESTAMP = "expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z"
_EXPECTED_BOUND = f"{_EXPECTED_TIMESTAMP} or a date such as 2026-04-10"


class TimestampError(ValueError):
    """A value that is not an acceptable timestamp; the message echoes it sanitized."""


def _days(year: str, month: str, day: str) -> int | None:
    try:
        # date() checks the calendar (month length, leap years); year 0 is refused as out of range.
        return datetime.date(int(year), int(month), int(day)).toordinal() - _EPOCH_ORDINAL
    except ValueError:
        return None


def _parse(s: str) -> int | None:
    match = _TIMESTAMP.fullmatch(s)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, sign, off_hour, off_minute = match.groups()
    days = _days(year, month, day)
    h, m, sec = int(hour), int(minute), int(second)
    if days is None or h > 23 or m > 59 or sec > 59:
        return None
    seconds = days * 86_400 + h * 3600 + m * 60 + sec
    if sign is not None:
        oh, om = int(off_hour), int(off_minute)
        if oh > 23 or om > 59:
            return None
        offset = oh * 3600 + om * 60
        seconds += -offset if sign == "+" else offset
    micros = seconds * _US_PER_SECOND + (int(fraction[:6].ljust(6, "0")) if fraction else 0)
    if not MIN_INSTANT <= micros <= MAX_INSTANT:
        return None
    return micros


def parse_timestamp(s: str) -> int:
    """Instant of a full RFC3339 timestamp (offset applied, fraction truncated to microseconds)."""
    micros = _parse(s)
    if micros is None:
        raise TimestampError(f"{_EXPECTED_TIMESTAMP}, got {echo(s)}")
    return micros


def parse_bound(s: str, side: Literal["since", "until"]) -> int:
    """Instant of a since/until input: RFC3339, or a bare UTC date meaning its first or last microsecond."""
    if side not in ("since", "until"):
        raise ValueError(f"side must be 'since' or 'until', not {side!r}")
    micros = _parse(s)
    if micros is not None:
        return micros
    match = _DATE.fullmatch(s)
    days = _days(*match.groups()) if match is not None else None
    if days is None:
        raise TimestampError(f"{_EXPECTED_BOUND}, got {echo(s)}")
    start = days * _US_PER_DAY
    return start if side == "since" else start + _US_PER_DAY - 1


def render(micros: int) -> str:
    """Canonical UTC form `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`, the fraction without trailing zeros."""
    if not MIN_INSTANT <= micros <= MAX_INSTANT:
        raise ValueError(f"instant {micros} is outside years 0001..9999")
    days, rest = divmod(micros, _US_PER_DAY)
    date = datetime.date.fromordinal(days + _EPOCH_ORDINAL)
    seconds, fraction = divmod(rest, _US_PER_SECOND)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    text = f"{date.year:04d}-{date.month:02d}-{date.day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    if fraction:
        text += "." + f"{fraction:06d}".rstrip("0")
    return text + "Z"


def normalize_timestamp(s: str) -> str:
    """The stored form of a timestamp: `render(parse_timestamp(s))`."""
    return render(parse_timestamp(s))
