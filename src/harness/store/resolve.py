"""Id resolution (docs/investigate.md §8): exact candidates, `finding-` rungs, then a unique-prefix stage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from harness.errors import InvalidInput
from harness.text.sanitize import echo

FINDING_PREFIX = "finding-"
MAX_RUNGS = 6
MIN_PREFIX_CODE_POINTS = 4
SHOWN_MATCHES = 10

IdRules = Literal["event", "finding"]


class IdSpace(Protocol):
    """The two lookups resolution needs over one stream's stored ids."""

    def exact_id(self, stream: str, lowered: str) -> str | None:
        """The stored id whose lower-cased form is `lowered`, if any."""

    def prefix_ids(self, stream: str, prefixes: Sequence[str], show: int) -> tuple[int, list[str]]:
        """How many distinct stored ids have a lower-cased form starting with any prefix, and the first
        `show` of them (stored spelling) ordered by lower-cased id."""


def candidates(rules: IdRules, lowered: str) -> list[str]:
    """Events: the id and the id without a leading `finding-`; findings: the id and `finding-` + id."""
    if rules == "finding":
        found = [lowered, FINDING_PREFIX + lowered]
    else:
        found = [lowered]
        if lowered.startswith(FINDING_PREFIX):
            found.append(lowered[len(FINDING_PREFIX) :])
    return list(dict.fromkeys(c for c in found if c))


def rungs(stripped: str) -> list[str]:
    """Cut the last `-segment` off, up to 6 times while a `-` remains after position 0, longest first."""
    out: list[str] = []
    current = stripped
    while len(out) < MAX_RUNGS:
        cut = current.rfind("-")
        if cut <= 0:
            break
        current = current[:cut]
        out.append(current)
    return out


def ambiguity(requested: str, count: int, shown: Sequence[str]) -> InvalidInput:
    """The error for a prefix matching several stored ids."""
    more = f" (showing first {SHOWN_MATCHES})" if count > SHOWN_MATCHES else ""
    listed = ", ".join(shown)
    return InvalidInput(
        f"id {echo(requested)} is ambiguous: prefix matches {count} stored ids{more}: {listed}. "
        "Supply a longer prefix or the exact id."
    )


def resolve_id(space: IdSpace, stream: str, rules: IdRules, requested: str) -> tuple[str, ...]:
    """The stored ids `requested` resolves to, the literal candidate's hit first; () when nothing does."""
    lowered = requested.lower()
    tried = candidates(rules, lowered)
    hits = [hit for c in tried if (hit := space.exact_id(stream, c)) is not None]
    if hits:
        return tuple(dict.fromkeys(hits))
    ladder = rungs(lowered[len(FINDING_PREFIX) :]) if rules == "event" and lowered.startswith(FINDING_PREFIX) else []
    for rung in ladder:
        hit = space.exact_id(stream, rung)
        if hit is not None:
            return (hit,)
    if len(requested) < MIN_PREFIX_CODE_POINTS:
        return ()
    count, shown = space.prefix_ids(stream, [*tried, *ladder], SHOWN_MATCHES)
    if count == 1:
        return (shown[0],)
    if count > 1:
        raise ambiguity(requested, count, shown)
    return ()


def resolve_filter(space: IdSpace, stream: str, rules: IdRules, requested: Sequence[str]) -> frozenset[str] | None:
    """An `ids` filter: None when inactive (no non-empty entry), else the stored ids resolved (maybe none)."""
    wanted = [r for r in requested if r]
    if not wanted:
        return None
    return frozenset(hit for r in wanted for hit in resolve_id(space, stream, rules, r))
