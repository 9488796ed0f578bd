"""A deterministic reference agent (docs/eval.md): no model, one fixed policy, for testing the runner and as the
floor a real agent should beat.

    python -m harness.eval.agents.reference

It reads the finding (search_findings), its events (search_events, get_raw_event) and the rules lookup_rules
returns for the predicates the events themselves show, and resolves only when a rule applies and every one of
the finding's events shows every predicate that rule needs; otherwise it escalates. It never reads free text
(reasons, titles, payload prose), so instructions planted there cannot steer it.

Given an alert (HARNESS_EVAL_ALERT, a triage scenario) it adjudicates that instead: it proposes FP only when every
finding has a deterministic check (docs/triage.md §7) and none is FATAL, lets fp_agent_verify read the package's
files at both commits, and keeps the FP only if it verified; otherwise it records `uncertain` (escalate to a
human). It never proposes TP: an indicator has to come from reading the package, and it reads no package text.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp import Client

from harness.aur.checks import route
from harness.eval.agents.client import call, connect
from harness.investigate.lookup_rules import FLAT_PREDICATES
from harness.triage.names import is_fatal

MAX_EVENTS = 100


def _shown(payload: Any, key: str) -> str | None:
    """A predicate value in a raw payload: the nested metadata object first, then the top level (the order
    resolve_finding checks), strings and booleans only."""
    if not isinstance(payload, dict):
        return None
    nested = payload.get("metadata")
    for source in (nested if isinstance(nested, dict) else {}, payload):
        if key in source:
            value = source[key]
            if isinstance(value, bool):
                return "true" if value else "false"
            return value if isinstance(value, str) and value else None
    return None


def _shared_predicates(payloads: list[Any]) -> dict[str, str]:
    """The predicates every payload shows with one value (ignoring case)."""
    shared: dict[str, str] = {}
    for key in FLAT_PREDICATES:
        values = [_shown(payload, key) for payload in payloads]
        if values and all(v is not None for v in values) and len({v.lower() for v in values if v}) == 1:
            shared[key] = str(values[0])
    return shared


async def decide(client: Client, finding_id: str) -> dict[str, Any]:
    """The resolve_finding arguments the policy arrives at."""
    _, found = await call(client, "search_findings", {"ids": [finding_id], "limit": 1})
    findings = found.get("findings") or []
    escalate: dict[str, Any] = {"finding_id": finding_id, "action": "escalate", "confidence": "medium",
                                "rationale": "no operator rule is supported by every event of the finding"}
    if not findings:
        return {**escalate, "rationale": "the finding could not be read"}
    finding = findings[0]
    event_ids = list(finding["event_ids"])[:MAX_EVENTS]
    escalate["finding_id"] = finding["id"]
    if not event_ids:
        return escalate
    _, events = await call(client, "search_events", {"ids": event_ids, "limit": MAX_EVENTS})
    stored = [event["id"] for event in events.get("events") or []]
    payloads = []
    for event_id in stored:
        _, raw = await call(client, "get_raw_event", {"id": event_id})
        payloads.append(raw.get("payload"))
    escalate["cited_event_ids"] = stored
    if len(stored) != len(event_ids):
        return escalate
    predicates = _shared_predicates(payloads)
    if not predicates:
        return escalate
    is_error, rules = await call(
        client, "lookup_rules", {"finding_id": finding["id"], "finding_family": finding["type"], **predicates}
    )
    matched = [] if is_error else rules.get("rules") or []
    if not matched:
        return escalate
    rule = matched[0]
    needed = {key: predicates[key] for key in rule["applies_to"]["metadata_match"]}
    return {
        "finding_id": finding["id"],
        "action": "resolve",
        "confidence": "high",
        "rationale": f"every event of the finding shows what operator rule {rule['id']} needs",
        "cited_event_ids": stored,
        "cited_rule_ids": [rule["id"]],
        **needed,
    }


def _evidence(alert: dict[str, Any], claim: str) -> list[dict[str, Any]]:
    """The alert's findings as verdict evidence items, each with the same fixed claim."""
    items = []
    for finding in alert["findings"]:
        item = {"rule_id": finding["rule_id"], "file": finding["file"], "line": finding["line"], "claim": claim}
        if finding["url"]:
            item["url"] = finding["url"]
        items.append(item)
    return items


def _verdict(alert: dict[str, Any], verdict: str, rationale: str, evidence: list[dict[str, Any]],
             changes: list[dict[str, Any]]) -> dict[str, Any]:
    transition = {key: alert[key] for key in ("old_version", "new_version", "old_commit", "new_commit")}
    return {
        "schema_version": 1, "package": alert["package"], "verdict": verdict, "confidence": "medium",
        "rationale": rationale, "transition": transition, "evidence": evidence, "proposed_changes": changes,
        "code_fixes": [],
    }


def fp_candidate(alert: dict[str, Any]) -> dict[str, Any] | None:
    """The FP verdict the alert's findings allow, or None when one of them is FATAL (never suppressible) or has
    no deterministic check (so an FP could never verify)."""
    findings = alert["findings"]
    if any(is_fatal(f["rule_id"]) or route(f["rule_id"], f["file"]) == "no_check" for f in findings):
        return None
    rules = sorted({f["rule_id"] for f in findings})
    suppressions = [
        {"kind": "suppression", "rule_id": rule, "reason": "The finding is re-reported on an unchanged package part."}
        for rule in rules
    ]
    return _verdict(alert, "FP", f"Every finding ({', '.join(rules)}) has a deterministic check; the harness "
                    "replays them against the AUR at both commits.",
                    _evidence(alert, "The reported part is unchanged or declared, as the check shows."), suppressions)


async def adjudicate(client: Client, alert: dict[str, Any]) -> None:
    """FP when it verifies, else uncertain; both through fp_agent_verify, which records them in the ledger."""
    candidate = fp_candidate(alert)
    if candidate is not None:
        is_error, result = await call(client, "fp_agent_verify", {"verdict": candidate})
        if not is_error and result.get("verified") is True:
            return
    rationale = ("The alert cannot be shown a false positive by deterministic checks, and no indicator is "
                 "established from evidence; a human has to decide.")
    await call(client, "fp_agent_verify", {"verdict": _verdict(
        alert, "uncertain", rationale, _evidence(alert, "Reported by the watcher; not shown to be a false trigger."),
        [])})


async def run(finding_id: str, alert_json: str) -> None:
    async with connect() as client:
        if alert_json:
            await adjudicate(client, json.loads(alert_json))
        else:
            await call(client, "resolve_finding", await decide(client, finding_id))


def main() -> int:
    anyio.run(run, os.environ["HARNESS_EVAL_FINDING_ID"], os.environ.get("HARNESS_EVAL_ALERT", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
