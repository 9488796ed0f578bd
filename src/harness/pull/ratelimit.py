"""Rate-limit answers as pure functions: whether an answer is one, and how long it asks to wait."""

from __future__ import annotations

import math
from collections.abc import Mapping

from harness.net.retry import retry_after_seconds


def is_rate_limited(status: int, headers: Mapping[str, str], reset_header: str) -> bool:
    """429 always; 403 only with a rate-limit sign (GitHub answers an exhausted primary limit with 403)."""
    if status == 429:
        return True
    if status != 403:
        return False
    return (
        "retry-after" in headers
        or headers.get("x-ratelimit-remaining", "").strip() == "0"
        or (reset_header in headers and headers.get("x-rate-limit-remaining", "").strip() == "0")
    )


def wait_seconds(headers: Mapping[str, str], reset_header: str, now: float) -> float | None:
    """Retry-After (seconds or an HTTP date), else the reset header (epoch seconds) minus `now`; None when the
    answer says neither. Past instants count as 0."""
    retry_after = headers.get("retry-after")
    if retry_after is not None:
        seconds = retry_after_seconds(retry_after, now)
        if seconds is not None:
            return seconds
    reset = headers.get(reset_header, "").strip()
    if reset.isdigit():
        value = float(reset)
        return max(0.0, value - now) if math.isfinite(value) else math.inf
    return None
