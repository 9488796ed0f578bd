"""Per-caller limits on tool calls: a token bucket (rate) and a count of calls in flight (concurrency)."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

# Callers remembered at once; the least recently seen is forgotten first (a fresh bucket is full, so
# forgetting one only ever lets a caller through, and the count of callers cannot grow without bound).
MAX_TRACKED_CALLERS = 10_000


@dataclass(frozen=True)
class Refusal:
    """Why a caller must wait, and for how long (the retry hint of a tool error, or Retry-After)."""

    message: str
    retry_after_s: int


@dataclass
class _State:
    tokens: float
    at: float
    in_flight: int = 0


class CallerLimits:
    """`admit` a call for a caller key or get a Refusal with its retry hint; `release` when it ends."""

    def __init__(
        self, rate_per_minute: int, burst: int, max_concurrent: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate_s = rate_per_minute / 60
        self._burst = burst
        self._max_concurrent = max_concurrent
        self._clock = clock
        self._lock = threading.Lock()
        self._callers: OrderedDict[str, _State] = OrderedDict()

    def admit(self, key: str) -> Refusal | None:
        """None when the call may run (it is then counted in flight), else why not and when to retry."""
        now = self._clock()
        with self._lock:
            state = self._callers.pop(key, None) or _State(float(self._burst), now)
            self._callers[key] = state
            while len(self._callers) > MAX_TRACKED_CALLERS:
                self._callers.popitem(last=False)
            state.tokens = min(float(self._burst), state.tokens + (now - state.at) * self._rate_s)
            state.at = now
            if state.in_flight >= self._max_concurrent:
                message = f"too many calls in flight for this caller (at most {self._max_concurrent}); retry after 1 s"
                return Refusal(message, 1)
            if state.tokens < 1:
                wait = math.ceil((1 - state.tokens) / self._rate_s)
                return Refusal(f"rate limit of {round(self._rate_s * 60)} a minute reached; retry after {wait} s", wait)
            state.tokens -= 1
            state.in_flight += 1
            return None

    def release(self, key: str) -> None:
        with self._lock:
            state = self._callers.get(key)
            if state is not None and state.in_flight > 0:
                state.in_flight -= 1
