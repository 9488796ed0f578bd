"""The get_raw_event payload cap (docs/investigate.md §9.5 step 4): staged, visible truncation to a byte budget.

Pure. Every leaf is measured once; container sizes are sums of their parts, and each stage updates the running
total by the bytes it removed, so the payload is never re-serialized to learn whether it fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

MAX_PAYLOAD_BYTES = 65_536
LEAF_CAPS: tuple[int, ...] = (4096, 2048, 1024, 512, 256, 128, 64)
LEAF_MARKER = "...[truncated]"
PRUNE_OVER_BYTES = 1024
FIELDS_KEY = "_truncated"

LEAF_TRUNCATION = "leaf truncation"
ARRAY_CAPPING = "array capping"
SUBTREE_PRUNING = "subtree pruning"
WHOLE_PAYLOAD = "whole-payload replacement"


@dataclass(frozen=True)
class Capped:
    """The payload within the budget, the stages that changed something (in stage order), and its size."""

    payload: Any
    stages: tuple[str, ...]
    size: int


def _utf8(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-8"))


def _text_size(s: str) -> int:
    """Canonical JSON size of a string, quotes and escapes included."""
    return _utf8(encode_basestring(s))


def _scalar_size(value: Any) -> int:
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, int):
        return len(int.__repr__(value))
    return len(float.__repr__(value))


def _container_size(parts_total: int, count: int) -> int:
    """Brackets, the parts, and one comma between consecutive parts."""
    return 2 + parts_total + max(count - 1, 0)


def _items_marker(more: int) -> str:
    return f"[TRUNCATED: {more} more items]"


def _cut(s: str, cap: int) -> str:
    # "ignore" only drops a code point split by the byte cut: the prefix itself is valid UTF-8.
    return s.encode("utf-8")[:cap].decode("utf-8", "ignore") + LEAF_MARKER


class _Measure:
    """One walk: the whole size, and each string longer than the smallest leaf cap with its sizes."""

    def __init__(self, payload: Any) -> None:
        self.long: list[tuple[str, int, int]] = []
        self.total = self._size(payload)

    def _size(self, node: Any) -> int:
        if isinstance(node, str):
            size = _text_size(node)
            if size > LEAF_CAPS[-1]:
                length = _utf8(node)
                if length > LEAF_CAPS[-1]:
                    self.long.append((node, length, size))
            return size
        if isinstance(node, dict):
            inner = sum(_text_size(key) + 1 + self._size(value) for key, value in node.items())
            return _container_size(inner, len(node))
        if isinstance(node, list):
            return _container_size(sum(self._size(value) for value in node), len(node))
        return _scalar_size(node)

    def after_cut(self, cap: int) -> int:
        """The whole size once every string over `cap` bytes is cut to `cap`."""
        saved = sum(size - _text_size(_cut(s, cap)) for s, length, size in self.long if length > cap)
        return self.total - saved

    def cuts_any(self, cap: int) -> bool:
        return any(length > cap for _, length, _ in self.long)


def _array_head(sizes: list[int], budget: int) -> int:
    """The longest head of items that fits in `budget` together with the items marker."""
    best, kept = 0, 0
    for count in range(len(sizes) + 1):
        if count:
            kept += sizes[count - 1]
        more = len(sizes) - count
        size = _container_size(kept + (_text_size(_items_marker(more)) if more else 0), count + (1 if more else 0))
        if size <= budget:
            best = count
        elif 2 + kept > budget:
            break
    return best


class _Build:
    """Rebuilds the tree with leaves cut to `leaf_cap`, capping over-budget arrays innermost first while the
    running total is over budget."""

    def __init__(self, leaf_cap: int, total: int, budget: int) -> None:
        self.leaf_cap = leaf_cap
        self.total = total
        self.budget = budget
        self.capped_arrays = False

    def node(self, node: Any) -> tuple[Any, int]:
        if isinstance(node, str):
            if _utf8(node) > self.leaf_cap:
                node = _cut(node, self.leaf_cap)
            return node, _text_size(node)
        if isinstance(node, dict):
            members = self.members(node)
            inner = sum(_text_size(key) + 1 + size for key, (_, size) in members.items())
            return {key: value for key, (value, _) in members.items()}, _container_size(inner, len(members))
        if isinstance(node, list):
            items = [self.node(value) for value in node]
            return self.array([value for value, _ in items], [size for _, size in items])
        return node, _scalar_size(node)

    def members(self, node: dict[str, Any]) -> dict[str, tuple[Any, int]]:
        # Key order is the canonical serialization order, so which arrays a stop leaves alone is well defined.
        return {key: self.node(node[key]) for key in sorted(node)}

    def array(self, items: list[Any], sizes: list[int]) -> tuple[list[Any], int]:
        size = _container_size(sum(sizes), len(items))
        if self.total <= self.budget or size <= self.budget:
            return items, size
        head, new_size = cap_array(items, sizes, self.budget)
        self.total -= size - new_size
        self.capped_arrays = True
        return head, new_size


def cap_array(items: list[Any], sizes: list[int], budget: int) -> tuple[list[Any], int]:
    """Keep the longest head of `items` that fits in `budget` with a final `[TRUNCATED: <n> more items]`."""
    count = _array_head(sizes, budget)
    more = len(items) - count
    if not more:
        return items, _container_size(sum(sizes), len(items))
    marker = _items_marker(more)
    return [*items[:count], marker], _container_size(sum(sizes[:count]) + _text_size(marker), count + 1)


def _prune_members(members: dict[str, tuple[Any, int]], total: int, budget: int) -> int:
    """Replace the largest member values over 1,024 bytes (ties: smallest key) by a size marker until it fits."""
    for key in sorted(members, key=lambda k: (-members[k][1], k)):
        size = members[key][1]
        if total <= budget or size <= PRUNE_OVER_BYTES:
            break
        marker = f"[TRUNCATED: ~{size} bytes]"
        members[key] = (marker, _text_size(marker))
        total -= size - members[key][1]
    return total


def _fields_marker(more: int) -> str:
    return f"[TRUNCATED: {more} more fields]"


def _member_run(members: dict[str, tuple[Any, int]], budget: int) -> tuple[dict[str, Any], int]:
    """The longest run of members in key order that fits with a `_truncated` member counting the rest.

    When not even the bare marker fits, it is returned anyway and the caller replaces the whole payload.
    """
    # An existing `_truncated` member would be overwritten by the marker, so it counts among the dropped fields.
    keys = sorted(key for key in members if key != FIELDS_KEY)
    marker_member = _text_size(FIELDS_KEY) + 1

    def size_with(count: int, kept: int) -> int:
        return _container_size(kept + marker_member + _text_size(_fields_marker(len(members) - count)), count + 1)

    best, best_size, kept = 0, size_with(0, 0), 0
    for count in range(1, len(keys) + 1):
        key = keys[count - 1]
        kept += _text_size(key) + 1 + members[key][1]
        if 2 + kept > budget:
            break
        size = size_with(count, kept)
        if size <= budget:
            best, best_size = count, size
    out = {key: members[key][0] for key in keys[:best]}
    out[FIELDS_KEY] = _fields_marker(len(members) - best)
    return out, best_size


def cap_payload(payload: Any, budget: int = MAX_PAYLOAD_BYTES) -> Capped:
    """Fit `payload` in `budget` bytes of canonical JSON through the four stages of docs/investigate.md §9.5 step 4."""
    measure = _Measure(payload)
    if measure.total <= budget:
        return Capped(payload, (), measure.total)
    stages: list[str] = []

    leaf_cap, total = LEAF_CAPS[-1], measure.after_cut(LEAF_CAPS[-1])
    for cap in LEAF_CAPS[:-1]:
        size = measure.after_cut(cap)
        if size <= budget:
            leaf_cap, total = cap, size
            break
    if measure.cuts_any(leaf_cap):
        stages.append(LEAF_TRUNCATION)

    # A root array over budget is capped here like any other, so only a root object reaches pruning.
    build = _Build(leaf_cap, total, budget)
    members = build.members(payload) if isinstance(payload, dict) else {}
    result = (
        {key: value for key, (value, _) in members.items()} if isinstance(payload, dict) else build.node(payload)[0]
    )
    if build.capped_arrays:
        stages.append(ARRAY_CAPPING)
    total = build.total

    if total > budget and isinstance(payload, dict):
        total = _prune_members(members, total, budget)
        if total > budget:
            result, total = _member_run(members, budget)
        else:
            result = {key: value for key, (value, _) in members.items()}
        stages.append(SUBTREE_PRUNING)

    if total > budget:
        result = f"[TRUNCATED: ~{measure.total} bytes]"
        total = _text_size(result)
        stages.append(WHOLE_PAYLOAD)
    return Capped(result, tuple(stages), total)
