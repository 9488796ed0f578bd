"""The checks of resolve_finding (docs/investigate.md §9.7) over one store view and the rule corpus: pure, no writes.

Like fp_agent_verify, nothing the agent claims is taken on trust: a cited event must be stored and belong to the
finding, a cited rule must load from the corpus, and a predicate a rule needs must be on a cited event, not only
in the proposal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.investigate.views import payload_value
from harness.rules import Corpus, Rule, rules_by_id
from harness.store import StoreView
from harness.store.resolution_model import Check, Proposal
from harness.text.casefold import ci_equal, ci_key
from harness.text.sanitize import echo, sanitize_field


@dataclass(frozen=True)
class _Accepted:
    """A cited event that passed its check: its stored id and payload."""

    stored_id: str
    payload: Any


def _check(name: str, passed: bool, reason: str, evidence: dict[str, Any], rule_ids: tuple[str, ...] = ()) -> Check:
    return Check(name=name, rule_ids=list(rule_ids), passed=passed, reason=reason, evidence=evidence)


def _distinct(values: Iterable[str]) -> list[str]:
    """Values without repeats ignoring case, first spelling kept, order kept."""
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        if ci_key(value) not in seen:
            seen.add(ci_key(value))
            out.append(value)
    return out


def _stored(view: StoreView, stream: str, requested: str) -> dict[str, Any] | None:
    """The record whose id equals `requested` ignoring case: a citation names one record, never a prefix."""
    stored_id = view.exact_id(stream, ci_key(requested))
    return view.get(stream, stored_id) if stored_id is not None else None


def _finding_check(proposal: Proposal, finding: dict[str, Any] | None) -> Check:
    if finding is None:
        evidence = {"finding_id": None, "type": None, "actor": None, "event_ids": []}
        return _check("finding", False, f"no finding has id {echo(proposal.finding_id)}", evidence)
    evidence = {
        "finding_id": finding["id"],
        "type": finding["type"],
        "actor": finding["actor"],
        "event_ids": finding["event_ids"],
    }
    return _check("finding", True, f"finding {finding['id']} exists", evidence)


def _event_check(requested: str, event: dict[str, Any] | None, finding: dict[str, Any] | None) -> Check:
    evidence: dict[str, Any] = {"event_id": sanitize_field(requested), "stored_id": None, "in_finding": False, "same_actor": False}
    if event is None:
        return _check("cited_event", False, f"cited event {echo(requested)} does not exist", evidence)
    evidence["stored_id"] = event["id"]
    if finding is None:
        return _check("cited_event", False, f"cited event {event['id']} cannot belong to a missing finding", evidence)
    evidence["in_finding"] = any(ci_equal(event["id"], own) for own in finding["event_ids"])
    evidence["same_actor"] = bool(finding["actor"]) and ci_equal(event["actor"], finding["actor"])
    if evidence["in_finding"] or evidence["same_actor"]:
        return _check("cited_event", True, f"cited event {event['id']} belongs to finding {finding['id']}", evidence)
    reason = f"cited event {event['id']} is neither one of finding {finding['id']}'s events nor its actor's"
    return _check("cited_event", False, reason, evidence)


def _shown_by(accepted: list[_Accepted], key: str, value: str) -> list[str]:
    """Stored ids of the accepted events whose payload shows `key` equal to `value` ignoring case."""
    return [
        event.stored_id
        for event in accepted
        if (shown := payload_value(event.payload, key)) is not None and ci_equal(shown, value)
    ]


def _rule_check(
    requested: str,
    rule: Rule | None,
    proposal: Proposal,
    finding: dict[str, Any] | None,
    accepted: list[_Accepted],
) -> Check:
    evidence: dict[str, Any] = {"rule_id": requested, "found": rule is not None, "family": None, "applies": None,
                                "predicates": []}
    if rule is None:
        return _check("cited_rule", False, f"rule {echo(requested)} does not exist in the corpus", evidence, (requested,))
    ids = (rule.id,)
    evidence["family"] = rule.family
    predicates = [
        {
            "key": key,
            "value": want,
            "asserted": key in proposal.predicates and ci_equal(proposal.predicates[key], want),
            "evidenced_by": _shown_by(accepted, key, want),
        }
        for key, want in rule.metadata_match.items()
    ]
    evidence["predicates"] = predicates
    if finding is None:
        return _check("cited_rule", False, f"rule {rule.id} cannot apply to a missing finding", evidence, ids)
    evidence["applies"] = ci_equal(rule.family, finding["type"])
    if not evidence["applies"]:
        reason = f"rule {rule.id} applies to family {echo(rule.family)}, not {echo(finding['type'])}"
        return _check("cited_rule", False, reason, evidence, ids)
    if proposal.action == "escalate":
        return _check("cited_rule", True, f"rule {rule.id} exists and applies to {echo(rule.family)}", evidence, ids)
    for predicate in predicates:
        need = f"rule {rule.id} needs {predicate['key']} {echo(predicate['value'])}"
        if not predicate["asserted"]:
            return _check("cited_rule", False, f"{need}, which the proposal does not assert", evidence, ids)
        if not predicate["evidenced_by"]:
            return _check("cited_rule", False, f"{need}, which no accepted cited event shows", evidence, ids)
    shown = sorted({event_id for predicate in predicates for event_id in predicate["evidenced_by"]})
    basis = f"; shown by {', '.join(shown)}" if shown else ""
    return _check("cited_rule", True, f"rule {rule.id} applies to {echo(rule.family)}{basis}", evidence, ids)


def _predicate_check(key: str, value: str, accepted: list[_Accepted]) -> Check:
    evidenced_by = _shown_by(accepted, key, value)
    evidence = {"key": key, "value": value, "evidenced_by": evidenced_by}
    if evidenced_by:
        return _check("asserted_predicate", True, f"{key} {echo(value)} is shown by {', '.join(evidenced_by)}", evidence)
    return _check("asserted_predicate", False, f"{key} {echo(value)} is asserted but no accepted cited event shows it",
                  evidence)


def _action_check(proposal: Proposal, rule_checks: list[Check]) -> Check:
    supporting = [check.rule_ids[0] for check in rule_checks if check.passed]
    evidence = {"action": proposal.action, "supporting_rules": supporting}
    if proposal.action == "escalate":
        return _check("action", True, "an escalation needs no rule", evidence)
    if supporting:
        return _check("action", True, f"the resolve rests on {', '.join(supporting)}", evidence)
    reason = "a resolve must rest on at least one cited rule that applies and whose predicates cited events show"
    return _check("action", False, reason, evidence)


def check_proposal(proposal: Proposal, view: StoreView, corpus: Corpus | str) -> tuple[list[Check], str]:
    """Every check in run order, and the finding's stored id ("" when missing). `corpus` is the loaded corpus or,
    when it could not be loaded, the reason, which then fails each cited rule."""
    finding = _stored(view, "findings", proposal.finding_id)
    checks = [_finding_check(proposal, finding)]
    accepted: list[_Accepted] = []
    for requested in _distinct(proposal.cited_event_ids):
        event = _stored(view, "events", requested)
        check = _event_check(requested, event, finding)
        checks.append(check)
        if check.passed and event is not None:
            accepted.append(_Accepted(event["id"], event["payload"]))
    rule_checks: list[Check] = []
    for requested in _distinct(proposal.cited_rule_ids):
        if isinstance(corpus, str):
            evidence = {"rule_id": requested, "found": None, "family": None, "applies": None, "predicates": []}
            reason = f"rule {echo(requested)} cannot be checked: {corpus}"
            rule_checks.append(_check("cited_rule", False, reason, evidence, (requested,)))
            continue
        named, _ = rules_by_id(corpus, [requested])
        rule_checks.append(_rule_check(requested, named[0] if named else None, proposal, finding, accepted))
    checks += rule_checks
    checks += [_predicate_check(key, value, accepted) for key, value in sorted(proposal.predicates.items())]
    checks.append(_action_check(proposal, rule_checks))
    return checks, finding["id"] if finding is not None else ""
