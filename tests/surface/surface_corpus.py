"""The fixture corpus of real operation calls for the parity test: success, empty, and error cases."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runners import run_cli
from store_backends import StoreBackend, workspace_store

from harness.aur.client import UnusableClient
from harness.triage.verdict import validate_verdict
from harness.triage.verify import verify
from harness.workspace import load_samples
from tests.investigate.baseline_support import BASELINE_B
from tests.triage.triage_samples import v0


def _verdict(**changes: Any) -> dict[str, Any]:
    return {**v0(), **changes}


def _uncertain_result() -> dict[str, Any]:
    """The real fp_agent_verify result of an uncertain V0 (it makes no request): one the renderers refuse."""
    verdict = validate_verdict(_verdict(verdict="uncertain", proposed_changes=[]))
    day = datetime(2026, 1, 15, tzinfo=UTC)
    return verify(verdict, UnusableClient("unused"), lambda: day).model_dump(mode="json")


PACKAGE_CORPUS: list[tuple[str, dict[str, Any]]] = [
    # search_events over the sample data (prepare_workspace runs harness init): matches with a rule, a dropped
    # window, a truncated page, an empty result, refusals and an ambiguous id prefix.
    ("search_events", {"actor": "DEPLOY-SVC", "finding_family": "unusual-timing",
                       "finding_metadata": {"maintenanceWindow": "true"}}),
    ("search_events", {"actor": "baron", "since": "2027-01-01"}),
    ("search_events", {"ids": ["evt-0001", "finding-evt-0024-off-hours"], "limit": 1}),
    ("search_events", {"actor": "nobody"}),
    ("search_events", {"target": "PORTAL.AZURE.COM", "actor": "baron"}),
    ("search_events", {"ip": "198.51.100.7", "type": "login"}),
    ("search_events", {"ids": ["evt-"]}),
    ("search_events", {"limit": 0}),
    ("search_events", {"since": "yesterday"}),
    ("search_events", {"eventType": "push"}),
    ("search_events", {"finding_metadata": {"maintenance_window": True}}),
    # search_findings: all, by id, empty, refusals.
    ("search_findings", {}),
    ("search_findings", {"ids": ["EVT-0024-OFF-HOURS"]}),
    ("search_findings", {"type": "forge"}),
    ("search_findings", {"until": "2026-04-10"}),
    ("search_findings", {"ids": ["evt-"]}),
    # check_baseline over baseline B (prepare_workspace stores it): a match, an absent entity, refusals.
    ("check_baseline", {"entity": "DEPLOY-SVC", "event_type": "container_restart"}),
    ("check_baseline", {"entity": "ci-bot", "source": "FR"}),
    ("check_baseline", {"entity": "mallory"}),
    ("check_baseline", {"entity": ""}),
    ("check_baseline", {"entity": "baron", "eventType": "login"}),
    # lookup_rules over the embedded corpus: matches, no match, refusals.
    ("lookup_rules", {"finding_id": "f-1", "finding_family": "unusual-timing", "maintenance_window": "true",
                      "finding_metadata": {"locationChange": "TRUE"}}),
    ("lookup_rules", {"finding_id": "f-1", "finding_family": "forged-family"}),
    ("lookup_rules", {"finding_id": "f-1", "rule_ids": ["r-003", "R-999"]}),
    ("lookup_rules", {"finding_id": "f-1", "finding_family": "unusual-timing", "rule_ids": ["R-001", "R-005"],
                      "maintenance_window": "true"}),
    ("lookup_rules", {"finding_id": "f-1", "rule_ids": ["R-001"], "scheduled": "true"}),
    ("lookup_rules", {"finding_id": "f-1", "rule_ids": ["R 001"]}),
    ("lookup_rules", {"finding_id": "f-1", "finding_family": ""}),
    ("lookup_rules", {"finding_id": "f-1", "finding_family": "x", "finding_metadata": {"scheduled": True}}),
    ("lookup_rules", {"finding_id": "f-1", "finding_family": "x", "finding_metadata": {"a_b": "1", "aB": "2"}}),
    # get_raw_event: found (also through a finding id), not found, refusals.
    ("get_raw_event", {"id": "evt-0005"}),
    ("get_raw_event", {"id": "finding-evt-0024-off-hours"}),
    ("get_raw_event", {"id": "finding-nope"}),
    ("get_raw_event", {"id": "evt-"}),
    ("get_raw_event", {"id": ""}),
    # github_actor: only calls refused before any request, since the corpus workspace has no fake GitHub.
    ("github_actor", {"login": "../admin"}),
    ("github_actor", {"login": "a b"}),
    ("github_actor", {"login": "a" * 40}),
    ("github_actor", {}),
    ("github_actor", {"login": "octocat", "per_page": 100}),
    # fp_agent_verify: uncertain verdicts and invalid ones never reach the AUR.
    ("fp_agent_verify", {"verdict": _verdict(verdict="uncertain", proposed_changes=[])}),
    ("fp_agent_verify", {"verdict": _verdict(verdict="uncertain", proposed_changes=[], evidence=[])}),
    ("fp_agent_verify", {"verdict": _verdict(rationale="old\u2014new")}),
    ("fp_agent_verify", {"verdict": _verdict(schema_version="1")}),
    ("fp_agent_verify", {"verdict": _verdict(notes="x")}),
    ("fp_agent_verify", {"verdict": _verdict(transition=None)}),
    ("fp_agent_verify", {"verdict": "not an object"}),
    ("fp_agent_verify", {}),
    # fp_agent_pr, fp_agent_alert: refusals and invalid input (success needs a verified result, see tests/triage).
    ("fp_agent_pr", {"result": _uncertain_result(), "target_repo": "trustsight", "date": "2026-01-15"}),
    ("fp_agent_pr", {"result": {}, "target_repo": "trustsight", "date": "2026-01-15"}),
    ("fp_agent_pr", {"result": _uncertain_result(), "target_repo": "gitlab", "date": "2026-01-15"}),
    ("fp_agent_pr", {"result": _uncertain_result(), "target_repo": "trustsight", "date": "2026-02-30"}),
    ("fp_agent_pr", {"result": _uncertain_result(), "target_repo": "trustsight"}),
    ("fp_agent_alert", {"result": _uncertain_result()}),
    ("fp_agent_alert", {"result": {"verified": True}}),
    ("fp_agent_alert", {}),
    # repo_file: the corpus workspace has no watcher checkout.
    ("repo_file", {"path": "src/trustsight/rules.py"}),
    ("repo_file", {"path": "/etc/passwd"}),
    ("repo_file", {"path": "src/trustsight/x.py", "max_bytes": 0}),
    ("repo_file", {}),
    # resolve_finding: only calls that leave search_findings' answers alone (the MCP calls all run before the
    # CLI's): a missing finding is recorded under no finding id, invalid input records nothing.
    ("resolve_finding", {"finding_id": "finding-nope", "action": "resolve", "confidence": "high", "rationale": "r",
                         "cited_event_ids": ["evt-0024"], "cited_rule_ids": ["R-001", "R-404"],
                         "maintenance_window": "true"}),
    ("resolve_finding", {"finding_id": "finding-nope", "action": "escalate", "confidence": "low", "rationale": "r"}),
    ("resolve_finding", {"finding_id": "f", "action": "dismiss", "confidence": "low", "rationale": "r"}),
    ("resolve_finding", {"finding_id": "f", "action": "resolve", "confidence": "low", "rationale": ""}),
    ("resolve_finding", {"finding_id": "f", "action": "resolve", "confidence": "low", "rationale": "r",
                         "cited_rule_ids": ["R 1"]}),
]


def prepare_workspace(tmp_path: Path, backend: StoreBackend | None = None) -> Path:
    """A workspace for the corpus calls: the sample data of `harness init`, then baseline B as the newest baseline.
    On a PostgreSQL backend (whose store `init` does not create, so it loads no samples) the samples are ingested
    the way `init` ingests them."""
    workspace = tmp_path / "ws"
    if backend is not None:
        backend.bind(workspace)
    assert run_cli(["--workspace", str(workspace), "init"]).exit_code == 0
    store = workspace_store(workspace)
    try:
        if backend is not None and backend.is_pg:
            load_samples(store)
        store.append_batch("baseline", [BASELINE_B])
    finally:
        store.close()
    return workspace
