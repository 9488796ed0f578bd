"""Annotated field types for operation models: input sizes in UTF-8 bytes, object-input caps, echoed input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from harness.text.sanitize import sanitize_field


def _byte_bounds(min_bytes: int, max_bytes: int) -> AfterValidator:
    def check(value: str) -> str:
        size = len(value.encode("utf-8", "surrogatepass"))
        if size < min_bytes:
            raise ValueError("must not be empty" if min_bytes == 1 else f"must be at least {min_bytes} bytes")
        if size > max_bytes:
            raise ValueError(f"must be at most {max_bytes} bytes (UTF-8), got {size}")
        return value

    return AfterValidator(check)


def BoundedStr(max_bytes: int, *, min_bytes: int = 0) -> Any:  # noqa: N802 - reads as a type
    """A string whose UTF-8 size lies in [min_bytes, max_bytes]; never trimmed."""
    # The schema's maxLength counts characters, which a byte-bounded string never exceeds,
    # so the published schema is a safe superset of what the validator accepts.
    return Annotated[
        str,
        Field(min_length=min_bytes, max_length=max_bytes),
        _byte_bounds(min_bytes, max_bytes),
    ]


@dataclass(frozen=True)
class ObjectInput:
    """Marks an object-valued field; the CLI reads it as JSON or a file capped at `max_bytes`."""

    max_bytes: int = 1_048_576



# An output field that repeats caller input. It passes the sanitizer stored text passes (whitespace folded,
# control, bidi and zero-width characters dropped), applied when the output model is built, so no operation
# can hand an agent or a terminal its own escape sequences back.
Echoed = Annotated[str, AfterValidator(sanitize_field)]
