"""RFC3339 timestamps as integer microseconds (docs/investigate.md §1.3)."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.text.rfc3339 import (
    MAX_INSTANT,
    MIN_INSTANT,
    TimestampError,
    normalize_timestamp,
    parse_bound,
    parse_timestamp,
    render,
)

STORED_MESSAGE = 'expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z, got "{}"'
BOUND_MESSAGE = 'expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z or a date such as 2026-04-10, got "{}"'
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def micros_of(dt: datetime.datetime) -> int:
    delta = dt - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-04-10T11:00:00.1234567+02:00", "2026-04-10T09:00:00.123456Z"),
        ("2026-04-09T12:00:00.250Z", "2026-04-09T12:00:00.25Z"),
        ("2026-04-10t09:00:00z", "2026-04-10T09:00:00Z"),
        ("2026-04-10T09:00:00-00:00", "2026-04-10T09:00:00Z"),
    ],
)
def test_spec_vectors(raw: str, expected: str) -> None:
    assert normalize_timestamp(raw) == expected
    assert render(parse_timestamp(raw)) == expected
    assert parse_bound(raw, "since") == parse_bound(raw, "until") == parse_timestamp(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-04-10T09:00:00.000000Z", "2026-04-10T09:00:00Z"),
        ("2026-04-10T09:00:00.000000999Z", "2026-04-10T09:00:00Z"),  # truncated, never rounded
        ("2026-04-10T09:00:00.9999999Z", "2026-04-10T09:00:00.999999Z"),
        ("2026-04-10T09:00:00.1Z", "2026-04-10T09:00:00.1Z"),
        ("2026-04-10T00:30:00+01:00", "2026-04-09T23:30:00Z"),  # offsets cross midnight
        ("2026-12-31T23:30:00-01:00", "2027-01-01T00:30:00Z"),
        ("2024-02-29T12:00:00+23:59", "2024-02-28T12:01:00Z"),  # leap day, extreme offset
        ("1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59.5Z"),  # before the epoch
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
        ("9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"),
    ],
)
def test_normalization(raw: str, expected: str) -> None:
    assert normalize_timestamp(raw) == expected


def test_instants_are_epoch_microseconds() -> None:
    assert parse_timestamp("1970-01-01T00:00:00Z") == 0
    assert parse_timestamp("1970-01-01T00:00:00.000001Z") == 1
    assert parse_timestamp("1969-12-31T23:59:59.999999Z") == -1
    assert parse_timestamp("2026-04-10T09:00:00Z") == 1_775_811_600_000_000
    assert render(0) == "1970-01-01T00:00:00Z"
    assert render(-1) == "1969-12-31T23:59:59.999999Z"


REFUSED = [
    "2026-04-10 09:00:00Z",
    "2026-04-10T09:00:00",
    "2026-02-30T00:00:00Z",
    "2026-04-10T23:59:60Z",
    "2026-04-10T09:00:00+24:00",
    "yesterday",
    "2026-4-1",
    "2025-02-29T00:00:00Z",  # not a leap year
    "2026-13-01T00:00:00Z",
    "2026-00-10T00:00:00Z",
    "2026-04-00T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "2026-04-10T24:00:00Z",
    "2026-04-10T09:60:00Z",
    "2026-04-10T09:00:00+02:60",
    "2026-04-10T09:00:00+0200",
    "2026-04-10T09:00:00.Z",
    "2026-04-10T09:00:00.1234567890Z",  # more than nine fraction digits
    "2026-04-10T09:00:00,5Z",
    "2026-04-10T09:00Z",
    "2026-04-10T09:00:00Z ",
    " 2026-04-10T09:00:00Z",
    "2026-04-10T09:00:00Z\n",
    "+2026-04-10T09:00:00Z",
    "20260-04-10T09:00:00Z",
    "２０２６-04-10T09:00:00Z",  # fullwidth digits are not ASCII digits
    "2026-04-10T09:00:00\u200bZ",
    "0001-01-01T00:00:00+00:01",  # UTC instant before year 1
    "9999-12-31T23:59:59-00:01",  # UTC instant after year 9999
    "",
]


@pytest.mark.parametrize("raw", [*REFUSED, "2026-04-10"])
def test_refused_stored_timestamps(raw: str) -> None:
    with pytest.raises(TimestampError) as info:
        parse_timestamp(raw)
    assert isinstance(info.value, ValueError)
    assert str(info.value) == STORED_MESSAGE.format(raw.strip().replace("\u200b", "").replace("\n", " "))


@pytest.mark.parametrize("raw", REFUSED)
def test_refused_bounds(raw: str) -> None:
    for side in ("since", "until"):
        with pytest.raises(TimestampError) as info:
            parse_bound(raw, side)
        assert str(info.value) == BOUND_MESSAGE.format(raw.strip().replace("\u200b", "").replace("\n", " "))


def test_error_echoes_sanitized_json_string() -> None:
    with pytest.raises(TimestampError) as info:
        parse_timestamp('say "when"\u202e\nnow')
    assert str(info.value) == 'expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z, got "say \\"when\\" now"'


def test_spec_error_example() -> None:
    with pytest.raises(TimestampError, match="^" + STORED_MESSAGE.format("2026-04-10 09:00") + "$"):
        parse_timestamp("2026-04-10 09:00")


@pytest.mark.parametrize(
    ("raw", "since", "until"),
    [
        ("2026-04-10", "2026-04-10T00:00:00Z", "2026-04-10T23:59:59.999999Z"),
        ("2024-02-29", "2024-02-29T00:00:00Z", "2024-02-29T23:59:59.999999Z"),
        ("0001-01-01", "0001-01-01T00:00:00Z", "0001-01-01T23:59:59.999999Z"),
        ("9999-12-31", "9999-12-31T00:00:00Z", "9999-12-31T23:59:59.999999Z"),
    ],
)
def test_bound_dates(raw: str, since: str, until: str) -> None:
    assert render(parse_bound(raw, "since")) == since
    assert render(parse_bound(raw, "until")) == until


@pytest.mark.parametrize("raw", ["2026-02-30", "2026-4-10", "0000-01-01", "2026-04-10Z", "2026/04/10"])
def test_bad_bound_dates(raw: str) -> None:
    with pytest.raises(TimestampError, match="or a date such as"):
        parse_bound(raw, "until")


def test_bound_side_is_checked() -> None:
    with pytest.raises(ValueError, match="side"):
        parse_bound("2026-04-10", "before")  # type: ignore[arg-type]


@pytest.mark.parametrize("micros", [MIN_INSTANT - 1, MAX_INSTANT + 1])
def test_render_refuses_unrepresentable_instants(micros: int) -> None:
    with pytest.raises(ValueError):
        render(micros)


INSTANTS = st.integers(min_value=MIN_INSTANT, max_value=MAX_INSTANT)


@given(INSTANTS)
def test_round_trip(micros: int) -> None:
    text = render(micros)
    assert parse_timestamp(text) == micros
    assert render(parse_timestamp(text)) == text
    assert normalize_timestamp(text) == text


@given(INSTANTS)
def test_render_matches_datetime(micros: int) -> None:
    iso = (datetime.datetime.min + datetime.timedelta(microseconds=micros - MIN_INSTANT)).isoformat()
    assert render(micros) == (iso.rstrip("0") if "." in iso else iso) + "Z"


@given(
    st.datetimes(min_value=datetime.datetime(2, 1, 1), max_value=datetime.datetime(9998, 12, 31)),
    st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59),
    st.integers(min_value=0, max_value=999),
    st.integers(min_value=0, max_value=3),
    st.booleans(),
)
def test_parse_matches_datetime_oracle(
    local: datetime.datetime, offset_minutes: int, nanos: int, extra_digits: int, lowercase: bool
) -> None:
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    fraction = f"{local.microsecond:06d}{nanos:03d}"[: 6 + extra_digits]
    text = f"{local.year:04d}-{local:%m-%dT%H:%M:%S}.{fraction}{sign}{hours:02d}:{minutes:02d}"
    if lowercase:
        text = text.replace("T", "t")
    aware = local.replace(tzinfo=datetime.timezone(datetime.timedelta(minutes=offset_minutes)))
    assert parse_timestamp(text) == micros_of(aware)
