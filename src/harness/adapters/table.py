"""The shared shape of an adapter: a data table per source, plus the few hooks a table cannot express."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.adapters.fields import AdapterError, compact, content_hash, get, text, vendor_id
from harness.adapters.timestamps import event_time
from harness.adapters.vocabulary import GENERIC_TYPE, check_types
from harness.text.canonjson import json_type


@dataclass(frozen=True)
class Derived:
    """What a source's code adds to its table: the actor, extra metadata, and overrides of type, target and source
    (a format carrying several vendors' records, OCSF, names the vendor per record)."""

    actor: str
    metadata: Mapping[str, str] = field(default_factory=dict)
    type: str = ""
    target: str = ""
    source: str = ""


@dataclass(frozen=True)
class Table:
    """One source's mapping as data. Paths are dotted field paths into the vendor record (see fields.get).

    - `id_path`: the vendor's event id (a record without one gets `sha256-<content hash>`); `id_alternates` are
      tried in order when it is absent (one source delivered in several shapes spells it differently).
    - `time_paths`: the event time, the first present path wins.
    - `action_path`: the vendor's event name, kept as `payload.action` and looked up in `types`;
      an unlisted name is looked up by the value at `fallback_path` in `fallback_types`, else `default_type`;
      `action_alternates` are tried in order when `action_path` is empty; with `fold_case` the lookup ignores case
      (exports that upper-case the vendor name).
    - `target_paths`, `org_paths`: first non-empty string wins.
    - `metadata`: projected key -> paths (first non-empty string wins; absent keys are omitted).
    - `actor_rule` and `derived` (metadata key -> how the code derives it) document the hooks, for the
      README's mapping tables (scripts/adapter_tables.py renders them).
    """

    format: str
    source: str
    id_path: str
    time_paths: tuple[str, ...]
    action_path: str
    types: Mapping[str, str]
    metadata: Mapping[str, tuple[str, ...]]
    target_paths: tuple[str, ...] = ()
    org_paths: tuple[str, ...] = ()
    fallback_path: str = ""
    id_alternates: tuple[str, ...] = ()
    action_alternates: tuple[str, ...] = ()
    fold_case: bool = False
    fallback_types: Mapping[str, str] = field(default_factory=dict)
    default_type: str = GENERIC_TYPE
    actor_rule: str = ""
    derived: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_types(f"{self.format} table", {**self.types, **self.fallback_types, "": self.default_type})

    def action(self, record: Any) -> str:
        """The vendor's event name."""
        return text(record, self.action_path, *self.action_alternates)

    def event_type(self, record: Any) -> str:
        """The vocabulary type of a record by the table alone."""
        action = self.action(record)
        types = {name.casefold(): kind for name, kind in self.types.items()} if self.fold_case else self.types
        key = action.casefold() if self.fold_case else action
        if key in types:
            return types[key]
        fallback = text(record, self.fallback_path) if self.fallback_path else ""
        return self.fallback_types.get(fallback, self.default_type)


def map_record(table: Table, record: Any, derive: Callable[[dict[str, Any], str], Derived]) -> dict[str, Any]:
    """A vendor record as a harness event: the table's fields, then `derive`'s actor, metadata and overrides."""
    if not isinstance(record, dict):
        raise AdapterError("", f"a {table.format} record must be a JSON object, got {json_type(record)}")
    time_path = next((path for path in table.time_paths if get(record, path) not in (None, "")), table.time_paths[0])
    timestamp = event_time(get(record, time_path), time_path)
    id_paths = (table.id_path, *table.id_alternates)
    vid = next((found for path in id_paths if path and (found := vendor_id(record, path))), "")
    kind = table.event_type(record)
    derived = derive(record, kind)
    metadata = compact((key, text(record, *paths)) for key, paths in table.metadata.items())
    metadata.update(compact(derived.metadata.items()))
    return {
        "id": f"{table.format}-{vid}" if vid else f"{table.format}-sha256-{content_hash(record)}",
        "timestamp": timestamp,
        "source": derived.source or table.source,
        "type": derived.type or kind,
        "actor": derived.actor,
        "org": text(record, *table.org_paths),
        "payload": {
            "action": table.action(record),
            "target": derived.target or text(record, *table.target_paths),
            "metadata": dict(sorted(metadata.items())),
            "raw": record,
        },
    }


def listed(document: Any, key: str) -> Iterator[tuple[str, Any]]:
    """The items of the array at `document[key]`, each with its `[index]` location suffix."""
    items = get(document, key)
    if not isinstance(items, list):
        raise AdapterError(key, f"expected an array, got {json_type(items)}")
    for index, item in enumerate(items):
        yield f"[{index}]", item


def array_or_record(document: Any) -> Iterator[tuple[str, Any]]:
    """A JSON array of records (each with its `[index]`), or one record (no suffix)."""
    if isinstance(document, list):
        for index, item in enumerate(document):
            yield f"[{index}]", item
    else:
        yield "", document


def first_record(document: Any) -> Any:
    """The record detection looks at: the first item of an array, else the document."""
    if isinstance(document, list):
        return document[0] if document else None
    return document


@dataclass(frozen=True)
class Format:
    """A registered input format (see adapters/registry.py).

    - `detect(document)`: whether a parsed JSON document (one JSON Lines line, or a whole file) is this format.
    - `records(document)`: the vendor records inside it, each with a location suffix (`""` or `[i]`) that
      follows the file's `<file>:<line>` or `<file>` location in error messages.
    - `to_event(record)`: the harness event (store/models.py shape) of one vendor record; AdapterError
      names the vendor field that could not be mapped.
    - `to_events(record)`: set instead for a format whose one vendor record holds several events (Google
      Workspace activities fan out to one event per nested event); `events` is what ingest calls.
    """

    name: str
    source: str
    detect: Callable[[Any], bool]
    records: Callable[[Any], Iterator[tuple[str, Any]]]
    to_event: Callable[[Any], dict[str, Any]] | None
    table: Table
    to_events: Callable[[Any], list[dict[str, Any]]] | None = None

    def events(self, record: Any) -> list[dict[str, Any]]:
        """The harness events of one vendor record: one, unless the format fans a record out."""
        if self.to_events is not None:
            return self.to_events(record)
        assert self.to_event is not None  # a Format sets one of the two
        return [self.to_event(record)]
