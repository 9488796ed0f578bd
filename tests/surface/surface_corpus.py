"""The fixture corpus of real operation calls for the parity test: success, empty, and error cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.store import Store
from tests.investigate.baseline_support import BASELINE_B
from tests.triage.triage_samples import v0


def _verdict(**changes: Any) -> dict[str, Any]:
    return {**v0(), **changes}


PACKAGE_CORPUS: list[tuple[str, dict[str, Any]]] = [
    # github_actor: only calls refused before any request, since the corpus workspace has no fake GitHub.
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
    ("lookup_rules", {"finding_id": "f-1", "finding_family": ""}),
    ("lookup_rules", {"finding_id": "f-1", "finding_family": "x", "finding_metadata": {"scheduled": True}}),
    ("lookup_rules", {"finding_id": "f-1", "finding_family": "x", "finding_metadata": {"a_b": "1", "aB": "2"}}),
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
]


def prepare_workspace(tmp_path: Path) -> Path:
    """A workspace for the corpus calls."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    Store(workspace / "store").append_batch("baseline", [BASELINE_B])
    return workspace
