"""The replay oracle (docs/investigate.md §4 contract): every query evaluated in plain Python over decoded records.

Kept in the package so tests can compare each index result with a full replay of the same commit.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from harness.store.baseline_model import Baseline
from harness.store.eventfields import event_ip, event_target
from harness.store.git import Git
from harness.store.query import Page, RecordFilter, StoreView, time_key
from harness.store.reader import read_stream
from harness.store.streams import STREAMS, encode_record, stream_spec
from harness.text.casefold import ci_equal
from harness.text.rfc3339 import parse_timestamp


class ReplayView(StoreView):
    """A StoreView over records held in memory, in stream order."""

    def __init__(self, commit: str, streams: Mapping[str, list[dict[str, Any]]]) -> None:
        self.commit = commit
        self._streams = {name: list(streams.get(name, [])) for name in STREAMS}

    @staticmethod
    def _matches(record: dict[str, Any], flt: RecordFilter, ids: set[str] | None) -> bool:
        for name in ("actor", "source", "type"):
            wanted = getattr(flt, name)
            if wanted and not ci_equal(record[name], wanted):
                return False
        if flt.target and not ci_equal(event_target(record["payload"]), flt.target):
            return False
        if flt.ip and not ci_equal(event_ip(record["payload"]), flt.ip):
            return False
        if ids is not None and record["id"].lower() not in ids:
            return False
        if flt.since is None and flt.until is None:
            return True
        if not record["timestamp"]:
            return False
        instant = parse_timestamp(record["timestamp"])
        if flt.since is not None and instant < flt.since:
            return False
        return flt.until is None or instant <= flt.until

    def select(self, stream: str, flt: RecordFilter, limit: int) -> Page:
        ids = None if flt.ids is None else {stored.lower() for stored in flt.ids}
        matched = [record for record in self._streams[stream] if self._matches(record, flt, ids)]
        # sorted() is stable: records with the same instant keep their stream order.
        matched = sorted(matched, key=lambda record: time_key(record["timestamp"]))
        return Page(records=matched[:limit], total=len(matched))

    def records(self, stream: str) -> Iterator[dict[str, Any]]:
        return iter(self._streams[stream])

    def stored_line(self, stream: str, key: str) -> bytes | None:
        spec = stream_spec(stream)
        for record in self._streams[stream]:
            if record["id"].lower() == key:
                return encode_record(spec, record)[1]
        return None

    def latest_baseline(self) -> Baseline | None:
        baselines = self._streams["baseline"]
        return Baseline(record=baselines[-1], origin="store") if baselines else None

    def exact_id(self, stream: str, lowered: str) -> str | None:
        for record in self._streams[stream]:
            if record["id"].lower() == lowered:
                return str(record["id"])
        return None

    def prefix_ids(self, stream: str, prefixes: Sequence[str], show: int) -> tuple[int, list[str]]:
        found = {
            record["id"].lower(): record["id"]
            for record in self._streams[stream]
            if any(record["id"].lower().startswith(p) for p in prefixes)
        }
        return len(found), [found[key] for key in sorted(found)[:show]]


def replay(git: Git | None) -> ReplayView:
    """A full replay of every stream at HEAD (an empty view when the store does not exist)."""
    if git is None:
        return ReplayView("", {})
    commit = git.head_commit()
    return ReplayView(commit, {name: read_stream(git, commit, spec) for name, spec in STREAMS.items()})
