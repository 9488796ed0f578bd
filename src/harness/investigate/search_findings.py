"""search_findings (docs/investigate.md §9.2): stored findings by actor, source, type, ids and a lower time bound, oldest
first (docs/decisions.md, "Result order")."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from harness.context import Context
from harness.fields import BoundedStr
from harness.investigate.search_events import DEFAULT_LIMIT, MAX_IDS, MAX_LIMIT, check_since, truncation_note
from harness.investigate.services import store
from harness.investigate.views import finding_view
from harness.store import RecordFilter, StoreView, resolution_model
from harness.text.rfc3339 import parse_bound

NOTE_EMPTY = "no findings matched the filter"


class Input(BaseModel):
    """Arguments of search_findings."""

    model_config = ConfigDict(extra="forbid")

    actor: BoundedStr(256) = Field(
        default="",
        description="Actor the finding is about, the whole value ignoring case (deploy-svc, baron); never a "
        "substring. Empty: any actor.",
    )
    source: BoundedStr(256) = Field(
        default="",
        description="Finding source, e.g. detector:unusual-login, whole value ignoring case. Empty: any source.",
    )
    type: BoundedStr(256) = Field(
        default="",
        description="Finding type (family), e.g. unusual-timing, whole value ignoring case. Empty: any type.",
    )
    ids: Annotated[list[BoundedStr(256)], Field(max_length=MAX_IDS)] = Field(
        default_factory=list,
        description=f"Finding ids to return (at most {MAX_IDS}): exact ignoring case, the id without its finding- "
        "prefix, or a unique prefix of at least 4 characters. Empty entries are skipped.",
    )
    since: Annotated[str, AfterValidator(check_since)] = Field(
        default="",
        description="Earliest finding timestamp, inclusive: RFC3339 (2026-04-10T09:00:00Z) or a UTC date "
        "(2026-04-10 = its first instant); findings without a timestamp are then excluded. Empty: no bound.",
    )
    limit: int = Field(
        default=DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description=f"Most findings to return, 1..{MAX_LIMIT}."
    )


class LatestResolution(BaseModel):
    """What the latest resolve_finding call on a finding proposed and what its checks said (docs/investigate.md §9.7)."""

    action: str = Field(description="resolve or escalate, as proposed.")
    verified: bool = Field(description="Whether every check of that proposal passed.")
    reason: str = Field(description="`all checks passed`, or the first failing check's reason.")
    confidence: str = Field(description="The confidence proposed.")
    cited_rule_ids: list[str] = Field(description="The rule ids cited, as given.")
    recorded_at: str = Field(description="RFC3339 UTC instant it was recorded.")


class Finding(BaseModel):
    """One stored finding."""

    id: str = Field(description="Stored finding id.")
    source: str = Field(description="Detector that raised it, as stored.")
    severity: str = Field(description="Severity as stored.")
    type: str = Field(description="Finding type (family), as stored.")
    actor: str = Field(description="Actor as stored.")
    timestamp: str = Field(description="RFC3339 UTC timestamp, or empty when the finding has none.")
    reason: str = Field(description="The detector's explanation, sanitized.")
    evidence: Any = Field(description="The detector's evidence (JSON), every string sanitized.")
    event_ids: list[str] = Field(description="Ids of the events behind the finding: pass them to search_events ids.")
    resolution: LatestResolution | None = Field(
        description="The latest resolve_finding proposal recorded for this finding, verified or not; null when none."
    )


class Output(BaseModel):
    """Matching findings; every key is always present."""

    findings: list[Finding] = Field(
        description="The oldest `limit` matching findings, oldest first (the same timestamp: in ingest order; "
        "findings without a timestamp last)."
    )
    notes: str = Field(description="Explanations joined by one space; empty when there is none.")
    total: int = Field(description="How many findings matched in all.")
    truncated: bool = Field(description="total > limit: more findings matched than were returned.")


DESCRIPTION = """\
Search the stored security findings (alerts raised by detectors), oldest first by timestamp (the same \
timestamp: in the order they were ingested; findings without a timestamp last).

Every filter matches the whole value ignoring case, never a substring or prefix, and filters combine with AND. \
Use one axis per call: slug-like names such as deploy-svc or ci-bot are usually actors, so pass them as `actor`. \
`since` excludes findings without a timestamp; there is no upper bound and no window fallback. Only the oldest \
`limit` matches are returned; a later `since` shows later ones. A finding's `event_ids` feed search_events \
`ids` (or get_raw_event) to read the events behind it. Each finding's `resolution` is the latest \
resolve_finding proposal recorded for it (null when none): `verified` says whether the harness's checks passed, \
which a proposal alone never shows. No match is a normal result with a note.

Errors: invalid_input for a bad argument or an ambiguous id prefix (the message lists the candidates); \
upstream_unavailable when the store cannot be read.
"""


def latest_resolutions(view: StoreView, finding_ids: set[str]) -> dict[str, LatestResolution]:
    """The last resolutions record of each of these stored finding ids (the stream is append-only, so the last
    one read wins)."""
    latest: dict[str, LatestResolution] = {}
    for record in view.records(resolution_model.STREAM):
        if record["finding_id"] in finding_ids:
            latest[record["finding_id"]] = LatestResolution(
                action=record["action"],
                verified=record["verified"],
                reason=record["reason"],
                confidence=record["proposal"]["confidence"],
                cited_rule_ids=record["proposal"]["cited_rule_ids"],
                recorded_at=record["recorded_at"],
            )
    return latest


def answer(args: Input, view: StoreView) -> Output:
    """The docs/investigate.md §9.2 result over one store view."""
    ids = view.resolve_filter("findings", args.ids)
    since = parse_bound(args.since, "since") if args.since else None
    flt = RecordFilter(actor=args.actor, source=args.source, type=args.type, ids=ids, since=since)
    page = view.select("findings", flt, args.limit)
    notes: list[str] = []
    if not page.total:
        notes.append(NOTE_EMPTY)
    if page.total > args.limit:
        notes.append(truncation_note(args.limit, page.total, "findings"))
    latest = latest_resolutions(view, {record["id"] for record in page.records})
    return Output(
        findings=[Finding(**finding_view(record), resolution=latest.get(record["id"])) for record in page.records],
        notes=" ".join(notes),
        total=page.total,
        truncated=page.total > args.limit,
    )


def handle(args: Input, ctx: Context) -> Output:
    """Answer over one snapshot of the workspace's store."""
    with store(ctx).snapshot() as view:
        return answer(args, view)
