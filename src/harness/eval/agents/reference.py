"""A deterministic reference agent (docs/eval.md): no model, one fixed policy, for testing the runner and as the
floor a real agent should beat.

    python -m harness.eval.agents.reference

It reads the finding (search_findings), its events (search_events, get_raw_event) and the rules lookup_rules
returns for the predicates the events themselves show, and resolves only when a rule applies and every one of
the finding's events shows every predicate that rule needs; otherwise it escalates. It never reads free text
(reasons, titles, payload prose), so instructions planted there cannot steer it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp import Client

from harness.eval.agents.client import call, connect
from harness.investigate.lookup_rules import FLAT_PREDICATES

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


async def run(finding_id: str) -> None:
    async with connect() as client:
        await call(client, "resolve_finding", await decide(client, finding_id))


def main() -> int:
    anyio.run(run, os.environ["HARNESS_EVAL_FINDING_ID"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
