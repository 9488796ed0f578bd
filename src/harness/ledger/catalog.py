"""The ledger's schema as a set of catalog entries, the recorded PostgreSQL one, and how two sets differ.

verify compares what the database holds with what the shipped migrations create (docs/decisions.md, "Ledger
integrity"): a dropped, added or altered table, index, trigger or function is a `schema_mismatch`.
"""

from __future__ import annotations

import importlib.resources
import json
from collections.abc import Iterable

# (kind, name, definition): one table, column, constraint, index, trigger, function, rule or policy.
SchemaObject = tuple[str, str, str]

RECORDED_POSTGRES = "postgres_catalog.json"


def as_set(rows: Iterable[Iterable[str]]) -> frozenset[SchemaObject]:
    """Catalog rows as a set of entries."""
    return frozenset((str(kind), str(name), str(definition)) for kind, name, definition in rows)


def differences(actual: frozenset[SchemaObject], expected: frozenset[SchemaObject]) -> list[str]:
    """One sentence per entry that is missing, added or defined differently, sorted by kind and name."""
    wanted = {(kind, name): definition for kind, name, definition in expected}
    found = {(kind, name): definition for kind, name, definition in actual}
    notes = []
    for kind, name in sorted(wanted.keys() | found.keys()):
        if (kind, name) not in found:
            notes.append(f"{kind} {name} is missing")
        elif (kind, name) not in wanted:
            notes.append(f"{kind} {name} is not part of the migrated schema")
        elif found[kind, name] != wanted[kind, name]:
            notes.append(f"{kind} {name} differs from the migrated schema")
    return notes


def document(version: int, objects: frozenset[SchemaObject]) -> str:
    """The text of a recorded catalog: the schema version and its entries, sorted, one per line."""
    lines = ",\n".join("    " + json.dumps(list(entry), ensure_ascii=False) for entry in sorted(objects))
    return '{\n  "version": ' + str(version) + ',\n  "objects": [\n' + lines + "\n  ]\n}\n"


def recorded_postgres(version: int) -> frozenset[SchemaObject]:
    """The PostgreSQL catalog that the shipped migrations create, as recorded next to them."""
    text = importlib.resources.files("harness.ledger.migrations").joinpath(RECORDED_POSTGRES).read_text("utf-8")
    doc = json.loads(text)
    if doc["version"] != version:
        raise RuntimeError(f"{RECORDED_POSTGRES} records schema {doc['version']}, the migrations make {version}")
    return as_set(doc["objects"])
