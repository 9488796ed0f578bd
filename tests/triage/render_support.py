"""Support for the renderer tests: real verified results from fp_agent_verify, and their workspaces."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trustme
from doors import as_files
from triage_samples import tp_sample, v0
from watcher import RULES_PATH, edit_diff

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.triage import fp_agent_verify
from harness.triage.verdict import validate_verdict
from harness.triage.verify import verified_findings_table
from tests.aur.fake_aur import (
    TAKEDOWN_PROVENANCE,
    FakeAur,
    install_demo_bin,
    install_typo,
)
from tests.net.https_server import HttpsServer

VERIFY_DAY = datetime(2026, 1, 14, 9, 30, tzinfo=UTC)
RULES_FIX = {"path": RULES_PATH, "diff": edit_diff(2, 'RULE_002 = "fixed"')}
PASSWD_FIX = {
    "path": "../etc/passwd",
    "diff": "--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-root:x:0:0::/root:/bin/sh\n+x\n",
}
MODE_FIX = {"path": RULES_PATH, "diff": "new mode 100755\n" + RULES_FIX["diff"]}
LINK_FIX = {"path": "src/trustsight/link.py", "diff": edit_diff(2, 'RULE_002 = "fixed"', "src/trustsight/link.py")}


def _with_fixes(*fixes: dict[str, str]) -> dict[str, Any]:
    verdict = v0()
    verdict["code_fixes"] = [dict(fix) for fix in fixes]
    return verdict


def _two_rules() -> dict[str, Any]:
    verdict = v0()
    verdict["evidence"].append(
        {"rule_id": "R053", "file": "tiny-demo.install", "line": None, "claim": "Same scriptlet, other rule."}
    )
    verdict["proposed_changes"].append(
        {"kind": "suppression", "rule_id": "R053", "reason": "The unchanged scriptlet also triggers R053."}
    )
    return verdict


def _tp_incident() -> dict[str, Any]:
    verdict = tp_sample()
    change = verdict["proposed_changes"][1]
    del change["campaign"]
    change["incident"] = "INC-7"
    verdict["proposed_changes"] = [change]
    return verdict


def _tp_absent() -> dict[str, Any]:
    verdict = tp_sample()
    verdict["package"] = "tiny-gone"
    verdict["proposed_changes"].append(
        {
            "kind": "ioc",
            "type": "package",
            "value": "tiny-gone",
            "confidence": "confirmed",
            "provenance": TAKEDOWN_PROVENANCE,
            "incident": "INC-9",
            "expires_at": "2026-07-01",
            "note": "Removed by the AUR team.",
        }
    )
    return verdict


def _pipes() -> dict[str, Any]:
    verdict = v0()
    verdict["evidence"][0]["claim"] = "Same | bytes, x\\|y kept."
    verdict["rationale"] = "Line one | with a pipe.\nLine two."
    return verdict


def _tp_without_takedown() -> dict[str, Any]:
    verdict = _tp_absent()
    verdict["proposed_changes"][2]["provenance"] = "maintainer report"
    return verdict


VERDICTS: dict[str, Callable[[], dict[str, Any]]] = {
    "A1": v0,
    "A19": lambda: _with_fixes(RULES_FIX, PASSWD_FIX),
    "A20-mode": lambda: _with_fixes(MODE_FIX, PASSWD_FIX),
    "A20-link": lambda: _with_fixes(LINK_FIX, PASSWD_FIX),
    "two-rules": _two_rules,
    "A14": tp_sample,
    "tp-incident": _tp_incident,
    "tp-absent": _tp_absent,
    "pipes": _pipes,
    "tp-unverified": _tp_without_takedown,
}
UNVERIFIED = frozenset({"A2", "tp-unverified"})


def verify_all(ca: trustme.CA, tmp: Path) -> dict[str, dict[str, Any]]:
    """Run the real fp_agent_verify handler on every verdict above (and V0 on the `changed` variant as A2)."""
    workspace = tmp / "verify-ws"
    workspace.mkdir()
    results: dict[str, dict[str, Any]] = {}
    with HttpsServer(ca) as server:
        (workspace / "aur-ca.pem").write_text(Path(server.ca_file).read_text())
        fake = FakeAur(server, tmp / "aur", workspace)
        install_demo_bin(fake)
        install_typo(fake)

        def run(verdict: dict[str, Any]) -> dict[str, Any]:
            context = build_context(load_settings(Overrides(workspace=workspace)), clock=lambda: VERIFY_DAY)
            try:
                answer = fp_agent_verify.handle(fp_agent_verify.Input(verdict=verdict), context)
            finally:
                context.close()
            return answer.model_dump(mode="json")

        for name, make in VERDICTS.items():
            results[name] = run(make())
        install_demo_bin(fake, "changed")
        results["A2"] = run(v0())
    unverified = {name for name, result in results.items() if result["verified"] == (name in UNVERIFIED)}
    assert not unverified, f"fixture results with the wrong verified flag: {unverified}"
    return results


def fresh(results: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    """A mutable copy of one result."""
    return copy.deepcopy(results[name])


def reverified(result: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A copy of a verified result whose verdict document `edit` changed, with the parts the verdict fixes
    (digest, findings table) recomputed: what fp_agent_verify gives when the edit does not touch the checks."""
    copied = copy.deepcopy(result)
    edit(copied["verdict_document"])
    verdict = validate_verdict(copied["verdict_document"])
    copied["verdict_sha256"] = verdict.sha256
    copied["checks"][0]["evidence"]["verdict_sha256"] = verdict.sha256
    copied["findings_table"] = verified_findings_table(verdict)
    return copied


# The renderers' CLI reads the result (an object) from a file; MCP takes it inline.
OBJECT_FILES = as_files()


def render_workspace(root: Path, watcher: Path | None) -> Path:
    """A workspace whose harness.toml points `[triage] watcher_repo` at `watcher` (or leaves it unset)."""
    root.mkdir(parents=True)
    if watcher is not None:
        (root / "harness.toml").write_text(f"[triage]\nwatcher_repo = {json.dumps(str(watcher))}\n")
    return root
