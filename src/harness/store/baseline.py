"""Baselines (docs/investigate.md §6): derive one from the stored events, merge it with the last, load files."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from harness import files
from harness.errors import InvalidInput
from harness.store.baseline_index import EntityIndex, index_baseline
from harness.store.baseline_model import SCHEMA_VERSION, Baseline, decode_baseline
from harness.store.eventfields import event_target
from harness.store.models import RecordError
from harness.store.streams import encode_record, stream_spec
from harness.text.canonjson import StrictJSONError, loads_strict
from harness.text.casefold import MISSING, lookup
from harness.text.geo import geo_code
from harness.text.rfc3339 import parse_timestamp
from harness.text.sanitize import sanitize_field

if TYPE_CHECKING:
    from harness.store.backend import EventStore

MAX_BASELINE_BYTES = 32 * 1024 * 1024
_US_PER_HOUR = 3_600_000_000

CREATED_TYPES = frozenset({"service_principal_created", "user_created", "member_added", "user_provisioned"})
ROLE_TYPES = frozenset(
    {"role_assignment", "collaborator_added", "permission_change", "admin_action", "member_added", "iam_change"}
)
BOUNDARY_ACTIONS = (
    "deleterolepermissionsboundary",
    "deleteuserpermissionsboundary",
    "putrolepermissionsboundary",
    "putuserpermissionsboundary",
)
NOT_ELEVATED_PREFIXES = ("remove", "revoke", "delete_role")
ELEVATED_WORDS = ("admin", "owner", "write", "contributor", "maintainer", "editor", "fullcontrol", "poweruser")
_ACTION_SEPARATORS = str.maketrans("", "", "_-. ")


def event_meta(payload: Any) -> Mapping[str, Any] | None:
    """`lookup(payload, "metadata")` when an object, else the payload when an object, else None."""
    if not isinstance(payload, dict):
        return None
    nested = lookup(payload, "metadata")
    return nested if isinstance(nested, dict) else payload


def first_string(meta: Mapping[str, Any] | None, *keys: str) -> str | None:
    """The first key (by lookup) whose value is a string non-empty after strip(), sanitized; else None."""
    if meta is None:
        return None
    for key in keys:
        value = lookup(meta, key)
        if isinstance(value, str) and value.strip():
            return sanitize_field(value)
    return None


def _elevated(kind: str, meta: Mapping[str, Any] | None, role: str) -> bool:
    if kind == "admin_action":
        return True
    action = lookup(meta, "action") if meta is not None else MISSING
    lowered = action.lower() if isinstance(action, str) else ""
    if any(name in lowered.translate(_ACTION_SEPARATORS) for name in BOUNDARY_ACTIONS):
        return True
    if lowered.startswith(NOT_ELEVATED_PREFIXES):
        return False
    return any(word in role.lower() for word in ELEVATED_WORDS)


@dataclass
class _Profile:
    ips: set[str] = field(default_factory=set)
    geos: set[str] = field(default_factory=set)
    last: tuple[int, str] | None = None


@dataclass
class _Seen:
    count: int = 0
    first: tuple[int, str] | None = None
    last: tuple[int, str] | None = None

    def add(self, instant: int, timestamp: str) -> None:
        self.count += 1
        if self.first is None or instant < self.first[0]:
            self.first = (instant, timestamp)
        if self.last is None or instant > self.last[0]:
            self.last = (instant, timestamp)


def _later_seen(seen: tuple[int, str] | None, instant: int, timestamp: str) -> tuple[int, str]:
    return (instant, timestamp) if seen is None or instant > seen[0] else seen


def build(events: Iterable[Mapping[str, Any]], built_from_commit: str) -> tuple[dict[str, Any], int]:
    """A fresh baseline record from events in stream order (docs/investigate.md §6.1), and how many events were read."""
    actors: set[str] = set()
    created: set[str] = set()
    frequency: Counter[str] = Counter()
    hours: defaultdict[str, set[int]] = defaultdict(set)
    users: defaultdict[str, _Profile] = defaultdict(_Profile)
    roles: defaultdict[str, set[str]] = defaultdict(set)
    related: defaultdict[str, _Seen] = defaultdict(_Seen)
    count = 0
    for event in events:
        count += 1
        kind = event["type"].lower()
        meta = event_meta(event["payload"])
        if kind in CREATED_TYPES:
            # target_user before principal_id: a vendor record's principal_id is its caller's id, not the account made.
            principal = first_string(meta, "display_name", "target_user", "principal_id", "member", "new_principal")
            if principal is not None:
                created.add(principal)
                actors.add(principal)
        actor = event["actor"]
        if not actor:
            continue
        actors.add(actor)
        frequency[f"{event['source']}:{event['type']}:{actor}"] += 1
        instant = parse_timestamp(event["timestamp"])
        hours[actor].add(instant // _US_PER_HOUR % 24)
        # Any activity of the actor is its last_seen, not only its logins.
        profile = users[actor]
        profile.last = _later_seen(profile.last, instant, event["timestamp"])
        target = event_target(event["payload"])
        target = sanitize_field(target) if target.strip() else ""
        if target:
            related[f"{actor}:{target}"].add(instant, event["timestamp"])
        if kind == "login":
            ip = first_string(meta, "ip", "source_ip", "client_ip")
            geo = first_string(meta, "geo", "location", "region")
            profile.ips.update([ip] if ip is not None else [])
            profile.geos.update([geo_code(geo)] if geo is not None else [])
        if kind in ROLE_TYPES:
            role = first_string(meta, "role", "role_name", "permission", "permission_level")
            if role is not None and _elevated(kind, meta, role):
                # The grantee: the user acted on, else the resource (a role, group or repository), else the principal.
                grantee = first_string(meta, "target_user") or target or first_string(meta, "principal_id") or ""
                roles[actor].add(f"{role.lower()}:{grantee.lower()}")
    record = {
        "schema_version": SCHEMA_VERSION,
        "built_from_commit": built_from_commit,
        "known_users": {
            actor: {
                "known_ips": sorted(p.ips),
                "known_geos": sorted(p.geos),
                "last_seen": p.last[1] if p.last is not None else "",
            }
            for actor, p in users.items()
        },
        "known_actors": sorted(actors),
        "known_created_entities": sorted(created),
        "frequency_tables": dict(frequency),
        "actor_hours": {actor: sorted(h) for actor, h in hours.items()},
        "actor_roles": {actor: sorted(r) for actor, r in roles.items()},
        "relationships": {
            key: {
                "count": seen.count,
                "first_seen": seen.first[1] if seen.first is not None else "",
                "last_seen": seen.last[1] if seen.last is not None else "",
            }
            for key, seen in related.items()
        },
    }
    return record, count


def _later(a: str, b: str) -> str:
    """The later of two normalized timestamps; "" is earliest."""
    if not a or not b:
        return a or b
    return a if parse_timestamp(a) >= parse_timestamp(b) else b


def _union(a: Iterable[Any], b: Iterable[Any]) -> list[Any]:
    return sorted({*a, *b})


def _union_maps(a: Mapping[str, list[Any]], b: Mapping[str, list[Any]]) -> dict[str, list[Any]]:
    return {key: _union(a.get(key, []), b.get(key, [])) for key in {*a, *b}}


def merge(previous: Mapping[str, Any], fresh: Mapping[str, Any]) -> dict[str, Any]:
    """Merge two baseline records (docs/investigate.md §6.2): unions, maxima, widest seen ranges; the fresh build's commit."""
    empty_profile = {"known_ips": [], "known_geos": [], "last_seen": ""}
    users = {}
    for actor in {*previous["known_users"], *fresh["known_users"]}:
        old = previous["known_users"].get(actor, empty_profile)
        new = fresh["known_users"].get(actor, empty_profile)
        users[actor] = {
            "known_ips": _union(old["known_ips"], new["known_ips"]),
            # Geos of a baseline built before they were codes become codes too.
            "known_geos": sorted({geo_code(geo) for geo in (*old["known_geos"], *new["known_geos"])}),
            "last_seen": _later(old["last_seen"], new["last_seen"]),
        }
    frequency = {
        key: max(previous["frequency_tables"].get(key, 0), fresh["frequency_tables"].get(key, 0))
        for key in {*previous["frequency_tables"], *fresh["frequency_tables"]}
    }
    relationships = {}
    for key in {*previous["relationships"], *fresh["relationships"]}:
        entries = [r[key] for r in (previous["relationships"], fresh["relationships"]) if key in r]
        firsts = [e["first_seen"] for e in entries if e["first_seen"]]
        relationships[key] = {
            "count": max(e["count"] for e in entries),
            "first_seen": min(firsts) if firsts else "",
            "last_seen": max(e["last_seen"] for e in entries),
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "built_from_commit": fresh["built_from_commit"],
        "known_users": users,
        "known_actors": _union(previous["known_actors"], fresh["known_actors"]),
        "known_created_entities": _union(previous["known_created_entities"], fresh["known_created_entities"]),
        "frequency_tables": frequency,
        "actor_hours": _union_maps(previous["actor_hours"], fresh["actor_hours"]),
        "actor_roles": _union_maps(previous["actor_roles"], fresh["actor_roles"]),
        "relationships": relationships,
    }


def _counting_unattributed(events: Iterable[Mapping[str, Any]], tally: list[int]) -> Iterator[Mapping[str, Any]]:
    for event in events:
        if not event["actor"]:
            tally[0] += 1
        yield event


def unattributed_warning(unattributed: int, total: int) -> str:
    """The stderr warning of a build in which most events have no actor ("" when most have one)."""
    if not total or unattributed * 2 <= total:
        return ""
    return (
        f"warning: {unattributed} of {total} events have no actor, so the baseline learns nothing from them; "
        "check the format the events were ingested with (harness ingest events --format)"
    )


def build_baseline(store: EventStore, stderr: TextIO | None = None) -> dict[str, Any]:
    """`harness baseline build`: build from every event at HEAD, merge with the last baseline, append
    unless identical; returns `{"appended", "commit", "events_read"}`. When most events have no actor it
    says so on `stderr`."""
    tally = [0]
    with store.snapshot() as view:
        events = _counting_unattributed(view.records("events"), tally)
        fresh, count = build(events, store.last_change(view.commit, "events"))
        previous = view.latest_baseline()
    warning = unattributed_warning(tally[0], count)
    if warning and stderr is not None:
        print(warning, file=stderr)
    merged = merge(previous.record, fresh) if previous is not None else fresh
    try:
        record, line = encode_record(stream_spec("baseline"), merged)
    except RecordError as exc:
        raise InvalidInput(f"record 0: {exc}") from exc
    result = store.append_encoded("baseline", [("", line)])
    # Indexed now, while the record is in memory, so that no read has to parse it (docs/decisions.md, "Cold start").
    index_baseline(store, hashlib.sha256(line).hexdigest(), EntityIndex(Baseline(record=record, origin="store")))
    return {"appended": result.added > 0, "commit": result.commit, "events_read": count}


def parse_baseline(data: bytes) -> dict[str, Any]:
    """A baseline document (≤ 32 MiB of strict JSON) validated per docs/investigate.md §6.3; raises RecordError."""
    if len(data) > MAX_BASELINE_BYTES:
        raise RecordError(f"larger than {MAX_BASELINE_BYTES} bytes")
    try:
        return decode_baseline(loads_strict(data))
    except StrictJSONError as exc:
        raise RecordError(str(exc)) from exc


_FILE_CACHE: dict[tuple[str, int, int], Baseline] = {}
_FILE_CACHE_LOCK = threading.Lock()


def load_baseline_file(path: Path) -> Baseline:
    """The `--baseline FILE` baseline, cached by path, size and mtime; a bad file is invalid_input."""
    where = f"baseline file {sanitize_field(str(path))}"
    # The path is followed (as every `--baseline` before it was); harness.files refuses a FIFO or device.
    try:
        with files.open_regular(path, cap=MAX_BASELINE_BYTES, follow_symlinks=True) as (fd, info):
            key = (str(path.resolve()), info.st_size, info.st_mtime_ns)
            with _FILE_CACHE_LOCK:
                if key in _FILE_CACHE:
                    return _FILE_CACHE[key]
            data = files.read_capped(fd, path, MAX_BASELINE_BYTES)
    except files.FileRefused as exc:
        raise InvalidInput(f"baseline: {exc}") from None
    try:
        baseline = Baseline(record=parse_baseline(data), origin="file")
    except RecordError as exc:
        raise InvalidInput(f"{where}: {exc}") from exc
    with _FILE_CACHE_LOCK:
        _FILE_CACHE.clear()
        _FILE_CACHE[key] = baseline
    return baseline
