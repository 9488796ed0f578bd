"""Per-caller token bucket and in-flight count (a fake clock; no timing)."""

from __future__ import annotations

from harness.serve.limits import CallerLimits


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_bucket_allows_a_burst_then_the_rate_with_a_retry_hint() -> None:
    clock = Clock()
    limits = CallerLimits(60, 3, 100, clock=clock)
    assert [limits.admit("alice") for _ in range(3)] == ["", "", ""]
    assert limits.admit("alice") == "rate limit of 60 calls a minute reached; retry after 1 s"
    assert limits.admit("bob") == ""  # another caller has its own bucket
    clock.now += 1.0
    assert limits.admit("alice") == ""
    assert limits.admit("alice").endswith("retry after 1 s")


def test_calls_in_flight_are_capped_per_caller_and_released() -> None:
    limits = CallerLimits(6000, 100, 2, clock=Clock())
    assert limits.admit("alice") == "" and limits.admit("alice") == ""
    assert limits.admit("alice").startswith("too many calls in flight for this caller (at most 2)")
    assert limits.admit("bob") == ""
    limits.release("alice")
    assert limits.admit("alice") == ""
