"""The format gate (docs/triage.md §3): refuse text outside a mode's character set, and `--` in prose."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

Mode = Literal["line", "prose_line", "prose_text", "document", "diff"]
PathSegment = str | int
JsonPath = tuple[PathSegment, ...]

MODES: tuple[Mode, ...] = ("line", "prose_line", "prose_text", "document", "diff")

# One compiled class per mode, so the scan runs inside the regex engine, not a Python loop.
_DISALLOWED: dict[Mode, re.Pattern[str]] = {
    "line": re.compile(r"[^\x20-\x7e]"),
    "prose_line": re.compile(r"[^\x20-\x7e]"),
    "prose_text": re.compile(r"[^\x20-\x7e\n]"),
    "document": re.compile(r"[^\x20-\x7e\n]"),
    "diff": re.compile(r"[^\x20-\x7e\n\t]"),
}
_PROSE_MODES = frozenset({"prose_line", "prose_text"})

# Equivalent to `(?<!\S)--(?!\S)|(?<=[A-Za-z])--(?=[A-Za-z])`, written with the literal first so
# the engine can jump between `--` occurrences instead of trying every position.
_DOUBLE_HYPHEN = re.compile(r"--(?:(?!\S)(?<!\S--)|(?=[A-Za-z])(?<=[A-Za-z]--))")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class FormatError(ValueError):
    """A string refused by the gate; the message is the spec's, with the JSON path and index."""

    def __init__(self, message: str, path: str, index: int) -> None:
        super().__init__(message)
        self.path = path
        self.index = index


def json_path(segments: JsonPath) -> str:
    """Render path segments as `$`, `.name`, `["key"]` and `[n]`."""
    parts = ["$"]
    for segment in segments:
        if isinstance(segment, int):
            parts.append(f"[{segment}]")
        elif _IDENTIFIER.fullmatch(segment):
            parts.append(f".{segment}")
        else:
            parts.append(f"[{json.dumps(segment)}]")
    return "".join(parts)


def _character_message(ch: str, index: int) -> str:
    if ch == "\u2014":
        return f'em dash U+2014 at index {index} is not allowed (use ":", ";", "," or parentheses)'
    if ch == "\u2013":
        return f'en dash U+2013 at index {index} is not allowed (use "-" or "to")'
    return f"character U+{ord(ch):04X} at index {index} is not allowed"


def violation(text: str, mode: Mode) -> tuple[int, str] | None:
    """The first violation of `mode` in `text` as (index, description), or None when it passes."""
    found = _DISALLOWED[mode].search(text)
    if found is not None:
        index = found.start()
        return index, _character_message(text[index], index)
    if mode in _PROSE_MODES:
        found = _DOUBLE_HYPHEN.search(text)
        if found is not None:
            index = found.start()
            return index, f'"--" sentence separator (U+002D U+002D) at index {index} is not allowed in prose'
    return None


def check(text: str, mode: Mode, path: JsonPath | str = ()) -> None:
    """Raise FormatError for the first violation of `mode` in `text`; `path` names it in the message."""
    found = violation(text, mode)
    if found is not None:
        rendered = path if isinstance(path, str) else json_path(path)
        raise FormatError(f"format gate: {rendered}: {found[1]}", rendered, found[0])


def check_tree(obj: Any, mode_for_path: Callable[[JsonPath], Mode | None]) -> None:
    """Gate every key (mode `line`) and string value, depth first, keys sorted, items in order.

    A path whose mode is None is not gated here: its value has a gate of its own (code-fix diffs).
    """
    # Stack entries are (path, node, is_key): a member's key is gated just before its value.
    stack: list[tuple[JsonPath, Any, bool]] = [((), obj, False)]
    while stack:
        path, node, is_key = stack.pop()
        if is_key:
            check(node, "line", path)
        elif isinstance(node, str):
            mode = mode_for_path(path)
            if mode is not None:
                check(node, mode, path)
        elif isinstance(node, Mapping):
            for key in sorted(node, reverse=True):
                child = (*path, key)
                stack.append((child, node[key], False))
                stack.append((child, key, True))
        elif isinstance(node, list):
            stack.extend(((*path, i), node[i], False) for i in range(len(node) - 1, -1, -1))


def cell(text: str) -> str:
    """A markdown table cell: `|` becomes `\\|` and each newline one space; nothing else changes."""
    return text.replace("|", "\\|").replace("\n", " ")
