"""get_raw_event (docs/investigate.md §9.5): one event's whole payload, cleaned of hidden characters, redacted, capped."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from harness.context import Context
from harness.fields import BoundedStr, Echoed
from harness.investigate.rawcap import MAX_PAYLOAD_BYTES, cap_payload
from harness.investigate.services import store
from harness.store import StoreView
from harness.text.redact import Redactor
from harness.text.sanitize import echo, strip_invisible

NOTE_NO_PAYLOAD = "event has no payload"
NOTE_INVISIBLE = "invisible control or format characters were removed from payload strings"
NOTE_REDACTED = "credential or secret-shaped values were redacted"


def not_found_note(requested: str) -> str:
    """Why nothing was found, and where to look instead."""
    return (
        f"no event found for id {echo(requested)}; it may be a finding id rather than an event id: use "
        "search_findings or search_events to confirm the exact event id"
    )


class Input(BaseModel):
    """Arguments of get_raw_event."""

    model_config = ConfigDict(extra="forbid")

    id: BoundedStr(256, min_bytes=1) = Field(
        description="Event id: exact ignoring case, a finding-<event id> form, or a unique prefix of at least 4 "
        "characters. Required."
    )


class Output(BaseModel):
    """The event's payload; every key is always present."""

    NOTES_SEPARATOR: ClassVar[str] = "; "

    id: Echoed = Field(
        description="The stored event id when found, else the requested id, sanitized like stored text."
    )
    found: bool = Field(description="Whether an event was found.")
    payload: Any = Field(description="The payload (any JSON), redacted and capped; null when not found.")
    redacted: bool = Field(description="Credential or secret-shaped values were replaced by [REDACTED:<rule>].")
    truncated: bool = Field(description=f"The payload was cut to fit {MAX_PAYLOAD_BYTES} bytes (see notes).")
    notes: str = Field(description="Explanations joined by a semicolon and a space; empty when there is none.")


DESCRIPTION = f"""\
Read one stored event's whole raw payload: every field the detector or source recorded, including those \
search_events does not show in its metadata (display_name, usual_location, description, ...). The id may be a \
`finding-<event id>` form (or its shortened `finding-<event id>-<suffix>` variants) or a unique prefix of at \
least 4 characters; a finding's `event_ids` (from search_findings) are the ids to pass.

Not found is a normal result (found false, payload null) with a note; the id may be a finding id rather than an \
event id. Before it is returned the payload is cleaned: invisible control and format characters are removed \
from strings (a note says so); values under keys such as sessionToken or secretAccessKey, and anything shaped \
like a credential or a configured secret, become "[REDACTED:<rule>]". A payload over {MAX_PAYLOAD_BYTES} bytes \
of JSON is cut in visible stages until it fits: long strings end in "...[truncated]", long arrays end in \
"[TRUNCATED: <n> more items]", large members become "[TRUNCATED: ~<bytes> bytes]", and a "_truncated" member \
counts dropped fields (a note lists the stages).

Errors: invalid_input for a bad id or an ambiguous prefix (the message lists the candidates); \
upstream_unavailable when the store cannot be read.
"""


def _strip_tree(node: Any) -> tuple[Any, bool]:
    """strip_invisible on every string value; whether anything changed."""
    if isinstance(node, str):
        stripped = strip_invisible(node)
        return stripped, stripped != node
    if isinstance(node, dict):
        changed = False
        out: dict[str, Any] = {}
        for key, value in node.items():
            out[key], sub = _strip_tree(value)
            changed = changed or sub
        return out, changed
    if isinstance(node, list):
        items = [_strip_tree(value) for value in node]
        return [value for value, _ in items], any(sub for _, sub in items)
    return node, False


def clean_payload(payload: Any, redactor: Redactor) -> tuple[Any, list[str], bool, bool]:
    """Steps 3 and 4: strip invisible characters, redact, cap; returns the payload, notes, redacted, truncated."""
    notes: list[str] = []
    stripped, changed = _strip_tree(payload)
    if changed:
        notes.append(NOTE_INVISIBLE)
    # redact_tree applies the credential_key rule (any depth, whatever the value) and the catalogue to every string.
    redacted_tree, redacted = redactor.redact_tree(stripped)
    if redacted:
        notes.append(NOTE_REDACTED)
    capped = cap_payload(redacted_tree)
    if capped.stages:
        notes.append(
            f"payload exceeded {MAX_PAYLOAD_BYTES} bytes; applied: {', '.join(capped.stages)} "
            f"(the result is at most {MAX_PAYLOAD_BYTES} bytes)"
        )
    return capped.payload, notes, redacted, bool(capped.stages)


def answer(args: Input, view: StoreView, redactor: Redactor) -> Output:
    """The docs/investigate.md §9.5 result over one store view."""
    resolved = view.resolve("events", args.id)
    record = view.get("events", resolved[0]) if resolved else None
    if record is None:
        return Output(
            id=args.id, found=False, payload=None, redacted=False, truncated=False, notes=not_found_note(args.id)
        )
    notes: list[str] = []
    if record["payload"] in ({}, None):
        notes.append(NOTE_NO_PAYLOAD)
    payload, cleaning, redacted, truncated = clean_payload(record["payload"], redactor)
    return Output(
        id=record["id"],
        found=True,
        payload=payload,
        redacted=redacted,
        truncated=truncated,
        notes="; ".join([*notes, *cleaning]),
    )


def handle(args: Input, ctx: Context) -> Output:
    """Answer over one snapshot of the workspace's store, redacting with the shared redactor."""
    with store(ctx).snapshot() as view:
        return answer(args, view, ctx.redactor)
