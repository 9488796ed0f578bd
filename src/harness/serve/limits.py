"""Per-caller limits on tool calls: a token bucket (rate) and a count of calls in flight (concurrency), kept
per lane: the local reads in one lane, each open-world tool in a lane of its own, so calls stalled on an
upstream never use up the places a caller's local reads need (docs/decisions.md, "Team server capacity")."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

# The lane of every call that is not an open-world tool.
LOCAL_LANE = "local"

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
    in_flight: dict[str, int] = field(default_factory=dict)


class CallerLimits:
    """`admit` a call for a caller key or get a Refusal with its retry hint; `release` when it ends. The rate is
    one bucket per caller; `max_concurrent` applies to each of the caller's lanes separately."""

    def __init__(
        self, rate_per_minute: int, burst: int, max_concurrent: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate_s = rate_per_minute / 60
        self._burst = burst
        self._max_concurrent = max_concurrent
        self._clock = clock
        self._lock = threading.Lock()
        self._callers: OrderedDict[str, _State] = OrderedDict()

    def admit(self, key: str, lane: str = LOCAL_LANE) -> Refusal | None:
        """None when the call may run (it is then counted in flight in `lane`), else why not and when to retry."""
        now = self._clock()
        with self._lock:
            state = self._callers.pop(key, None) or _State(float(self._burst), now)
            self._callers[key] = state
            while len(self._callers) > MAX_TRACKED_CALLERS:
                self._callers.popitem(last=False)
            state.tokens = min(float(self._burst), state.tokens + (now - state.at) * self._rate_s)
            state.at = now
            in_flight = state.in_flight.get(lane, 0)
            if in_flight >= self._max_concurrent:
                shown = "" if lane == LOCAL_LANE else f" of {lane}"
                cap = self._max_concurrent
                return Refusal(f"too many calls{shown} in flight for this caller (at most {cap}); retry after 1 s", 1)
            if state.tokens < 1:
                wait = math.ceil((1 - state.tokens) / self._rate_s)
                return Refusal(f"rate limit of {round(self._rate_s * 60)} a minute reached; retry after {wait} s", wait)
            state.tokens -= 1
            state.in_flight[lane] = in_flight + 1
            return None

    def release(self, key: str, lane: str = LOCAL_LANE) -> None:
        with self._lock:
            state = self._callers.get(key)
            left = 0 if state is None else state.in_flight.get(lane, 0) - 1
            if state is None or left < 0:
                return
            if left:
                state.in_flight[lane] = left
            else:
                del state.in_flight[lane]
