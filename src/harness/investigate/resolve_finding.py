"""resolve_finding (docs/investigate.md §9.7): an agent's resolve or escalate proposal, checked against the finding, its
events and the rule corpus, and appended to the `resolutions` stream verified or not."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, create_model

from harness.context import Context
from harness.fields import BoundedStr
from harness.investigate import lookup_rules, rulefold
from harness.investigate.resolution_checks import check_proposal
from harness.investigate.services import store
from harness.rules import CorpusError
from harness.store.resolution_model import STREAM, Action, Confidence, Proposal, Resolution, ResolutionRecord
from harness.text import canonjson
from harness.text.rfc3339 import render
from harness.text.sanitize import sanitize_field

MAX_CITED_EVENTS = 64
MAX_CITED_RULES = 16
# The sanitizer's cap (docs/investigate.md §1.2), so a recorded rationale is never cut.
MAX_RATIONALE_BYTES = 1024
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

DESCRIPTION = """\
Propose what to do with a finding, resolve or escalate, and have the harness check the proposal against the \
stored evidence. The agent proposes; the checks decide. Call it once you have read the finding \
(search_findings), its events (search_events `ids`, get_raw_event) and the operator rules (lookup_rules).

Checks, in order: `finding` (a finding has exactly this id, ignoring case); one `cited_event` per cited event \
(it exists and is one of the finding's event_ids or an event of the finding's actor); one `cited_rule` per \
cited rule (it exists in the rule corpus, a forged id fails with its name; it applies to the finding's family; \
and for a resolve, every predicate in its metadata_match is both asserted in this call and shown by an accepted \
cited event's payload, nested `metadata` first, then the top level: `maintenance_window: "true"` on the event, \
not only in the claim); one `asserted_predicate` per predicate asserted (some accepted cited event shows it); \
and `action` (a resolve must rest on at least one cited rule that passed; an escalate needs none). \
`verified` is true only when every check passed; what cannot be verified is verified false with the reason.

Verified or not, the proposal and its checks are appended to the store's resolutions stream (events, findings \
and baselines are never written), and search_findings shows each finding's latest resolution. Predicate fields \
are those of lookup_rules (strings such as "true"); finding_metadata takes more.

Errors: invalid_input for a bad argument (nothing is recorded then); upstream_unavailable when the store cannot \
be read or written. An unreadable rule corpus is not an error: each cited rule fails its check.
"""


def _check_rule_id(value: str) -> str:
    if lookup_rules.RULE_ID_RE.fullmatch(value) is None:
        raise ValueError(lookup_rules.RULE_ID_PROBLEM)
    return value


_PREDICATE_FIELDS: dict[str, Any] = {
    name: (field.annotation, field)
    for name, field in lookup_rules.Input.model_fields.items()
    if name in (*lookup_rules.FLAT_PREDICATES, "finding_metadata")
}

Input = create_model(  # one truth for the predicate fields: lookup_rules' own, bounds and descriptions included
    "Input",
    __config__=ConfigDict(extra="forbid"),
    __doc__="Arguments of resolve_finding.",
    finding_id=(BoundedStr(256, min_bytes=1), Field(description="Id of the finding, as search_findings shows it.")),
    action=(Action, Field(description="resolve (benign under an operator rule) or escalate (needs a human).")),
    confidence=(Confidence, Field(description="How sure you are: low, medium or high.")),
    rationale=(
        BoundedStr(MAX_RATIONALE_BYTES, min_bytes=1),
        Field(description=f"Why, in at most {MAX_RATIONALE_BYTES} bytes; recorded, never checked."),
    ),
    cited_event_ids=(
        Annotated[list[BoundedStr(256, min_bytes=1)], Field(max_length=MAX_CITED_EVENTS)],
        Field(
            default_factory=list,
            description=f"Stored ids of the events the decision rests on (at most {MAX_CITED_EVENTS}): the "
            "finding's event_ids or events of its actor.",
        ),
    ),
    cited_rule_ids=(
        Annotated[
            list[Annotated[BoundedStr(64, min_bytes=1), AfterValidator(_check_rule_id)]],
            Field(max_length=MAX_CITED_RULES),
        ],
        Field(
            default_factory=list,
            description=f"Ids of the operator rules the decision rests on (at most {MAX_CITED_RULES}, e.g. "
            "R-001); a resolve needs at least one.",
        ),
    ),
    **_PREDICATE_FIELDS,
)

Output = Resolution


def proposal_of(args: Any) -> Proposal:
    """The proposal as recorded: the arguments with the predicates merged as lookup_rules merges them."""
    flat = {name: getattr(args, name) for name in lookup_rules.FLAT_PREDICATES}
    return Proposal(
        finding_id=args.finding_id,
        action=args.action,
        confidence=args.confidence,
        rationale=args.rationale,
        cited_event_ids=list(args.cited_event_ids),
        cited_rule_ids=list(args.cited_rule_ids),
        predicates=rulefold.predicates(args.finding_metadata, flat),
    )


def handle(args: Any, ctx: Context) -> Resolution:
    """Check the proposal over one snapshot, then append the answer with its instant to the resolutions stream."""
    proposal = proposal_of(args)
    try:
        corpus = rulefold.corpus(ctx)
    except CorpusError as exc:
        corpus = sanitize_field(str(exc))
    with store(ctx).snapshot() as view:
        checks, finding_id = check_proposal(proposal, view, corpus)
    failing = next((check.reason for check in checks if not check.passed), None)
    result = Resolution(
        verified=failing is None,
        reason=failing or "all checks passed",
        finding_id=finding_id,
        action=proposal.action,
        checks=checks,
        proposal=proposal,
        proposal_sha256=hashlib.sha256(canonjson.dumps_bytes(proposal.model_dump(mode="json"))).hexdigest(),
    )
    recorded_at = render((ctx.clock() - _EPOCH) // timedelta(microseconds=1))
    record = ResolutionRecord(**result.model_dump(), recorded_at=recorded_at)
    store(ctx).append_batch(STREAM, [record.model_dump(mode="json")])
    return result
