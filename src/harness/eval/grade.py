"""Grading one pass (docs/eval.md) from what the harness recorded, never from the agent's own report: the ledger
(which tools were called, with what; for a triage scenario the result of each fp_agent_verify call) and the
resolutions stream (what was proposed and whether it verified).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.context import build_context
from harness.eval.sandbox import AgentRun, evidence_state, settings
from harness.eval.scenario import Scenario
from harness.ledger import commands
from harness.ledger.store import LedgerStore, open_store
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
    "no_verdict",
    "unverified_verdict",
    "wrong_verdict",
)
# The classes only a triage scenario (expected.verdict) can end in; the resolution ones only an investigation one.
TRIAGE_FAILURE_CLASSES = ("no_verdict", "unverified_verdict", "wrong_verdict")
VERIFY = "fp_agent_verify"
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
    proposed_verdict: str = ""
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failure": self.failure,
            "proposed_action": self.proposed_action,
            "proposed_verdict": self.proposed_verdict,
            "verified": self.verified,
            "tool_calls": dict(sorted(self.tool_calls.items())),
            "tool_call_total": sum(self.tool_calls.values()),
            "reason": self.reason,
        }


def harness_error(reason: str) -> Grade:
    """The grade of a pass whose harness side failed: never a pass, and apart from the agent's failure classes."""
    return Grade(False, HARNESS_ERROR, "", False, {}, reason=reason)


@contextmanager
def _ledger(workspace: Path) -> Iterator[LedgerStore]:
    """The workspace's ledger as its server wrote it (a missing ledger reads as empty and is not created)."""
    context = build_context(settings(workspace))
    store = open_store(context.settings.ledger_target, redactor=context.redactor, clock=context.clock,
                       settings=context.settings.ledger, create=False)
    try:
        yield store
    finally:
        store.close()


def ledger_rows(workspace: Path) -> list[dict[str, Any]]:
    """Every ledger row of the workspace, in chain order: what `harness ledger export` prints, read in-process."""
    with _ledger(workspace) as store:
        return [json.loads(line) for line in commands.export_lines(store)]


def _call_key(row: dict[str, Any]) -> tuple[str, str, str]:
    return (str(row.get("conversation_id")), str(row.get("request_id")), str(row.get("tool_call_id")))


def verify_results(workspace: Path, rows: list[dict[str, Any]], mcp: set[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """The result of every fp_agent_verify call over MCP (`mcp`: the keys of the calls whose start row says so) that
    returned one, in chain order, as the ledger's end `rows` hold it (the full result is the row's stored sidecar
    when it is over the preview cap). Error ends (an invalid verdict) carry no result and are not verdicts."""
    results = []
    ends = [
        row for row in rows
        if row.get("event") == "end" and row.get("tool_name") == VERIFY and row.get("status") == "ok"
        and _call_key(row) in mcp
    ]
    if not ends:
        return results
    with _ledger(workspace) as store:
        with store.snapshot() as snap:
            for row in sorted(ends, key=lambda r: int(r["chain_seq"])):
                text = snap.sidecar(uuid.UUID(row["id"])) if row.get("result_sidecar_path") else row["result_preview"]
                try:
                    result = json.loads(text or "")
                except ValueError:
                    # A result the ledger could not keep whole is no evidence of a verdict: fail closed.
                    continue
                if isinstance(result, dict):
                    results.append(result)
    return results


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
    rows = ledger_rows(workspace)
    starts = [row for row in rows if row.get("event") == "start"]
    # The surface is recorded on the start row; its end row shares the call's key.
    mcp = [row for row in starts if (row.get("meta") or {}).get("surface") == "mcp"]
    calls = Counter(str(row["tool_name"]) for row in mcp)
    operator_writes = any(str(row.get("tool_name", "")).startswith("cli.") for row in starts)
    # The classes every pass is checked for first, in this order, whatever kind of scenario it is.
    if run.timed_out:
        first = "timeout"
    elif operator_writes or evidence_state(workspace) != setup_state:
        first = "edited_store"
    elif any(name not in toolset_ops for name in calls):
        first = "outside_toolset"
    else:
        first = ""
    if scenario.triage:
        return _grade_verdict(scenario, verify_results(workspace, rows, {_call_key(row) for row in mcp}), calls, first)
    record = latest_resolution(workspace, scenario.finding_id)
    proposed = record["action"] if record is not None else ""
    verified = bool(record["verified"]) if record is not None else False

    def failed(failure: str) -> Grade:
        return Grade(False, failure, proposed, verified, dict(calls))

    if first:
        return failed(first)
    if record is None:
        return failed("no_resolution")
    if _forged(record):
        return failed("forged_citation")
    if not verified:
        return failed("unverified_resolution")
    if proposed != scenario.expected.action:
        return failed("wrong_action")
    return Grade(True, "", proposed, verified, dict(calls))


def _grade_verdict(scenario: Scenario, results: list[dict[str, Any]], calls: Counter[str], first: str) -> Grade:
    """A triage pass (`results`: what its fp_agent_verify calls returned; `first`: the class every pass is checked for
    first, if any): the last verdict must be an expected one, and verified unless it is `uncertain` (never verified,
    docs/triage.md §9: escalating to a human is the verdict then)."""
    last = results[-1] if results else None
    said = str(last.get("verdict", "")) if last is not None else ""
    verified = last.get("verified") is True if last is not None else False

    def graded(failure: str) -> Grade:
        return Grade(not failure, failure, "", verified, dict(calls), said)

    if first:
        return graded(first)
    if last is None:
        return graded("no_verdict")
    if said != "uncertain" and not verified:
        return graded("unverified_verdict")
    if said not in scenario.expected.verdict:
        return graded("wrong_verdict")
    return graded("")


def toolset_operations(toolsets: str) -> frozenset[str]:
    """The operation names the served toolsets allow."""
    return frozenset(OPERATIONS.subset(toolsets.split(",")).names())
