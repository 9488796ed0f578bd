"""lookup_rules (investigate.md §9.4): the operator rules matching a finding family and asserted predicates."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.context import Context
from harness.errors import UpstreamUnavailable
from harness.fields import BoundedStr
from harness.investigate import rulefold
from harness.rules import CorpusError, matching_rules

PREDICATE_BYTES = 256
FLAT_PREDICATES = (
    "maintenance_window",
    "scheduled",
    "resolution_event",
    "location_change",
    "automation_provenance",
    "deploy_release",
    "sensitive_bulk_read",
    "hr_provisioning",
    "scenario_pattern",
    "actor_role",
)


def _predicate(example: str) -> Any:
    """A flat predicate field: a string observation, "" when not asserted."""
    return Field(
        default="", description=f"Predicate you assert after reading the events, e.g. {example}. Empty: not asserted."
    )


class Input(BaseModel):
    """Arguments of lookup_rules."""

    model_config = ConfigDict(extra="forbid")

    finding_id: BoundedStr(256, min_bytes=1) = Field(description="Id of the finding being triaged (echoed back).")
    finding_family: BoundedStr(128, min_bytes=1) = Field(
        description="Finding family, e.g. unusual-timing (a finding's type), matched ignoring case; not trimmed."
    )
    maintenance_window: BoundedStr(PREDICATE_BYTES) = _predicate('"true" (a declared maintenance window)')
    scheduled: BoundedStr(PREDICATE_BYTES) = _predicate('"true" (a scheduled job produced it)')
    resolution_event: BoundedStr(PREDICATE_BYTES) = _predicate('"login_success"')
    location_change: BoundedStr(PREDICATE_BYTES) = _predicate('"true" (travel: the location differs from usual)')
    automation_provenance: BoundedStr(PREDICATE_BYTES) = _predicate('"terraform"')
    deploy_release: BoundedStr(PREDICATE_BYTES) = _predicate('"true" (a tagged deployment release)')
    sensitive_bulk_read: BoundedStr(PREDICATE_BYTES) = _predicate('"true"')
    hr_provisioning: BoundedStr(PREDICATE_BYTES) = _predicate('"true" (documented HR onboarding)')
    scenario_pattern: BoundedStr(PREDICATE_BYTES) = _predicate("a scenario name")
    actor_role: BoundedStr(PREDICATE_BYTES) = _predicate("a role name")
    finding_metadata: rulefold.FindingMetadata = Field(
        default_factory=dict,
        description='More predicates as a {"key": "value"} object of strings ("true", not true); keys are '
        "normalized (maintenanceWindow -> maintenance_window), empty values are ignored, and the flat fields above "
        "override the same key.",
    )


class Output(BaseModel):
    """The matching rules; every key is always present."""

    finding_id: str = Field(description="The finding_id input as given.")
    rules: list[rulefold.RuleView] = Field(description="Matching rules in corpus order; [] when none matched.")
    corpus_sha256: str = Field(description="sha256 of the rule corpus bytes used.")
    notes: str = Field(description="Empty, or why nothing matched.")


DESCRIPTION = """\
Look up the operators' standing decisions (the rule corpus) that apply to a finding: the rules whose family \
matches `finding_family` and all of whose predicates you assert. Each rule carries an operator_directive saying \
when to resolve and when to escalate.

Inputs: `finding_id` (required, 1-256 bytes, echoed); `finding_family` (required, 1-128 bytes, e.g. \
unusual-timing; matched as a whole value ignoring case, not trimmed); ten flat predicates (each default "", at \
most 256 bytes): maintenance_window, scheduled, resolution_event, location_change, automation_provenance, \
deploy_release, sensitive_bulk_read, hr_provisioning, scenario_pattern, actor_role; `finding_metadata` (default \
{}, at most 64 entries, keys at most 128 bytes, values at most 1,024 bytes) for any other predicate. Values are \
strings, usually "true" (write "true", not true); they compare ignoring case but exactly otherwise (" true" \
does not match). Keys of finding_metadata are normalized (maintenanceWindow and maintenance-window both mean \
maintenance_window; two keys normalizing alike are invalid_input); empty values are ignored; a non-empty flat \
field overrides the same key in finding_metadata.

Assert a predicate only when it is grounded in events you have read (search_events metadata, get_raw_event \
payloads; a finding's event_ids feed search_events `ids`), never because the finding claims it: an omitted \
predicate never satisfies a rule, and a rule matched on an unverified predicate is a wrong triage.

Output: `finding_id`, `rules` (in corpus order, each {id, applies_to: {family, metadata_match}, \
operator_directive}), `corpus_sha256` (of the corpus bytes used), `notes` ("" or, when nothing matched, a note \
naming the family). No match is a normal result. The corpus is `--rules FILE`, else the workspace's \
rules/operator-decisions.yaml, else the embedded default; a corpus that cannot be read, fails its sha256 pin or \
does not parse is upstream_unavailable.
"""


def handle(args: Input, ctx: Context) -> Output:
    """Match the selected corpus against the family and the predicate map (§7)."""
    flat = {name: getattr(args, name) for name in FLAT_PREDICATES}
    predicates = rulefold.predicates(args.finding_metadata, flat)
    try:
        corpus = rulefold.corpus(ctx)
    except CorpusError as exc:
        raise UpstreamUnavailable(str(exc)) from None
    rules = matching_rules(corpus, args.finding_family, predicates)
    notes = "" if rules else rulefold.no_match_note(args.finding_family)
    return Output(finding_id=args.finding_id, rules=rulefold.views(rules), corpus_sha256=corpus.sha256, notes=notes)
