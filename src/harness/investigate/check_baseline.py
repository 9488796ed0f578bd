"""check_baseline (docs/investigate.md §9.3): what the baseline knows about one entity, matched ignoring case."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from harness.context import Context
from harness.fields import BoundedStr, Echoed
from harness.investigate.services import store
from harness.store import Baseline, load_baseline_file
from harness.store.baseline_index import BaselineIndex, EntityIndex, EntitySource, Entry, index_baseline
from harness.text.geo import geo_code
from harness.text.rfc3339 import parse_timestamp
from harness.text.sanitize import echo

MAX_TYPES = 500
MAX_ROLES = 200
MAX_RELATIONSHIPS = 500

NOTE_NO_BASELINE = (
    "no baseline is available (no baseline record in the store and no --baseline file); every entity reads as unknown"
)
NOTE_ABSENT = "entity not found in the baseline"


class Input(BaseModel):
    """Arguments of check_baseline."""

    model_config = ConfigDict(extra="forbid")

    entity: BoundedStr(256, min_bytes=1) = Field(
        description="The actor to look up (e.g. deploy-svc, baron), matched as a whole value ignoring case."
    )
    source: BoundedStr(256) = Field(
        default="",
        description="A login geo to test (US, us or United States), compared as an ISO 3166 alpha-2 code with the "
        "actor's known login geos, not with event sources. Empty: no narrowing.",
    )
    event_type: BoundedStr(256) = Field(
        default="",
        description="An event type (e.g. container_restart) whose count frequency_for_type reports, ignoring case. "
        "Empty: frequency_for_type is 0.",
    )


class Relationship(BaseModel):
    """One actor:target history entry of the baseline."""

    count: int = Field(description="How many times the pair was seen.")
    first_seen: str = Field(description="When it was first seen, as recorded (often a date); empty if unknown.")
    last_seen: str = Field(description="When it was last seen, as recorded; empty if unknown.")


class Output(BaseModel):
    """What the baseline says about the entity; every key is always present."""

    known: bool = Field(description="The entity has a login profile or is a known actor (after source narrowing).")
    last_seen: str = Field(description="The login profile's last_seen (RFC3339, UTC), or empty.")
    frequency: int = Field(description="Events of the entity across all types (sum of frequency_by_type, uncapped).")
    frequency_by_type: dict[str, int] = Field(
        description=f"Event count per event type, spelled as in the baseline; at most {MAX_TYPES} types."
    )
    frequency_for_type: int = Field(description="Events of the entity whose type equals event_type ignoring case.")
    event_type: Echoed = Field(description="The event_type input, sanitized like stored text; empty when not given.")
    roles: list[str] = Field(
        description=f"Elevated role:target strings recorded for the entity, sorted; at most {MAX_ROLES}."
    )
    relationships: dict[str, Relationship] = Field(
        description=f"actor:target entries whose actor or target is the entity, by key; at most {MAX_RELATIONSHIPS}."
    )
    notes: str = Field(description="Explanations joined by one space; empty when there is none.")


DESCRIPTION = f"""\
Check what the behavioural baseline knows about one entity (usually an actor such as a service account or a \
user login; slug-like names such as deploy-svc are usually actors): whether it is known, its last login, how \
often it produced each event type, its elevated roles and its actor:target relationships. Use it to judge whether \
a finding's activity is normal for that actor. One entity per call.

Every comparison is a whole-value match ignoring case: nothing matches by substring or prefix (deploy-svc never \
matches deploy-svc-canary). `source` is a login geo (a country name or code), not an event source.

How to read it: `known` is true when the entity has a login profile or appears among the known actors. When \
`source` is given and the entity's profile has login geos, `known` becomes whether `source` is one of those geos \
(a note explains it); an entity without a profile or without geos is never narrowed. An entity absent from the \
baseline is `known` false with the note "{NOTE_ABSENT}". Without any baseline (none built in the store and no \
--baseline file) every entity reads as unknown, with a note saying so. Empty is a normal result, not an error.

The baseline read is the --baseline file given to the server or CLI, else the newest baseline record in the store \
(`harness baseline build`). Long lists are capped (the first by sort order; see the output schema) and a note \
says when a cap applied. Errors: invalid_input for a bad argument or a bad --baseline file; upstream_unavailable \
when the store cannot be read.
"""


def _later(a: str, b: str) -> str:
    """The later of two normalized timestamps; "" is the earliest."""
    if not a or not b:
        return a or b
    return b if parse_timestamp(b) > parse_timestamp(a) else a


class _Sources:
    """The entity source of the last baseline seen: in memory for a `--baseline` file (cached by identity, as the
    parsed file is), else the baseline index of the store's newest baseline, built the first time it is missing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: EntityIndex | None = None
        self._digest = ""

    def in_memory(self, found: Baseline, digest: str = "") -> EntityIndex:
        with self._lock:
            if self._last is None or self._last.baseline is not found:
                self._last = EntityIndex(found)
                self._digest = digest
            return self._last

    def cached(self, digest: str) -> EntityIndex | None:
        with self._lock:
            return self._last if self._last is not None and self._digest == digest else None


def _capped(name: str, keys: Iterable[str], cap: int, notes: list[str]) -> list[str]:
    ordered = sorted(keys)
    if len(ordered) > cap:
        notes.append(f"{name} truncated to the first {cap} of {len(ordered)} entries")
    return ordered[:cap]


def _empty(args: Input, notes: str) -> Output:
    return Output(
        known=False,
        last_seen="",
        frequency=0,
        frequency_by_type={},
        frequency_for_type=0,
        event_type=args.event_type,
        roles=[],
        relationships={},
        notes=notes,
    )


def _profile(entry: Entry) -> tuple[bool, str, list[str]]:
    """Whether a profile exists, and the merged profile's last_seen and sorted geos."""
    last_seen = ""
    geos: set[str] = set()
    for profile in entry.profiles:
        last_seen = _later(last_seen, profile["last_seen"])
        geos.update(profile["known_geos"])
    return bool(entry.profiles), last_seen, sorted(geos)


def check(source: EntitySource, args: Input) -> Output:
    """The docs/investigate.md §9.3 answer for one entity over one baseline (pure)."""
    lowered = args.entity.lower()
    entry = source.entry(lowered)
    notes: list[str] = []
    has_profile, last_seen, geos = _profile(entry)
    known = has_profile or entry.actor
    if not known:
        notes.append(NOTE_ABSENT)
    elif args.source and geos and geo_code(args.source).lower() not in {geo_code(geo).lower() for geo in geos}:
        known = False
        notes.append(
            f"entity is in the baseline but source {echo(args.source)} is not one of its known geos "
            f"({', '.join(geos)}), so known is false"
        )

    # Event counts per type (spelled as in the keys) of `source:type:<entity>` keys.
    by_type: Counter[str] = Counter()
    for event_type, count in entry.frequency:
        by_type[event_type] += count
    shown_types = _capped("frequency_by_type", by_type, MAX_TYPES, notes)
    shown_roles = _capped("roles", entry.roles, MAX_ROLES, notes)
    shown_related = _capped("relationships", entry.relationship_keys, MAX_RELATIONSHIPS, notes)
    wanted_type = args.event_type.lower()
    relationships = source.relationships(shown_related)
    return Output(
        known=known,
        last_seen=last_seen,
        frequency=sum(by_type.values()),
        frequency_by_type={t: by_type[t] for t in shown_types},
        frequency_for_type=sum(n for t, n in by_type.items() if wanted_type and t.lower() == wanted_type),
        event_type=args.event_type,
        roles=shown_roles,
        relationships={key: Relationship(**relationships[key]) for key in shown_related},
        notes=" ".join(notes),
    )


def handle(args: Input, ctx: Context) -> Output:
    """Answer from the baseline the context selects (docs/investigate.md §6.3): `--baseline FILE` (parsed, cached
    by path, size and mtime), else the store's newest baseline record through the baseline index, else none."""
    sources = ctx.service("check_baseline.sources", _Sources)
    if ctx.settings.baseline_path is not None:
        return check(sources.in_memory(load_baseline_file(ctx.settings.baseline_path)), args)
    the_store = store(ctx)
    with the_store.snapshot() as view:
        digest = view.latest_baseline_digest()
        if digest is None:
            return _empty(args, NOTE_NO_BASELINE)
        held = sources.cached(digest)
        if held is not None:
            return check(held, args)
        path = the_store.local_index_path()
        stored = None if path is None else ctx.service("check_baseline.index", lambda: BaselineIndex(path)).read(digest)
        if stored is not None:
            try:
                return check(stored, args)
            finally:
                stored.close()
        found = view.latest_baseline()
    assert found is not None
    index = sources.in_memory(found, digest)
    index_baseline(the_store, digest, index)
    return check(index, args)
