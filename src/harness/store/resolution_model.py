"""The `resolutions` stream record (docs/investigate.md §9.7): one resolve_finding proposal, its checks and the
harness's answer, in one shape whether it verified or not.

resolve_finding returns `Resolution` and appends `ResolutionRecord` (the same keys plus when it was recorded);
search_findings reads the stream back to show each finding's latest resolution.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.fields import Echoed
from harness.store.models import RecordError

STREAM = "resolutions"
Action = Literal["resolve", "escalate"]
Confidence = Literal["low", "medium", "high"]
CheckName = Literal["finding", "cited_event", "cited_rule", "asserted_predicate", "action"]
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Proposal(_Strict):
    """The proposal as the agent submitted it (every field present, defaults filled in), its text sanitized like
    every echo of input (docs/decisions.md, "Echoed input is sanitized like stored text")."""

    finding_id: Echoed = Field(description="The finding the agent proposes to resolve or escalate.")
    action: Action = Field(description="resolve or escalate.")
    confidence: Confidence = Field(description="low, medium or high.")
    rationale: Echoed = Field(description="The agent's explanation.")
    cited_event_ids: list[Echoed] = Field(description="Event ids the agent cites, as given.")
    cited_rule_ids: list[Echoed] = Field(description="Rule ids the agent cites, as given.")
    predicates: dict[Echoed, Echoed] = Field(
        description="The predicates asserted: normalized keys, non-empty values (flat fields over finding_metadata)."
    )


class PredicateEvidence(_Strict):
    """One predicate a cited rule needs: what the proposal asserted and which cited events show it."""

    key: str = Field(description="The predicate's key, normalized.")
    value: str = Field(description="The value the rule needs.")
    asserted: bool = Field(description="Whether the proposal asserts that value (ignoring case).")
    evidenced_by: list[str] = Field(description="Stored ids of the accepted cited events whose payload shows it.")


class Check(_Strict):
    """One check, in the shape of fp_agent_verify's checks: {name, rule_ids, passed, reason, evidence}."""

    name: CheckName = Field(description="finding, cited_event, cited_rule, asserted_predicate or action.")
    rule_ids: list[str] = Field(description="The cited rule id a cited_rule check is about; [] otherwise.")
    passed: bool = Field(description="Whether the check passed.")
    reason: str = Field(description="One sentence saying why it passed or failed.")
    evidence: dict[str, Any] = Field(
        description="What the check read: finding {finding_id, type, actor, event_ids}; cited_event {event_id, "
        "stored_id, in_finding, same_actor}; cited_rule {rule_id, found, family, applies, predicates}; "
        "asserted_predicate {key, value, evidenced_by}; action {action, supporting_rules}. null where not known."
    )


class Resolution(_Strict):
    """The answer of resolve_finding; every key is always present."""

    verified: bool = Field(description="True only when every check passed.")
    reason: str = Field(description="`all checks passed`, or the first failing check's reason in `checks` order.")
    finding_id: str = Field(description='The stored id of the finding, or "" when no finding has the cited id.')
    action: Action = Field(description="The action proposed (resolve or escalate), as submitted.")
    checks: list[Check] = Field(description="Every check in run order.")
    proposal: Proposal = Field(description="The proposal as submitted.")
    proposal_sha256: Sha256 = Field(description="SHA-256 of the canonical JSON of `proposal`.")


class ResolutionRecord(Resolution):
    """One line of the `resolutions` stream: the answer and when it was recorded."""

    recorded_at: str = Field(description="RFC3339 UTC instant the harness recorded the proposal.")


def decode_resolution(obj: Any) -> dict[str, Any]:
    """Validate a resolutions record and return its stored form; raises RecordError."""
    try:
        record = ResolutionRecord.model_validate(obj, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "record"
        raise RecordError(f'field "{where}": {first["msg"]}') from None
    return record.model_dump(mode="json")
