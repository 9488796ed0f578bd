"""Canonical JSON encoding and the strict JSON reader shared by every boundary."""

from __future__ import annotations

import json
from typing import Any

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def dumps(obj: Any) -> str:
    """Canonical JSON text: sorted keys, no spaces, non-ASCII kept, NaN refused."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def dumps_bytes(obj: Any) -> bytes:
    """Canonical JSON as UTF-8 bytes."""
    return dumps(obj).encode("utf-8")


def pretty(obj: Any) -> str:
    """Indented JSON for humans (`--pretty`): sorted keys, two spaces, non-ASCII kept."""
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)


class StrictJSONError(ValueError):
    """Raised by `loads_strict`; the message names the problem and, where known, its JSON path."""


def _refuse_constant(name: str) -> Any:
    raise StrictJSONError(f"the constant {name} is not allowed")


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise StrictJSONError(f"number {text} overflows")
    return value


def _parse_int(text: str) -> int:
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise StrictJSONError(f"integer {text} is outside the signed 64-bit range")
    return value


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f'duplicate key "{key}"')
        out[key] = value
    return out


def loads_strict(text: str, *, max_depth: int | None = None) -> Any:
    """Parse JSON refusing duplicate keys, NaN/Infinity, overflowing numbers and int64 overflow.

    `max_depth` bounds nesting (objects and arrays); None means no bound beyond Python's own.
    """
    try:
        value = json.loads(
            text,
            object_pairs_hook=_pairs_hook,
            parse_constant=_refuse_constant,
            parse_float=_parse_float,
            parse_int=_parse_int,
        )
    except StrictJSONError:
        raise
    except RecursionError as exc:
        raise StrictJSONError("nesting is too deep") from exc
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    if max_depth is not None and depth(value) > max_depth:
        raise StrictJSONError(f"nesting deeper than {max_depth} levels")
    return value


def depth(value: Any) -> int:
    """Nesting depth of a JSON value: scalars 0, an empty or flat container 1."""
    best = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            level += 1
            stack.extend((v, level) for v in node.values())
        elif isinstance(node, list):
            level += 1
            stack.extend((v, level) for v in node)
        best = max(best, level)
    return best
