"""Rendering JSON scalars as display strings (docs/investigate.md §1.4), for EventView metadata."""

from __future__ import annotations

import decimal
import math
from typing import Any


def render_scalar(value: Any) -> str | None:
    """Display string of a JSON scalar, or None when it is not rendered (null, containers, "", non-finite).

    The result is not sanitized yet: the caller applies sanitize_field.
    """
    if isinstance(value, str):
        return value or None
    # bool before int: True is an int in Python but renders as "true".
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value == 0:
            return "0"
        # repr gives the shortest round-trip digits (1e23 stays 1 followed by zeros, not the binary
        # value's 99999999999999991611392); Decimal's "f" format spells out any exponent.
        digits = decimal.Decimal(repr(value))
        return format(digits.to_integral_value() if value.is_integer() else digits, "f")
    return None
