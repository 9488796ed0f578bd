"""Retry policy as pure functions: Retry-After parsing, backoff, jitter and second formatting."""

from __future__ import annotations

import math
from email.utils import formatdate

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.net.retry import RETRYABLE_STATUSES, backoff_seconds, format_seconds, half_jitter, retry_after_seconds

NOW = 1_700_000_000.0


def test_retryable_statuses_are_exactly_the_spec_list() -> None:
    assert RETRYABLE_STATUSES == {429, 500, 502, 503, 504}


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("1", 1.0),
        (" 120 ", 120.0),
        ("0", 0.0),
        ("-5", 0.0),
        (formatdate(NOW + 7, usegmt=True), 7.0),
        (formatdate(NOW - 60, usegmt=True), 0.0),
        (formatdate(NOW + 3600, usegmt=False), 3600.0),
        ("9" * 400, math.inf),
    ],
)
def test_retry_after_delta_seconds_and_http_dates(value: str, seconds: float) -> None:
    assert retry_after_seconds(value, NOW) == seconds


@pytest.mark.parametrize("value", ["", "soon", "1.5", "1e3", "Wed, 99 Foo 2015 07:28:00 GMT"])
def test_unparseable_retry_after_is_none(value: str) -> None:
    assert retry_after_seconds(value, NOW) is None


def test_backoff_doubles_per_retry_and_respects_the_cap() -> None:
    assert [backoff_seconds(1000, k, None) for k in range(4)] == [1.0, 2.0, 4.0, 8.0]
    assert [backoff_seconds(1000, k, 15.0) for k in range(6)] == [1.0, 2.0, 4.0, 8.0, 15.0, 15.0]
    assert backoff_seconds(250, 1, None) == 0.5


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_half_jitter_stays_within_half_the_delay(delay: float) -> None:
    assert 0 <= half_jitter(delay) <= delay / 2


@pytest.mark.parametrize(
    ("seconds", "text"), [(15.0, "15"), (15, "15"), (0.25, "0.25"), (0.3, "0.3"), (math.inf, "inf")]
)
def test_format_seconds(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text
