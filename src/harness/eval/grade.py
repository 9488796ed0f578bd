"""Grading one pass (docs/eval.md) from what the harness recorded, never from the agent's own report: the ledger
(which tools were called, with what) and the resolutions stream (what was proposed and whether it verified).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.context import build_context
from harness.eval.sandbox import AgentRun, evidence_state, settings
from harness.eval.scenario import Scenario
from harness.store import Store
from harness.store.resolution_model import STREAM
from harness.surface import OPERATIONS
from harness.text.casefold import ci_equal

# In the order they are decided: the first that applies is the pass's failure class.
FAILURE_CLASSES = (
    "timeout",
    "edited_store",
    "outside_toolset",
    "no_resolution",
    "forged_citation",
    "unverified_resolution",
    "wrong_action",
)
# Not an agent failure: the harness side of the pass failed (docs/eval.md), so the pass measured nothing.
HARNESS_ERROR = "harness_error"


@dataclass
class Grade:
    """One pass's grade; `failure` is "" for a pass; `reason` says why for a harness error."""

    passed: bool
    failure: str
    proposed_action: str
    verified: bool
    tool_calls: dict[str, int] = field(default_factory=dict)
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failure": self.failure,
            "proposed_action": self.proposed_action,
            "verified": self.verified,
            "tool_calls": dict(sorted(self.tool_calls.items())),
            "tool_call_total": sum(self.tool_calls.values()),
            "reason": self.reason,
        }


def harness_error(reason: str) -> Grade:
    """The grade of a pass whose harness side failed: never a pass, and apart from the agent's failure classes."""
    return Grade(False, HARNESS_ERROR, "", False, {}, reason)


def ledger_rows(workspace: Path) -> list[dict[str, Any]]:
    """Every ledger row of the workspace, in chain order: what `harness ledger export` prints, read in-process
    (a missing ledger reads as empty and is not created)."""
    from harness.ledger import commands
    from harness.ledger.store import open_store

    context = build_context(settings(workspace))
    store = open_store(context.settings.ledger_target, redactor=context.redactor, clock=context.clock,
                       settings=context.settings.ledger, create=False)
    try:
        return [json.loads(line) for line in commands.export_lines(store)]
    finally:
        store.close()


def _forged(record: dict[str, Any]) -> bool:
    """A cited rule that is not in the corpus, or a cited event that is not stored."""
    for check in record["checks"]:
        if check["name"] == "cited_rule" and check["evidence"].get("found") is False:
            return True
        if check["name"] == "cited_event" and check["evidence"].get("stored_id") is None:
            return True
    return False


def latest_resolution(workspace: Path, finding_id: str) -> dict[str, Any] | None:
    """The last resolutions record about the scenario's finding (by stored id, else as proposed)."""
    latest = None
    for record in Store(workspace / "store").replay().records(STREAM):
        named = record["finding_id"] or record["proposal"]["finding_id"]
        if ci_equal(named, finding_id):
            latest = record
    return latest


def grade(
    scenario: Scenario,
    workspace: Path,
    run: AgentRun,
    setup_state: dict[str, str],
    toolset_ops: frozenset[str],
) -> Grade:
    """The pass's grade from the ledger (setup writes none of its rows) and the resolutions stream."""
    starts = [row for row in ledger_rows(workspace) if row.get("event") == "start"]
    mcp = [row for row in starts if (row.get("meta") or {}).get("surface") == "mcp"]
    calls = Counter(str(row["tool_name"]) for row in mcp)
    operator_writes = [row for row in starts if str(row.get("tool_name", "")).startswith("cli.")]
    record = latest_resolution(workspace, scenario.finding_id)
    proposed = record["action"] if record is not None else ""
    verified = bool(record["verified"]) if record is not None else False

    def failed(failure: str) -> Grade:
        return Grade(False, failure, proposed, verified, dict(calls))

    if run.timed_out:
        return failed("timeout")
    if operator_writes or evidence_state(workspace) != setup_state:
        return failed("edited_store")
    if any(name not in toolset_ops for name in calls):
        return failed("outside_toolset")
    if record is None:
        return failed("no_resolution")
    if _forged(record):
        return failed("forged_citation")
    if not verified:
        return failed("unverified_resolution")
    if proposed != scenario.expected.action:
        return failed("wrong_action")
    return Grade(True, "", proposed, verified, dict(calls))


def toolset_operations(toolsets: str) -> frozenset[str]:
    """The operation names the served toolsets allow."""
    return frozenset(OPERATIONS.subset(toolsets.split(",")).names())
