"""Canonical JSON encoding and the strict JSON reader shared by every boundary."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

import orjson

from harness.text.sanitize import echo

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# int64 has at most 19 digits; checking the length first also keeps int() away from its
# 4,300-digit limit, whose ValueError would otherwise escape as a non-JSON error.
_INT64_MAX_DIGITS = 19
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# orjson reads an integer outside 64 bits as a float where json reads it exactly; every such integer has 19 digits or
# more (docs/decisions.md, "JSON through orjson"). A line is mapped to digits as 0 and all else as a space and searched
# for 19 zeros: two C passes, a tenth of the cost of a regex search for the run.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_NINETEEN_DIGITS = b"0" * 19
# A cheap pre-check: a lone surrogate can only come from a \uD800-\uDFFF escape or a surrogate already in the text.
_MAYBE_SURROGATE = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]")


def dumps(obj: Any) -> str:
    """Canonical JSON text: sorted keys, no spaces, non-ASCII kept, NaN refused."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def loads_line(line: bytes) -> Any:
    """A stored line as `json.loads` reads it, parsed by orjson (a quarter of the time) wherever that gives the same
    value: a line that holds a run of 19 digits, or that orjson refuses (a lone surrogate, NaN, a number past a
    double), goes to json (docs/decisions.md, "JSON through orjson")."""
    if _NINETEEN_DIGITS not in line.translate(_DIGITS_AS_ZERO):
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line)


def dumps_bytes(obj: Any) -> bytes:
    """Canonical JSON as UTF-8 bytes."""
    return dumps(obj).encode("utf-8")


def pretty(obj: Any) -> str:
    """Indented JSON for humans (`--pretty`): sorted keys, two spaces, non-ASCII kept."""
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)


class StrictJSONError(ValueError):
    """Raised by `loads_strict`; the message names the problem and, where known, its JSON path."""


class _DuplicateKeyObject(dict[str, Any]):
    """An object that held a duplicate key; kept only until the path of the first one is found."""

    duplicate: str


def _refuse_constant(name: str) -> Any:
    raise StrictJSONError(f"the constant {name} is not allowed")


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise StrictJSONError(f"number {echo(text)} overflows to infinity")
    return value


def _parse_int(text: str) -> int:
    if len(text) - text.startswith("-") <= _INT64_MAX_DIGITS:
        value = int(text)
        if _INT64_MIN <= value <= _INT64_MAX:
            return value
    raise StrictJSONError(f"integer {echo(text)} is outside the signed 64-bit range")


class _DuplicateKeyTracker:
    """Per-call object hook; the json hooks run bottom-up and cannot know their path, so objects
    with a duplicate key are marked and the path of the first one is found after parsing."""

    def __init__(self) -> None:
        self.found = False

    def pairs_hook(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) == len(pairs):
            return out
        self.found = True
        marked = _DuplicateKeyObject(pairs)
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                marked.duplicate = key
                break
            seen.add(key)
        return marked


def _path_step(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{echo(key)}]"


def _walk(value: Any, path: str = "$") -> Iterator[tuple[str, Any]]:
    """Every node with its JSON path, in document order (pre-order)."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        node_path, node = stack.pop()
        yield node_path, node
        if isinstance(node, dict):
            children = [(_path_step(node_path, k), v) for k, v in node.items()]
        elif isinstance(node, list):
            children = [(_path_step(node_path, i), v) for i, v in enumerate(node)]
        else:
            continue
        stack.extend(reversed(children))


def _has_surrogate(s: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in s)


def _check_duplicates(value: Any) -> None:
    # An object overwritten through its parent's duplicate key is unreachable, but that parent
    # is marked itself, so the walk always finds a marked object.
    for path, node in _walk(value):
        if isinstance(node, _DuplicateKeyObject):
            raise StrictJSONError(f"duplicate key {echo(node.duplicate)} at {path}")


def _check_surrogates(value: Any) -> None:
    for path, node in _walk(value):
        if isinstance(node, str) and _has_surrogate(node):
            raise StrictJSONError(f"string at {path} contains a lone surrogate, which UTF-8 cannot encode")
        if isinstance(node, dict):
            for key in node:
                if _has_surrogate(key):
                    raise StrictJSONError(f"key at {path} contains a lone surrogate, which UTF-8 cannot encode")


def loads_strict(text: str | bytes, max_depth: int | None = None) -> Any:
    """Parse JSON refusing duplicate keys, NaN/Infinity, overflowing numbers, int64 overflow and lone surrogates.

    Bytes must be strict UTF-8. `max_depth` bounds nesting (objects and arrays); None means no bound
    beyond the interpreter's recursion limit.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"invalid UTF-8 at byte {exc.start}") from exc
    duplicates = _DuplicateKeyTracker()
    try:
        value = json.loads(
            text,
            object_pairs_hook=duplicates.pairs_hook,
            parse_constant=_refuse_constant,
            parse_float=_parse_float,
            parse_int=_parse_int,
        )
    except StrictJSONError:
        raise
    except RecursionError as exc:
        limit = "too deep" if max_depth is None else f"deeper than {max_depth} levels"
        raise StrictJSONError(f"nesting is {limit}") from exc
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    if duplicates.found:
        _check_duplicates(value)
    if _MAYBE_SURROGATE.search(text):
        _check_surrogates(value)
    if max_depth is not None and depth(value) > max_depth:
        raise StrictJSONError(f"nesting is deeper than {max_depth} levels")
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


def json_type(value: Any) -> str:
    """The JSON type of a value, with its article: the one vocabulary of every "expected X, got Y" message
    (JSON, TOML and YAML inputs alike; a TOML table and a YAML mapping are "an object", a list "an array").
    Integers and other numbers are told apart, as JSON Schema's integer and number are."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a non-JSON {type(value).__name__}"
