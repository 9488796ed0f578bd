"""The read API over one commit: filters, pages and id resolution, shared by the index and the replay oracle."""

from __future__ import annotations

import abc
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.errors import InternalError
from harness.store import resolve
from harness.store.baseline_model import Baseline
from harness.store.streams import encode_record, stream_spec
from harness.text.rfc3339 import MAX_INSTANT, parse_timestamp

# The sort instant of a record without a timestamp (findings may have none): after every real instant, so
# undated records come last, in stream order (docs/decisions.md, "Result order").
UNDATED = MAX_INSTANT + 1


def time_key(timestamp: str) -> int:
    """The instant a record sorts by in a result: its timestamp, or UNDATED when it has none."""
    return parse_timestamp(timestamp) if timestamp else UNDATED


@dataclass(frozen=True)
class RecordFilter:
    """Conjunctive filters of one query: whole values ignoring case (`""` = not given), resolved stored
    ids (None = no id filter; an empty set matches nothing) and an inclusive instant window. `target` and `ip`
    are the events' payload fields (store/eventfields.py)."""

    actor: str = ""
    source: str = ""
    type: str = ""
    target: str = ""
    ip: str = ""
    ids: frozenset[str] | None = None
    since: int | None = None
    until: int | None = None


@dataclass(frozen=True)
class Page:
    """The first records of a result in result order (oldest first, ties in stream order), and its full size."""

    records: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0


class StoreView(abc.ABC):
    """Everything a read operation needs from one commit of the store, HEAD at some instant of the call."""

    commit: str = ""

    @abc.abstractmethod
    def select(self, stream: str, flt: RecordFilter, limit: int) -> Page:
        """Records of a keyed stream matching `flt`: the oldest `limit` and the total.

        Result order is by `time_key` of the timestamp, ties (and undated records) in stream order.
        """

    @abc.abstractmethod
    def records(self, stream: str) -> Iterator[dict[str, Any]]:
        """Every record of a stream in stream order."""

    @abc.abstractmethod
    def stored_line(self, stream: str, key: str) -> bytes | None:
        """The canonical line stored under a lower-cased id, if any."""

    @abc.abstractmethod
    def latest_baseline(self) -> Baseline | None:
        """The last `baseline` record, or None."""

    def latest_baseline_digest(self) -> str | None:
        """The sha256 of the last `baseline` record's stored line, or None: what names it in the baseline index."""
        found = self.latest_baseline()
        if found is None:
            return None
        return hashlib.sha256(encode_record(stream_spec("baseline"), dict(found.record))[1]).hexdigest()

    @abc.abstractmethod
    def exact_id(self, stream: str, lowered: str) -> str | None:
        """The stored id whose lower-cased form is `lowered`, if any."""

    @abc.abstractmethod
    def prefix_ids(self, stream: str, prefixes: Sequence[str], show: int) -> tuple[int, list[str]]:
        """Count of stored ids (lower-cased) starting with any prefix, and the first `show` by lower-cased id."""

    def get(self, stream: str, stored_id: str) -> dict[str, Any] | None:
        """The record stored under `stored_id` (ignoring case), if any."""
        page = self.select(stream, RecordFilter(ids=frozenset([stored_id])), 1)
        return page.records[0] if page.records else None

    def resolve(self, stream: str, requested: str) -> tuple[str, ...]:
        """Stored ids one requested id resolves to (docs/investigate.md §8), literal candidate first; ambiguity is invalid_input."""
        return resolve.resolve_id(self, stream, _rules(stream), requested)

    def resolve_filter(self, stream: str, requested: Sequence[str]) -> frozenset[str] | None:
        """An `ids` filter resolved per docs/investigate.md §8: None when no non-empty entry was given."""
        return resolve.resolve_filter(self, stream, _rules(stream), requested)


def _rules(stream: str) -> resolve.IdRules:
    rules = stream_spec(stream).id_rules
    if not rules:
        raise InternalError(f"stream {stream!r} has no ids")
    return rules

