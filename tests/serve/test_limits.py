"""Per-caller token bucket and in-flight count (a fake clock; no timing)."""

from __future__ import annotations

from harness.serve.caller import limit_key
from harness.serve.limits import CallerLimits, Refusal
from harness.serve.sessions import OpenSessions


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_bucket_allows_a_burst_then_the_rate_with_a_retry_hint() -> None:
    clock = Clock()
    limits = CallerLimits(60, 3, 100, clock=clock)
    assert [limits.admit("alice") for _ in range(3)] == [None, None, None]
    assert limits.admit("alice") == Refusal("rate limit of 60 a minute reached; retry after 1 s", 1)
    assert limits.admit("bob") is None  # another caller has its own bucket
    clock.now += 1.0
    assert limits.admit("alice") is None
    assert limits.admit("alice") == Refusal("rate limit of 60 a minute reached; retry after 1 s", 1)
    slow = CallerLimits(1, 1, 100, clock=clock)
    assert slow.admit("carol") is None
    assert slow.admit("carol") == Refusal("rate limit of 1 a minute reached; retry after 60 s", 60)


def test_calls_in_flight_are_capped_per_caller_and_released() -> None:
    limits = CallerLimits(6000, 100, 2, clock=Clock())
    assert limits.admit("alice") is None and limits.admit("alice") is None
    assert limits.admit("alice") == Refusal("too many calls in flight for this caller (at most 2); retry after 1 s", 1)
    assert limits.admit("bob") is None
    limits.release("alice")
    assert limits.admit("alice") is None


def test_unauthenticated_callers_are_limited_per_address_and_principals_per_principal() -> None:
    assert limit_key("alice@example.test", "oauth", "10.0.0.1:5000") == "alice@example.test"
    assert limit_key("bearer", "bearer", "10.0.0.1:5000") == "bearer"
    assert limit_key("local", "none", "127.0.0.2:5000") == "local@127.0.0.2"
    assert limit_key("local", "none", "[::1]:5000") == "local@[::1]"


def test_open_sessions_are_counted_per_caller_until_the_transport_ends_them() -> None:
    live: set[str] = set()
    held = OpenSessions(2, live.__contains__)
    assert held.reserve("alice") and held.reserve("alice")
    assert not held.reserve("alice")  # two openings in progress fill the cap
    assert held.reserve("bob")
    live.update({"s1", "s2"})
    held.opened("alice", "s1")
    held.opened("alice", "s2")
    assert not held.reserve("alice")
    live.discard("s1")  # ended by DELETE or the idle timeout
    assert held.reserve("alice")
    held.abandon("alice")  # an opening that got no session id frees its place
    assert held.reserve("alice")


def test_each_lane_has_its_own_places_and_the_rate_is_shared() -> None:
    limits = CallerLimits(6000, 4, 1, clock=Clock())
    assert limits.admit("alice", "github_actor") is None
    refused = "too many calls of github_actor in flight for this caller (at most 1); retry after 1 s"
    assert limits.admit("alice", "github_actor") == Refusal(refused, 1)
    assert limits.admit("alice") is None  # the local lane is not the stalled one's
    assert limits.admit("alice", "fp_agent_verify") is None
    limits.release("alice", "github_actor")
    assert limits.admit("alice", "github_actor") is None
    # Four calls admitted: the one bucket of the caller is empty, whatever the lane.
    limits.release("alice")
    assert limits.admit("alice") == Refusal("rate limit of 6000 a minute reached; retry after 1 s", 1)
