"""lookup_rules (docs/investigate.md §9.4): the operator rules matching a finding family and asserted predicates."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from harness.context import Context
from harness.errors import InvalidInput, UpstreamUnavailable
from harness.fields import BoundedStr, Echoed
from harness.investigate import rulefold
from harness.rules import RULE_ID_RE, CorpusError, matches, matching_rules, rules_by_id
from harness.text.sanitize import echo

PREDICATE_BYTES = 256
MAX_RULE_IDS = 64
RULE_ID_PROBLEM = "must be a rule id: a letter or digit, then at most 63 letters, digits, '.', '_' or '-'"
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


def _check_rule_id(value: str) -> str:
    # Refused rather than looked up: no corpus id has another shape, and the message never echoes the value.
    if RULE_ID_RE.fullmatch(value) is None:
        raise ValueError(RULE_ID_PROBLEM)
    return value


class Input(BaseModel):
    """Arguments of lookup_rules."""

    model_config = ConfigDict(extra="forbid")

    finding_id: BoundedStr(256, min_bytes=1) = Field(description="Id of the finding being triaged (echoed back).")
    finding_family: BoundedStr(128) = Field(
        default="",
        description="Finding family, e.g. unusual-timing (a finding's type), matched ignoring case; not trimmed. "
        "Required unless rule_ids is given.",
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
    rule_ids: Annotated[
        list[Annotated[BoundedStr(64, min_bytes=1), AfterValidator(_check_rule_id)]], Field(max_length=MAX_RULE_IDS)
    ] = Field(
        default_factory=list,
        description=f"Rule ids to look up (at most {MAX_RULE_IDS}, e.g. R-001), each matched ignoring case; an id "
        "not in the corpus adds a note. Alone: the named rules. With finding_family: the named rules that also "
        "match the family and predicates.",
    )


class Output(BaseModel):
    """The matching rules; every key is always present."""

    finding_id: Echoed = Field(description="The finding_id input, sanitized like stored text.")
    rules: list[rulefold.RuleView] = Field(description="Matching rules in corpus order; [] when none matched.")
    corpus_sha256: str = Field(description="sha256 of the rule corpus bytes used.")
    notes: str = Field(
        description="Explanations joined by one space: rule ids not in the corpus, named rules that do not match, "
        "or why nothing matched; empty when there is none."
    )


DESCRIPTION = """\
Look up the operators' standing decisions (the rule corpus) that apply to a finding: the rules whose family \
matches `finding_family` and all of whose predicates you assert, or the rules named in `rule_ids`. The family is matched as a whole value ignoring case. Each rule \
carries an operator_directive saying when to resolve and when to escalate. Rules come back in corpus order.

`rule_ids` alone returns the named rules whatever their family, so you can check a rule id you are about to cite \
(predicates need finding_family and are refused without it); with `finding_family` it keeps only the named rules \
that also match (a note names each one that does not, and each id not in the corpus). Predicate values are \
strings, usually "true" (write "true", not true); they compare ignoring case but exactly otherwise (" true" \
does not match). Keys of finding_metadata are normalized (maintenanceWindow and maintenance-window both mean \
maintenance_window; two keys normalizing alike are invalid_input); empty values are ignored; a non-empty flat \
field overrides the same key in finding_metadata.

Assert a predicate only when it is grounded in events you have read (search_events metadata, get_raw_event \
payloads; a finding's event_ids feed search_events `ids`), never because the finding claims it: an omitted \
predicate never satisfies a rule, and a rule matched on an unverified predicate is a wrong triage.

No match is a normal result with a note. The corpus is `--rules FILE`, else the workspace's \
rules/operator-decisions.yaml, else the embedded default; a corpus that cannot be read, fails its sha256 pin or \
does not parse is upstream_unavailable. Errors otherwise: invalid_input for a bad argument.
"""


def _check_selection(args: Input) -> None:
    """A family or rule ids select the rules; predicates are only ever matched against a family's rules."""
    if args.finding_family:
        return
    if not args.rule_ids:
        raise InvalidInput("finding_family: is required unless rule_ids is given")
    asserted = [name for name in FLAT_PREDICATES if getattr(args, name)]
    asserted += [f"finding_metadata.{key}" for key, value in args.finding_metadata.items() if value]
    if asserted:
        raise InvalidInput(f"{asserted[0]}: a predicate needs finding_family")


def handle(args: Input, ctx: Context) -> Output:
    """Select rules by id, by family and predicates (docs/investigate.md §7), or both: the named rules that also match."""
    _check_selection(args)
    flat = {name: getattr(args, name) for name in FLAT_PREDICATES}
    predicates = rulefold.predicates(args.finding_metadata, flat)
    try:
        corpus = rulefold.corpus(ctx)
    except CorpusError as exc:
        raise UpstreamUnavailable(str(exc)) from None
    named, missing = rules_by_id(corpus, args.rule_ids)
    notes = [f"no rule with id {echo(rule_id)} exists in the corpus" for rule_id in missing]
    if not args.finding_family:
        rules = named
    elif not args.rule_ids:
        rules = matching_rules(corpus, args.finding_family, predicates)
        if not rules:
            notes.append(rulefold.no_match_note(args.finding_family))
    else:
        rules = [rule for rule in named if matches(rule, args.finding_family, predicates)]
        notes += [
            f"rule {echo(rule.id)} does not match family {echo(args.finding_family)} with the supplied predicates"
            for rule in named
            if rule not in rules
        ]
    return Output(
        finding_id=args.finding_id, rules=rulefold.views(rules), corpus_sha256=corpus.sha256, notes=" ".join(notes)
    )
