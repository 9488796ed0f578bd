"""The three shapes Microsoft delivers Entra and Azure logs in, shared by the entra-* and azure-activity formats.

- Microsoft Graph: `{"value": [...]}` pages (or the bare records), camelCase fields at the top.
- Log Analytics export (SigninLogs, AuditLogs, AzureActivity tables): PascalCase columns at the top; field
  lookup ignores case, so a Graph path also reads its Log Analytics column of the same name.
- Azure Monitor diagnostic settings (Event Hubs, storage accounts): `{"records": [...]}`, each record an
  envelope of `time`, `category`, `operationName`, ... with the source's own record under `properties`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters.fields import get
from harness.adapters.table import array_or_record, first_record, listed

ENVELOPE = "properties"


def both(*paths: str) -> tuple[str, ...]:
    """`paths` at the top of the record (Graph, Log Analytics), then inside the diagnostic envelope."""
    return (*paths, *(f"{ENVELOPE}.{path}" for path in paths))


def _wrapper(document: Any) -> str:
    """The key of the array a Graph page (`value`) or a diagnostic-settings blob (`records`) holds, else ""."""
    if isinstance(document, dict):
        for key in ("records", "value"):
            if isinstance(document.get(key), list):
                return key
    return ""


def sample(document: Any) -> Any:
    """The record detection looks at: the first item of a page, a blob, an array, else the document."""
    key = _wrapper(document)
    return first_record(document[key] if key else document)


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """The records of a Graph page, a diagnostic-settings blob, an array of rows, or one record."""
    key = _wrapper(document)
    yield from listed(document, key) if key else array_or_record(document)


def category(record: Any) -> str:
    """The diagnostic-settings `category`, else the Log Analytics `Category`, else the table name in `Type`."""
    value = get(record, "category") or get(record, "Type")
    return value if isinstance(value, str) else ""
