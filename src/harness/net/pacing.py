"""Process-wide spacing of request starts per origin, shared by every client instance and thread."""

from __future__ import annotations

import threading
from collections.abc import Callable

_lock = threading.Lock()
# Keyed by the monotonic source too, so an instance on an injected test clock never waits on real-clock instants.
_next_start: dict[tuple[str, Callable[[], float]], float] = {}


def reserve_start(origin: str, interval_s: float, monotonic: Callable[[], float]) -> float:
    """Reserve the next start slot for `origin` and return its instant; the caller waits until then."""
    key = (origin, monotonic)
    with _lock:
        now = monotonic()
        start = max(now, _next_start.get(key, now))
        _next_start[key] = start + interval_s
        return start
