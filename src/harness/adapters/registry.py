"""The registry of input formats for `harness ingest events --format NAME`.

Adding a format: write `adapters/<name>.py` with its Table, `detect`, `records` and `to_event` and a
`FORMAT = Format(...)`, then add it to ADAPTERS below. Detection must be specific: `auto` refuses a file that
two formats both claim.
"""

from __future__ import annotations

from typing import Any

from harness.adapters import (
    azure_activity,
    cloudtrail,
    entra_audit,
    entra_signin,
    gcp_audit,
    github_audit,
    google_workspace,
    m365,
    ocsf,
    okta,
    slack_audit,
)
from harness.adapters.fields import AdapterError
from harness.adapters.table import Format, first_record
from harness.text.casefold import normalize_key

HARNESS = "harness"
AUTO = "auto"

_FORMATS = (
    cloudtrail,
    okta,
    github_audit,
    entra_signin,
    entra_audit,
    azure_activity,
    m365,
    google_workspace,
    slack_audit,
    gcp_audit,
    ocsf,
)
ADAPTERS: dict[str, Format] = {module.FORMAT.name: module.FORMAT for module in _FORMATS}
FORMAT_NAMES: tuple[str, ...] = (HARNESS, AUTO, *ADAPTERS)


def is_harness_shape(document: Any) -> bool:
    """The harness's own records: `id` and `timestamp` at the top level (any key casing), or `{"events": [...]}`."""
    if isinstance(document, dict) and len(document) == 1:
        ((key, value),) = document.items()
        if normalize_key(key) == "events" and isinstance(value, list):
            document = value
    record = first_record(document)
    return isinstance(record, dict) and {"id", "timestamp"} <= {normalize_key(key) for key in record}


def choose(document: Any) -> str:
    """The one format that recognizes `document` (a file's first JSON Lines record, or the whole file)."""
    matches = [name for name, fmt in ADAPTERS.items() if fmt.detect(document)]
    if is_harness_shape(document):
        matches.append(HARNESS)
    if len(matches) == 1:
        return matches[0]
    tried = ", ".join((*ADAPTERS, HARNESS))
    if not matches:
        raise AdapterError("", f"no format recognizes this input (tried {tried})")
    raise AdapterError("", f"several formats recognize this input ({', '.join(matches)}); name one with --format")
