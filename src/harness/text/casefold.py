"""Key-casing normalization (docs/investigate.md §1.1): `EventType`, `event-type`, `EVENT_TYPE` all mean `event_type`."""

from __future__ import annotations

import enum
import functools
import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Final, Literal

from harness.text.sanitize import echo

_SEPARATORS = frozenset("-_ ")
# Keys already in normal form (the common case at ingest) skip the per-code-point walk.
_ALREADY_NORMAL = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*_?")


class _Missing(enum.Enum):
    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"

    __str__ = __repr__


MISSING: Final = _Missing.MISSING
"""Returned by `lookup` when no key matches; distinct from every JSON value, `None` included."""


class KeyCollisionError(ValueError):
    """Two top-level keys of one record normalize to the same name."""


# Records repeat a few keys many times: a 2,000-event result normalizes some 12,000 keys (docs/decisions.md).
@functools.lru_cache(maxsize=4096)
def normalize_key(key: str) -> str:
    """The snake_case form of a key: case boundaries and `-`/space become one `_`, acronym runs stay whole."""
    if _ALREADY_NORMAL.fullmatch(key):
        return key
    return _normalize_walk(key)


def _normalize_walk(key: str) -> str:
    out: list[str] = []
    after_lower_or_digit = False
    for ch in key:
        if ch in _SEPARATORS:
            if out and out[-1] != "_":
                out.append("_")
            after_lower_or_digit = False
            continue
        category = unicodedata.category(ch)
        lowered = ch.lower()
        # An uppercase letter with no lowercase form (mathematical capitals) stays as it is, so it
        # must read like any other letter, or a second pass would see "lower then upper" and split.
        if category == "Lu" and lowered != ch:
            # The flag is only on right after a letter or digit was appended, which also means
            # "not the first code point" and "output does not end in _".
            if after_lower_or_digit:
                out.append("_")
            out.append(lowered)
            after_lower_or_digit = False
        else:
            out.append(lowered)
            after_lower_or_digit = category[0] == "L" or category == "Nd"
    return "".join(out)


def normalize_record_keys(obj: dict[str, Any]) -> dict[str, Any]:
    """Rewrite the top-level keys only, keeping order and values; refuse two keys that normalize alike."""
    seen: dict[str, str] = {}
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = normalize_key(key)
        if name in seen:
            raise KeyCollisionError(f"keys {echo(seen[name])} and {echo(key)} both normalize to {echo(name)}")
        seen[name] = key
        out[name] = value
    return out


def ci_key(s: str) -> str:
    """The form in which strings compare ignoring case: two strings are ci-equal when their keys are equal.

    `str.lower` on both sides, never `casefold()`: `"STRASSE"` and `"straße"` stay different.
    """
    return s.lower()


def ci_equal(a: str, b: str) -> bool:
    """`a` and `b` are equal ignoring case (see ci_key)."""
    return ci_key(a) == ci_key(b)


def lookup(obj: Mapping[str, Any], name: str) -> Any | Literal[_Missing.MISSING]:
    """Value of key `name`, else of the first key (in the object's order) normalizing to `name`, else MISSING."""
    if name in obj:
        return obj[name]
    for key, value in obj.items():
        if normalize_key(key) == name:
            return value
    return MISSING
