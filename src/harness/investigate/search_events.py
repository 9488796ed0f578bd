"""search_events (docs/investigate.md §9.1): stored events by actor, source, type, target, ip, ids and a time window,
oldest first (docs/decisions.md, "Result order"), with the operator rules of a finding family folded in."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter

from harness.context import Context
from harness.fields import BoundedStr, Echoed
from harness.investigate import rulefold
from harness.investigate.services import store
from harness.investigate.views import event_view
from harness.rules import CorpusError, matching_rules
from harness.store import RecordFilter, StoreView
from harness.text.rfc3339 import parse_bound, render

MAX_IDS = 100
MAX_LIMIT = 2000
DEFAULT_LIMIT = 200

NOTE_WINDOW_DROPPED = (
    "the since/until window excluded all events, so it was dropped and unfiltered results are returned; check that "
    "since/until match actual event timestamps."
)
NOTE_EMPTY = "no events matched the filter"

Effective = Literal["none", "applied", "dropped"]


def check_since(value: str) -> str:
    """Refuse a non-empty `since` that is not a bound (docs/investigate.md §1.3); the value is kept as given."""
    if value:
        parse_bound(value, "since")
    return value


def check_until(value: str) -> str:
    """Refuse a non-empty `until` that is not a bound (docs/investigate.md §1.3); the value is kept as given."""
    if value:
        parse_bound(value, "until")
    return value


def truncation_note(limit: int, total: int, noun: str) -> str:
    """The note of a result longer than `limit` (shared with search_findings)."""
    return (
        f"showing the oldest {limit} of {total} matching {noun}; narrow the filters, move since later or raise limit "
        f"(at most {MAX_LIMIT})."
    )


class Input(BaseModel):
    """Arguments of search_events."""

    model_config = ConfigDict(extra="forbid")

    actor: BoundedStr(256) = Field(
        default="",
        description="Actor whose events to return, the whole value ignoring case (deploy-svc, baron); never a "
        "substring. Empty: any actor.",
    )
    source: BoundedStr(256) = Field(
        default="", description="Event source (azure, github, aws), whole value ignoring case. Empty: any source."
    )
    type: BoundedStr(256) = Field(
        default="",
        description="Event type (login, push, container_restart), whole value ignoring case. Empty: any type.",
    )
    target: BoundedStr(256) = Field(
        default="",
        description="The payload's target (the events' target, e.g. portal.azure.com), whole value ignoring case. "
        "Empty: any target.",
    )
    ip: BoundedStr(256) = Field(
        default="",
        description="The event's ip (metadata.ip in the events, e.g. 203.0.113.5), whole value ignoring case. "
        "Empty: any ip.",
    )
    ids: Annotated[list[BoundedStr(256)], Field(max_length=MAX_IDS)] = Field(
        default_factory=list,
        description=f"Event ids to return (at most {MAX_IDS}): exact ignoring case, a finding-<event id> form, or a "
        "unique prefix of at least 4 characters; a finding's event_ids go here. Empty entries are skipped.",
    )
    since: Annotated[str, AfterValidator(check_since)] = Field(
        default="",
        description="Earliest timestamp, inclusive: RFC3339 (2026-04-10T09:00:00Z) or a UTC date (2026-04-10 = its "
        "first instant). Empty: no lower bound.",
    )
    until: Annotated[str, AfterValidator(check_until)] = Field(
        default="",
        description="Latest timestamp, inclusive: RFC3339 or a UTC date (2026-04-10 = its last instant). Empty: no "
        "upper bound.",
    )
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description=f"Most events to return, 1..{MAX_LIMIT}.")
    finding_family: BoundedStr(128) = Field(
        default="",
        description="Family (type) of the finding being investigated, e.g. unusual-timing: adds the operator rules "
        "matching it and finding_metadata. Empty: no rules.",
    )
    finding_metadata: rulefold.FindingMetadata = Field(
        default_factory=dict,
        description='Predicates you assert from the events, as a {"key": "value"} object of strings ("true", not '
        'true), e.g. {"maintenance_window": "true"}; keys are normalized (maintenanceWindow = '
        "maintenance_window). Used only with finding_family.",
    )


class EventView(BaseModel):
    """One event as the investigator sees it."""

    id: str = Field(description="Stored event id (use it with get_raw_event).")
    source: str = Field(description="Event source as stored.")
    type: str = Field(description="Event type as stored.")
    actor: str = Field(description="Actor as stored.")
    timestamp: str = Field(description="RFC3339 UTC timestamp.")
    target: str = Field(description="The payload's target when a string, sanitized; else empty.")
    action: str = Field(description="The payload's action when a string, sanitized; else empty.")
    metadata: dict[str, str] = Field(description="Allowlisted payload metadata rendered as strings.")


class FilterApplied(BaseModel):
    """The filters this call applied."""

    actor: Echoed = Field(description="The actor input, sanitized like stored text.")
    source: Echoed = Field(description="The source input, sanitized like stored text.")
    type: Echoed = Field(description="The type input, sanitized like stored text.")
    target: Echoed = Field(description="The target input, sanitized like stored text.")
    ip: Echoed = Field(description="The ip input, sanitized like stored text.")
    since: str = Field(description="The lower bound as an RFC3339 UTC instant, or empty.")
    until: str = Field(description="The upper bound as an RFC3339 UTC instant, or empty.")
    effective: Effective = Field(
        description="none: no window given; applied: the window filtered; dropped: it excluded every event that "
        "matched the other filters, so it was ignored."
    )


class Output(BaseModel):
    """Matching events and rules; every key is always present."""

    events: list[EventView] = Field(
        description="The oldest `limit` matching events, oldest first (the same timestamp: in ingest order)."
    )
    matched_rules: list[rulefold.RuleView] = Field(
        description="Operator rules matching finding_family and finding_metadata, in corpus order."
    )
    filter_applied: FilterApplied = Field(description="The filters applied.")
    notes: str = Field(description="Explanations joined by one space; empty when there is none.")
    total: int = Field(description="How many events matched in all.")
    truncated: bool = Field(description="total > limit: more events matched than were returned.")


# A result's events validated in one call instead of one model call each (2,000 at most; docs/decisions.md).
_EVENT_VIEWS = TypeAdapter(list[EventView])

DESCRIPTION = """\
Search the stored security events, oldest first by timestamp (the same timestamp: in the order they were ingested), \
with the operator rules for the finding family you are investigating.

Every filter matches the whole value ignoring case, never a substring or prefix (`bar` does not match baron), and \
filters combine with AND. Use one axis per call: slug-like names such as deploy-svc or ci-bot are usually actors, \
so pass them as `actor`, not as `type` or `source`. A finding's `event_ids` (from search_findings) feed `ids`. \
If the since/until window excludes every event the other filters match, it is dropped: unfiltered results come \
back, `filter_applied.effective` is "dropped" and a note says so. Only the oldest `limit` matches are returned; \
a later `since` shows later ones. `metadata` shows allowlisted payload keys; get_raw_event shows the whole payload.

`finding_family` with `finding_metadata` adds in `matched_rules` the rules of that family whose predicates all \
hold, whatever events matched; when none does, notes says so in the words lookup_rules uses. Assert a predicate \
only after reading it in the events; its value is a string (write "true", not true). No match is a normal result with a note.

Errors: invalid_input for a bad argument or an ambiguous id prefix (the message lists the candidates); \
upstream_unavailable when the store cannot be read. A rule corpus that cannot be loaded leaves matched_rules \
empty and says so in notes.
"""


def answer(args: Input, view: StoreView, ctx: Context) -> Output:
    """The docs/investigate.md §9.1 result over one store view; `ctx` supplies only the rule corpus."""
    notes: list[str] = []
    predicates = rulefold.predicates(args.finding_metadata, {})
    ids = view.resolve_filter("events", args.ids)
    base = RecordFilter(
        actor=args.actor, source=args.source, type=args.type, target=args.target, ip=args.ip, ids=ids
    )
    since = parse_bound(args.since, "since") if args.since else None
    until = parse_bound(args.until, "until") if args.until else None

    effective: Effective = "none"
    if since is None and until is None:
        page = view.select("events", base, args.limit)
    else:
        effective = "applied"
        page = view.select("events", dataclasses.replace(base, since=since, until=until), args.limit)
        if not page.total:
            unbounded = view.select("events", base, args.limit)
            if unbounded.total:
                effective, page = "dropped", unbounded
                notes.append(NOTE_WINDOW_DROPPED)

    rules: list[rulefold.RuleView] = []
    if args.finding_family:
        try:
            rules = rulefold.views(matching_rules(rulefold.corpus(ctx), args.finding_family, predicates))
        except CorpusError as exc:
            notes.append(f"rule matching skipped: {exc}")
        else:
            if not rules:
                notes.append(rulefold.no_match_note(args.finding_family))
    if not page.total:
        notes.append(NOTE_EMPTY)
    if page.total > args.limit:
        notes.append(truncation_note(args.limit, page.total, "events"))

    return Output(
        events=_EVENT_VIEWS.validate_python([event_view(record) for record in page.records]),
        matched_rules=rules,
        filter_applied=FilterApplied(
            actor=args.actor,
            source=args.source,
            type=args.type,
            target=args.target,
            ip=args.ip,
            since=render(since) if since is not None else "",
            until=render(until) if until is not None else "",
            effective=effective,
        ),
        notes=" ".join(notes),
        total=page.total,
        truncated=page.total > args.limit,
    )


def handle(args: Input, ctx: Context) -> Output:
    """Answer over one snapshot of the workspace's store."""
    with store(ctx).snapshot() as view:
        return answer(args, view, ctx)
