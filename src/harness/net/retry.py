"""Retry policy as pure functions: which statuses retry, Retry-After parsing, backoff and jitter."""

from __future__ import annotations

import math
import random
import re
from datetime import UTC
from email.utils import parsedate_to_datetime

RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})

_DELTA_SECONDS = re.compile(r"-?[0-9]+")


def retry_after_seconds(value: str, now: float) -> float | None:
    """Seconds to wait for a Retry-After value (delta seconds or an HTTP date against `now`, epoch seconds).

    Negative or past values count as 0; an unparseable value is None (the caller falls back to backoff).
    """
    text = value.strip()
    if _DELTA_SECONDS.fullmatch(text):
        # float() of an arbitrarily long digit string saturates to inf instead of raising, which the cap then stops.
        return max(0.0, float(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)


def backoff_seconds(base_ms: int, retry_index: int, cap_s: float | None) -> float:
    """`base_ms * 2**retry_index` in seconds (retry_index 0 for the first retry), capped when a cap is set."""
    delay = base_ms / 1000 * 2**retry_index
    return delay if cap_s is None else min(delay, cap_s)


def half_jitter(delay_s: float) -> float:
    """docs/net.md's default jitter: uniformly up to 50% of the backoff delay."""
    return random.uniform(0, delay_s / 2)


def format_seconds(seconds: float) -> str:
    """Seconds for one-line messages: `15`, `0.25`, `inf`."""
    if math.isinf(seconds):
        return "inf"
    if seconds == int(seconds):
        return str(int(seconds))
    return f"{seconds:.3f}".rstrip("0")
