"""Scalar rendering for EventView metadata (docs/investigate.md §1.4)."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.text.sanitize import sanitize_field
from harness.text.scalars import render_scalar


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("web-01", "web-01"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (847, "847"),
        (-12, "-12"),
        (9223372036854775807, "9223372036854775807"),
        (847.0, "847"),
        (1e20, "100000000000000000000"),
        (-0.0, "0"),
        (0.0, "0"),
        (-3.0, "-3"),
        (0.5, "0.5"),
        (1e-07, "0.0000001"),
        (-2.5e-05, "-0.000025"),
        (123456.789, "123456.789"),
        (0.1, "0.1"),
        (1e23, "100000000000000000000000"),  # shortest digits, not the binary value 99999999999999991611392
    ],
)
def test_rendered(value: object, expected: str) -> None:
    assert render_scalar(value) == expected


@pytest.mark.parametrize("value", [None, {}, {"a": 1}, [], ["a"], "", math.nan, math.inf, -math.inf])
def test_not_rendered(value: object) -> None:
    assert render_scalar(value) is None


def test_bool_is_not_rendered_as_int() -> None:
    assert render_scalar(True) != "1" and render_scalar(False) != "0"


def test_strings_are_not_sanitized_here() -> None:
    raw = " web-01\nprod\u200b "
    assert render_scalar(raw) == raw
    assert sanitize_field(render_scalar(raw) or "") == "web-01 prod"


def test_whitespace_only_string_is_rendered_then_sanitized_to_empty() -> None:
    assert render_scalar("  ") == "  "
    assert sanitize_field("  ") == ""


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_rendering_round_trips_without_exponent(value: float) -> None:
    out = render_scalar(value)
    assert out is not None
    assert "e" not in out.lower()
    assert float(out) == value or (value == 0 and out == "0")
    if value.is_integer():
        assert "." not in out
    else:
        # The shortest round-trip digits of repr, spelled out.
        assert Decimal(out) == Decimal(repr(value))


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_integers_render_as_json_digits(value: int) -> None:
    assert render_scalar(value) == json.dumps(value)
