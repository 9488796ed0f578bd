"""Ledger identifiers (docs/ledger.md §3): the id grammars, UUIDv7 row ids and id normalization."""

from __future__ import annotations

import hashlib
import re
import secrets
import time
import uuid
from collections.abc import Callable

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
TOOL_NAME_RE = re.compile(r"[a-z_][a-z0-9_.]{0,63}")

_MS_MASK = (1 << 48) - 1
_RAND_B_MASK = (1 << 62) - 1


def uuid7(unix_ms: int | None = None) -> uuid.UUID:
    """A UUIDv7: 48-bit big-endian Unix milliseconds, version 7, 12 random bits, variant 10, 62 random bits."""
    ms = (time.time_ns() // 1_000_000 if unix_ms is None else unix_ms) & _MS_MASK
    # One draw of 74 random bits (12 for rand_a, 62 for rand_b): a single urandom call per id.
    rand = secrets.randbits(74)
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & _RAND_B_MASK)
    return uuid.UUID(int=value)


def is_id(value: object) -> bool:
    """True when `value` is a string matching the id grammar."""
    return isinstance(value, str) and ID_RE.fullmatch(value) is not None


def is_tool_name(value: object) -> bool:
    """True when `value` is a string matching the tool_name grammar."""
    return isinstance(value, str) and TOOL_NAME_RE.fullmatch(value) is not None


def _hashed(text: str) -> str:
    return "h-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def normalize_id_info(raw: str | int, redact: Callable[[str], str]) -> tuple[str, bool]:
    """`normalize_id` plus whether the value had to be hashed (meta records it as `+hashed`)."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise TypeError(f"an id is a string or an integer, not {type(raw).__name__}")
    text = str(raw) if isinstance(raw, int) else raw
    # An integer longer than the grammar allows is hashed like any other misfit: the mapping stays total.
    if ID_RE.fullmatch(text) is not None and redact(text) == text:
        return text, False
    return _hashed(text), True


def normalize_id(raw: str | int, redact: Callable[[str], str]) -> str:
    """An integer becomes its decimal string and a redaction-clean string in the grammar is kept; anything else
    becomes `h-` + the first 32 hex of its SHA-256."""
    return normalize_id_info(raw, redact)[0]


def session_conversation_id(session_id: str) -> str:
    """The stored conversation id of an MCP transport session: `sid-` + 32 hex of its SHA-256 (a bearer value)."""
    return "sid-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
