"""fp_agent_alert (docs/triage.md §10, docs/triage.md §12, A21) on real fp_agent_verify results, through the CLI and MCP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trustme
from doors import Answer, call_both
from render_support import OBJECT_FILES, fresh, render_workspace, verify_all

from harness import __version__
from harness.errors import InvalidInput
from harness.text import canonjson
from harness.text.formatgate import check_tree
from harness.triage.alert import MAX_ENVELOPE_BYTES, envelope_mode, render_alert
from harness.triage.render import Rendering
from harness.triage.result import parse_result
from harness.triage.verdict import validate_verdict

HASH = "854216add0a53613db64d748eac6731fb549c9ada21b33ceafec83c6597f584d"
PROVENANCE = "AUR takedown 2026-01-14, maintainer report"


@pytest.fixture(scope="module")
def results(aur_ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return verify_all(aur_ca, tmp_path_factory.mktemp("verify"))


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_workspace(tmp_path_factory.mktemp("alert") / "ws", None)


def alert(ws: Path, result: dict[str, Any]) -> Answer:
    answer = call_both(ws, "fp_agent_alert", {"result": result}, encode=OBJECT_FILES)
    if answer.exit_code == 0:
        check_tree(answer.document, envelope_mode)
    return answer


def test_a21_the_envelope_of_the_16_1_tp(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    first, second = alert(ws, results["A14"]), alert(ws, results["A14"])
    assert first.exit_code == 0 and first.text == second.text
    digest = results["A14"]["verdict_sha256"]
    page = "https://aur.archlinux.org/packages/tiny-typo"
    common = {"provenance": PROVENANCE, "campaign": "tiny-typo-2026-01", "incident": None, "expires_at": None,
              "note": None}  # fmt: skip
    assert first.document == {
        "event": "trustsight.confirmed-ioc",
        "tool": "triage-harness",
        "tool_version": __version__,
        "title": "TrustSight: confirmed IOC on tiny-typo (tiny-typo-2026-01)",
        "priority": "default",
        "package": "tiny-typo",
        "aur": page,
        "aur_status": "present",
        "version": "? -> ?",
        "ioc_matches": [
            {"package": "tiny-typo", "indicator": "domain:updates.tiny-typo-c2.net", "aur": page},
            {"package": "tiny-typo", "indicator": f"hash:{HASH}", "aur": page},
        ],
        "iocs": [
            {"type": "domain", "value": "updates.tiny-typo-c2.net", "confidence": "high", **common},
            {"type": "hash", "value": HASH, "confidence": "confirmed", **common},
        ],
        "rationale": "The package fetches a second stage from a typosquatted host.",
        "branch": f"triage/ioc-tiny-typo-{digest[:12]}",
        "verdict_sha256": digest,
    }
    assert first.document["iocs"] == results["A14"]["ioc_entries"]


def test_the_public_page_never_follows_the_configured_base_url(
    tmp_path: Path, results: dict[str, dict[str, Any]]
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "harness.toml").write_text('[aur]\nbase_url = "https://aur.example.net"\n')
    assert alert(workspace, results["A14"]).document["aur"] == "https://aur.archlinux.org/packages/tiny-typo"


def test_a21_the_v0_result_is_refused(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    answer = alert(ws, results["A1"])
    assert (answer.exit_code, answer.error) == (
        5,
        {"code": "refused", "message": "alerts render only verified TP results", "operation": "fp_agent_alert"},
    )


@pytest.mark.parametrize("name", ["tp-unverified", "A2"])
def test_unverified_results_are_refused(ws: Path, results: dict[str, dict[str, Any]], name: str) -> None:
    answer = alert(ws, results[name])
    assert (answer.exit_code, answer.error["message"]) == (
        5,
        "result is not verified; only verified results are rendered",
    )


def test_an_absent_package_and_an_incident_label(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    absent = alert(ws, results["tp-absent"]).document
    assert (absent["aur_status"], absent["title"]) == ("absent", "TrustSight: confirmed IOC on tiny-gone (tiny-typo-2026-01)")
    assert [m["indicator"] for m in absent["ioc_matches"]] == [
        "domain:updates.tiny-typo-c2.net",
        f"hash:{HASH}",
        "package:tiny-gone",
    ]
    incident = alert(ws, results["tp-incident"]).document
    assert incident["title"] == "TrustSight: confirmed IOC on tiny-typo (INC-7)"


def test_section_10_applies(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    edited = fresh(results, "A14")
    edited["verdict_document"]["rationale"] = "Edited."
    answer = alert(ws, edited)
    assert answer.error["code"] == "invalid_input"
    assert answer.error["message"].startswith("result is internally inconsistent: verdict_sha256 ")
    bad = fresh(results, "A14")
    bad["rationale"] = "x"
    assert alert(ws, bad).error["message"].startswith("result: rationale: unknown field")
    answer = call_both(ws, "fp_agent_alert", {}, encode=OBJECT_FILES)
    assert answer.error["message"] == "result: is required"


def _padded(results: dict[str, dict[str, Any]], padding: int) -> Rendering:
    result = fresh(results, "A14")
    for entry in result["ioc_entries"]:
        entry["provenance"] = "p" * 1000
    template = result["ioc_entries"][0]
    result["ioc_entries"] = [dict(template, value=f"h{i}.example.net") for i in range(400)]
    result["ioc_entries"][0]["provenance"] += "p" * padding
    return Rendering(result, parse_result(result), validate_verdict(result["verdict_document"]))


def test_the_envelope_stays_under_900000_bytes(results: dict[str, dict[str, Any]]) -> None:
    # The verdict's own caps keep a consistent result's envelope far below the cap, so the cap is
    # checked on the renderer itself, with a rendering no front door would let through.
    size = len(canonjson.dumps_bytes(render_alert(_padded(results, 0))))
    fits = render_alert(_padded(results, MAX_ENVELOPE_BYTES - 1 - size))
    assert len(canonjson.dumps_bytes(fits)) == MAX_ENVELOPE_BYTES - 1
    with pytest.raises(InvalidInput) as caught:
        render_alert(_padded(results, MAX_ENVELOPE_BYTES - size))
    assert str(caught.value) == "result: the envelope would be 900,000 bytes, not under 900,000"


def test_cli_reads_the_result_from_a_file_or_inline_json(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    from runners import run_cli

    inline = run_cli(["--workspace", str(ws), "fp_agent_alert", "--result", json.dumps(results["A14"])])
    assert inline.stdout == alert(ws, results["A14"]).text + "\n"
