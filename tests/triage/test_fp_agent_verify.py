"""fp_agent_verify (docs/triage.md §9, docs/triage.md §16.2 A1 to A15) through the CLI and the in-memory MCP client, and verify()."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import trustme
from doors import Answer, Door, as_files, call_both, call_cli, call_mcp
from runners import run_cli

from harness.aur.client import AurClient, build_aur_client
from harness.context import Context
from harness.triage.result import parse_result
from harness.triage.services import aur
from harness.triage.verdict import load_verdict
from harness.triage.verify import join_sentences, verify
from tests.aur.fake_aur import (
    A1,
    B2,
    C3,
    D4,
    DEMO_TARGETS,
    EMPTY_RPC,
    EXTRA_URL,
    FETCH_URL,
    SCRIPTLET_SHA256,
    TAKEDOWN_PROVENANCE,
    FakeAur,
    html_reply,
    install_demo_bin,
    install_fetch,
    install_typo,
    json_reply,
    plain_target,
    redirect,
    rpc_document,
    rpc_target,
)
from tests.net.https_server import HttpsServer, Reply
from tests.triage.triage_samples import V0_SHA256, tp_sample, v0

V0_SUPPRESSION_REASON = (
    "Unchanged install scriptlet re-reported by the analysis. Verified by triage-harness: install scriptlet "
    "tiny-demo.install is byte-identical at both commits (sha256 da27e3212b12) (tiny-demo-bin 1.0.0-1 -> 1.0.1-1, "
    "AUR commits a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1 and b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2)."
)
TABLE_HEAD = "| Rule | File | Line | Check | Result |\n|---|---|---|---|---|\n"
RPC_DEMO = rpc_target("tiny-demo-bin")
PKGBUILD_B2 = plain_target("tiny-demo-bin", B2, "PKGBUILD")
FIXED_CLOCK = datetime(2026, 1, 15, 23, 59, 59, tzinfo=UTC)


# The CLI reads the verdict from a file; a string verdict is the file's text as it is.
VERDICT_FILE = as_files("verdict", indent=2)


def verify_via(door: Door, workspace: Path, verdict: Any, **options: Any) -> Answer:
    """fp_agent_verify through `door` (`options` as doors.py's, e.g. `prepare` on MCP)."""
    return door(workspace, "fp_agent_verify", {"verdict": verdict}, encode=VERDICT_FILE, **options)


def ok(answer: Answer) -> dict[str, Any]:
    """A successful answer whose document is a valid result (strict model, every key present)."""
    assert not answer.is_error, answer.text
    assert answer.exit_code in (0, None)
    parse_result(answer.document)
    return answer.document


def error(answer: Answer) -> str:
    """The message of an invalid_input answer (exit 2 on the CLI)."""
    assert answer.is_error, answer.text
    assert answer.document["error"]["code"] == "invalid_input"
    assert answer.exit_code in (2, None)
    return str(answer.document["error"]["message"])


def check_names(result: dict[str, Any]) -> list[tuple[str, bool]]:
    return [(check["name"], check["passed"]) for check in result["checks"]]


def fetch_verdict(url: str = FETCH_URL) -> dict[str, Any]:
    """The FP of A7: tiny-fetch c3 to d4, H016 on PKGBUILD line 6 citing `url`."""
    return {
        "schema_version": 1,
        "package": "tiny-fetch",
        "verdict": "FP",
        "confidence": "high",
        "rationale": "The download is declared in the source array.",
        "transition": {"old_version": "2.0.0-1", "new_version": "2.0.1-1", "old_commit": C3, "new_commit": D4},
        "evidence": [{"rule_id": "H016", "file": "PKGBUILD", "line": 6, "claim": "Declared source.", "url": url}],
        "proposed_changes": [{"kind": "suppression", "rule_id": "H016", "reason": "The fetched file is declared."}],
        "code_fixes": [],
    }


def package_indicator(provenance: str) -> dict[str, Any]:
    return {
        "kind": "ioc",
        "type": "package",
        "value": "tiny-typo",
        "confidence": "high",
        "provenance": provenance,
        "campaign": "tiny-typo-2026-01",
        "expires_at": "2026-07-01",
    }


@pytest.fixture
def demo(fake_aur: FakeAur) -> FakeAur:
    install_demo_bin(fake_aur)
    return fake_aur


# ---------------------------------------------------------------------------------------------
# A1: the docs/triage.md §9 vector


def test_a1_v0_is_verified_with_exactly_the_seven_requests(demo: FakeAur, door: Door) -> None:
    result = ok(verify_via(door, demo.workspace, v0()))
    assert demo.targets() == DEMO_TARGETS
    assert (result["verified"], result["reason"]) == (True, "all checks passed")
    assert (result["verdict"], result["package"], result["pkgbase"]) == ("FP", "tiny-demo-bin", "tiny-demo-bin")
    assert result["version_transition"] == "1.0.0-1 -> 1.0.1-1"
    assert check_names(result) == [
        ("schema", True),
        ("aur_rpc", True),
        ("snapshot", True),
        ("check_phantom_install", True),
    ]
    assert result["checks"][0] == {
        "name": "schema",
        "rule_ids": [],
        "passed": True,
        "reason": "verdict is well-formed",
        "evidence": {"verdict_sha256": V0_SHA256},
    }
    assert result["checks"][1]["evidence"] == {
        "url": demo.server.url(RPC_DEMO),
        "outcome": "present",
        "name": "tiny-demo-bin",
        "pkgbase": "tiny-demo-bin",
        "version": "1.0.2-1",
    }
    assert result["checks"][3]["rule_ids"] == ["R007"]
    assert result["findings_table"] == TABLE_HEAD + "| R007 | tiny-demo.install | - | check_phantom_install | passed |"
    (suppression,) = result["suppressions"]
    assert suppression["reason"] == V0_SUPPRESSION_REASON
    assert suppression["created_at"].endswith("T00:00:00.000000Z")
    assert {k: v for k, v in suppression.items() if k not in ("reason", "created_at")} == {
        "created_at_obs": 0,
        "package": "tiny-demo-bin",
        "requires_clear_indicators": True,
        "rule_id": "R007",
        "ttl_observations": None,
    }
    assert result["report_entry"] == {
        "package": "tiny-demo-bin",
        "rules": ["R007"],
        "kind": "phantom_install",
        "summary": "R007 on tiny-demo-bin 1.0.0-1 -> 1.0.1-1: install scriptlet tiny-demo.install is "
        "byte-identical at both commits (sha256 da27e3212b12)",
    }
    assert result["snapshot"]["source_url"] == demo.server.url(PKGBUILD_B2)
    assert result["snapshot"]["install_name"] == "tiny-demo.install"
    assert result["snapshot"]["install_sha256"] == SCRIPTLET_SHA256
    assert result["snapshot"]["pkgbuild_sha256"] == result["checks"][2]["evidence"]["pkgbuild_sha256_new"]
    assert result["snapshot"]["srcinfo_sha256"] == result["checks"][2]["evidence"]["srcinfo_sha256_new"]
    assert (result["verdict_document"], result["verdict_sha256"]) == (v0(), V0_SHA256)
    assert result["ioc_entries"] == []


def test_cli_and_mcp_give_identical_bytes(demo: FakeAur) -> None:
    first = verify_via(call_both, demo.workspace, v0())
    second = verify_via(call_both, demo.workspace, v0())
    assert first.text == second.text


def test_the_cli_takes_inline_json_too(demo: FakeAur) -> None:
    inline = run_cli(["--workspace", str(demo.workspace), "fp_agent_verify", "--verdict", json.dumps(v0())])
    assert inline.exit_code == 0
    assert inline.stdout == verify_via(call_cli, demo.workspace, v0()).text + "\n"


def test_the_suppression_date_comes_from_the_clock(demo: FakeAur) -> None:
    client = build_aur_client(demo.base_url, demo.ca_file, 0, 10, 3, 2)
    try:
        result = verify(load_verdict(v0()), client, lambda: FIXED_CLOCK)
    finally:
        client.close()
    assert result.suppressions[0].created_at == "2026-01-15T00:00:00.000000Z"
    assert result.suppressions[0].reason == V0_SUPPRESSION_REASON


# ---------------------------------------------------------------------------------------------
# A2 to A6


def test_a2_a_changed_scriptlet_is_not_verified(fake_aur: FakeAur, door: Door) -> None:
    install_demo_bin(fake_aur, "changed")
    result = ok(verify_via(door, fake_aur.workspace, v0()))
    assert result["verified"] is False
    assert result["reason"] == "install scriptlet tiny-demo.install differs between commits (+1 -0 lines)"
    assert (result["suppressions"], result["report_entry"]) == ([], None)
    assert result["findings_table"].endswith("| R007 | tiny-demo.install | - | check_phantom_install | failed |")


def test_a3_crlf_line_endings_are_verified(fake_aur: FakeAur, door: Door) -> None:
    install_demo_bin(fake_aur, "crlf")
    result = ok(verify_via(door, fake_aur.workspace, v0()))
    assert (result["verified"], result["reason"]) == (True, "all checks passed")
    assert result["snapshot"]["install_sha256"] != SCRIPTLET_SHA256


def test_a4_a_wrong_claimed_version_is_not_verified(demo: FakeAur, door: Door) -> None:
    verdict = v0()
    verdict["transition"]["new_version"] = "1.0.2-1"
    result = ok(verify_via(door, demo.workspace, verdict))
    assert result["verified"] is False
    assert result["reason"] == f".SRCINFO at commit {B2} gives version 1.0.1-1, verdict claims 1.0.2-1"
    assert check_names(result) == [("schema", True), ("aur_rpc", True), ("snapshot", False)]
    assert result["findings_table"].endswith("| R007 | tiny-demo.install | - | check_phantom_install | not run |")
    assert result["version_transition"] == "1.0.0-1 -> 1.0.2-1"


def test_a5_a_rule_without_deterministic_check_is_not_verified(demo: FakeAur, door: Door) -> None:
    verdict = v0()
    verdict["evidence"] = [{"rule_id": "G005", "file": "PKGBUILD", "line": 1, "claim": "Benign."}]
    verdict["proposed_changes"][0]["rule_id"] = "G005"
    result = ok(verify_via(door, demo.workspace, verdict))
    assert (result["verified"], result["reason"]) == (False, "no deterministic check for rule G005")
    assert check_names(result)[-1] == ("no_check", False)
    assert result["findings_table"].endswith("| G005 | PKGBUILD | 1 | none | failed |")


@pytest.mark.parametrize("rule_id", ["R012", "R013b"])
def test_a6_fatal_rules_are_invalid_input(demo: FakeAur, door: Door, rule_id: str) -> None:
    verdict = v0()
    verdict["evidence"][0]["rule_id"] = rule_id
    verdict["proposed_changes"][0]["rule_id"] = rule_id
    message = error(verify_via(door, demo.workspace, verdict))
    assert "is FATAL and can never be suppressed" in message
    assert demo.targets() == []


# ---------------------------------------------------------------------------------------------
# A7 to A10: URLs in sources


def test_a7_a_declared_download_is_verified(fake_aur: FakeAur, door: Door) -> None:
    install_fetch(fake_aur)
    result = ok(verify_via(door, fake_aur.workspace, fetch_verdict()))
    assert (result["verified"], result["reason"]) == (True, "all checks passed")
    assert result["checks"][-1]["evidence"]["declared_in"] == ["PKGBUILD", ".SRCINFO"]
    assert result["report_entry"]["kind"] == "url_in_source"
    assert result["suppressions"][0]["reason"] == (
        f"The fetched file is declared. Verified by triage-harness: URL {FETCH_URL} is declared in the sources at "
        f"the new commit (tiny-fetch 2.0.0-1 -> 2.0.1-1, AUR commits {C3} and {D4})."
    )
    assert result["snapshot"]["install_name"] is None and result["snapshot"]["install_sha256"] is None


def test_a8_an_undeclared_download_is_not_verified(fake_aur: FakeAur, door: Door) -> None:
    install_fetch(fake_aur, "undeclared")
    result = ok(verify_via(door, fake_aur.workspace, fetch_verdict(EXTRA_URL)))
    assert result["verified"] is False
    assert result["reason"] == f"URL {EXTRA_URL} is not declared in the sources at commit {D4}"


def test_a9_a_url_declared_only_in_srcinfo_is_verified_and_shown_as_such(fake_aur: FakeAur, door: Door) -> None:
    install_fetch(fake_aur, "srcinfo-only")
    result = ok(verify_via(door, fake_aur.workspace, fetch_verdict(EXTRA_URL)))
    assert result["verified"] is True
    assert result["checks"][-1]["evidence"]["declared_in"] == [".SRCINFO"]


def test_a10_a_loopback_url_is_not_routable_and_never_requested(fake_aur: FakeAur, door: Door) -> None:
    install_fetch(fake_aur, "local")
    local = fake_aur.server.url("/fetch/data.zip")
    result = ok(verify_via(door, fake_aur.workspace, fetch_verdict(local)))
    assert result["verified"] is False
    assert result["reason"] == f"URL {local} host 127.0.0.1 is not routable"
    assert all(not request.path.startswith("/fetch/") for request in fake_aur.server.requests)
    assert len(fake_aur.targets()) == 5


# ---------------------------------------------------------------------------------------------
# A11 to A13


def test_a11_uncertain_is_never_verified_and_makes_no_request(demo: FakeAur, door: Door) -> None:
    verdict = v0()
    verdict["verdict"] = "uncertain"
    verdict["proposed_changes"] = []
    result = ok(verify_via(door, demo.workspace, verdict))
    assert (result["verified"], result["reason"]) == (False, "uncertain verdicts are never verified")
    assert demo.server.requests == [] and demo.server.connections == 0
    assert check_names(result) == [("schema", True)]
    assert result["findings_table"] == TABLE_HEAD + "| R007 | tiny-demo.install | - | - | not replayed |"
    assert result["pkgbase"] == ""
    assert set(result["snapshot"].values()) == {None}
    assert (result["suppressions"], result["report_entry"], result["ioc_entries"]) == ([], None, [])


def test_a12_an_anubis_page_for_the_pkgbuild_is_not_verified(demo: FakeAur, door: Door) -> None:
    demo.script(PKGBUILD_B2, html_reply())
    result = ok(verify_via(door, demo.workspace, v0()))
    assert result["verified"] is False
    assert result["reason"] == f"PKGBUILD unavailable at commit {B2}: anubis challenge"


def test_a12_an_rpc_body_of_an_empty_array_is_not_verified(demo: FakeAur, door: Door) -> None:
    demo.script(RPC_DEMO, json_reply([]))
    result = ok(verify_via(door, demo.workspace, v0()))
    assert result["reason"] == "AUR RPC gave no authoritative answer: malformed RPC reply"
    assert result["checks"][1]["evidence"]["outcome"] == "unavailable"
    assert check_names(result) == [("schema", True), ("aur_rpc", False)]
    assert demo.targets() == [RPC_DEMO]


@pytest.fixture
def other_host(aur_ca: trustme.CA) -> Iterator[HttpsServer]:
    with HttpsServer(aur_ca) as server:
        yield server


def test_a12_an_rpc_redirect_to_another_host_is_refused_unvisited(
    demo: FakeAur, door: Door, other_host: HttpsServer
) -> None:
    other_host.script("/rpc/v5/info", json_reply(rpc_document("tiny-demo-bin", "1.0.2-1")))
    demo.script(RPC_DEMO, redirect(other_host.url(RPC_DEMO)))
    result = ok(verify_via(door, demo.workspace, v0()))
    assert result["reason"] == "AUR RPC gave no authoritative answer: redirect to a non-allowlisted URL refused"
    assert other_host.connections == 0


def test_a13_one_429_with_retry_after_is_retried(demo: FakeAur, door: Door) -> None:
    answer = json_reply(rpc_document("tiny-demo-bin", "1.0.2-1"))
    demo.script(RPC_DEMO, Reply(429, headers=[("Retry-After", "1")]), answer)
    result = ok(verify_via(door, demo.workspace, v0()))
    assert result["verified"] is True
    assert demo.targets().count(RPC_DEMO) == 2


# ---------------------------------------------------------------------------------------------
# A14, A15: TP


def test_a14_the_tp_is_verified_with_normalized_entries(fake_aur: FakeAur, door: Door) -> None:
    install_typo(fake_aur)
    result = ok(verify_via(door, fake_aur.workspace, tp_sample()))
    assert (result["verified"], result["reason"]) == (True, "all checks passed")
    assert fake_aur.targets() == [rpc_target("tiny-typo")]
    assert check_names(result) == [("schema", True), ("aur_rpc", True), ("ioc_schema", True), ("ioc_schema", True)]
    common = {
        "provenance": TAKEDOWN_PROVENANCE,
        "campaign": "tiny-typo-2026-01",
        "incident": None,
        "expires_at": None,
        "note": None,
    }
    assert result["ioc_entries"] == [
        {"type": "domain", "value": "updates.tiny-typo-c2.net", "confidence": "high", **common},
        {
            "type": "hash",
            "value": "854216add0a53613db64d748eac6731fb549c9ada21b33ceafec83c6597f584d",
            "confidence": "confirmed",
            **common,
        },
    ]
    assert result["checks"][2]["evidence"] == {
        "index": 0,
        "type": "hash",
        "value": "854216ADD0A53613DB64D748EAC6731FB549C9ADA21B33CEAFEC83C6597F584D",
        "normalized_value": "854216add0a53613db64d748eac6731fb549c9ada21b33ceafec83c6597f584d",
    }
    assert result["pkgbase"] == "tiny-typo"
    assert result["version_transition"] == "? -> ?"
    assert result["snapshot"] == {
        "source_url": fake_aur.server.url(rpc_target("tiny-typo")),
        "pkgbuild_sha256": None,
        "srcinfo_sha256": None,
        "install_sha256": None,
        "install_name": None,
    }
    assert (result["suppressions"], result["report_entry"], result["findings_table"]) == ([], None, "")


def test_a15_an_absent_package_needs_a_takedown_in_every_package_indicator(fake_aur: FakeAur, door: Door) -> None:
    install_typo(fake_aur, present=False)
    verdict = tp_sample()
    verdict["proposed_changes"].append(package_indicator("maintainer report"))
    result = ok(verify_via(door, fake_aur.workspace, verdict))
    assert result["verified"] is False
    assert result["reason"] == "package tiny-typo is not on the AUR and package indicator 2 cites no takedown"
    assert result["pkgbase"] == ""

    verdict["proposed_changes"][2] = package_indicator("AUR takedown 2026-01-14, maintainer report")
    result = ok(verify_via(door, fake_aur.workspace, verdict))
    assert (result["verified"], result["reason"]) == (True, "all checks passed")
    takedown = "package tiny-typo is not on the AUR; every package indicator cites a takedown"
    assert result["checks"][1]["reason"] == takedown
    assert [entry["type"] for entry in result["ioc_entries"]] == ["domain", "hash", "package"]


@pytest.mark.parametrize("provenance", ["Take-down by the AUR", "aur TAKEDOWN", "takedown"])
def test_takedown_is_matched_as_a_word_in_any_case(fake_aur: FakeAur, provenance: str) -> None:
    verdict = tp_sample()
    verdict["proposed_changes"].append(package_indicator(provenance))
    assert ok(verify_via(call_mcp, fake_aur.workspace, verdict))["verified"] is True


def test_takedowns_must_be_whole_words(fake_aur: FakeAur) -> None:
    verdict = tp_sample()
    verdict["proposed_changes"].append(package_indicator("takedowns pending"))
    assert ok(verify_via(call_mcp, fake_aur.workspace, verdict))["verified"] is False


def test_tp_rpc_mismatch_fails(fake_aur: FakeAur) -> None:
    fake_aur.put_rpc("tiny-typo", rpc_document("tiny-typo-bin", "1-1"))
    result = ok(verify_via(call_mcp, fake_aur.workspace, tp_sample()))
    assert result["reason"] == "AUR RPC returned a record that does not match tiny-typo"


def test_tp_checks_every_indicator_even_when_the_rpc_fails(fake_aur: FakeAur) -> None:
    fake_aur.script(rpc_target("tiny-typo"), Reply(503))
    verdict = tp_sample()
    verdict["proposed_changes"][0]["value"] = "0" * 64
    verdict["proposed_changes"][1]["value"] = "c2.test"
    result = ok(verify_via(call_mcp, fake_aur.workspace, verdict))
    assert check_names(result) == [("schema", True), ("aur_rpc", False), ("ioc_schema", False), ("ioc_schema", False)]
    assert result["reason"] == "AUR RPC gave no authoritative answer: HTTP 503"
    assert result["checks"][2]["reason"] == "hash indicator 0 refused: hash is one repeated character"
    assert result["checks"][3]["evidence"]["normalized_value"] is None
    assert result["ioc_entries"] == []


def test_a_duplicate_indicator_fails_naming_the_first(fake_aur: FakeAur) -> None:
    install_typo(fake_aur)
    verdict = tp_sample()
    verdict["proposed_changes"][0] = {**verdict["proposed_changes"][1], "value": "UPDATES.tiny-typo-c2.net"}
    result = ok(verify_via(call_mcp, fake_aur.workspace, verdict))
    assert result["reason"] == "domain indicator 1 refused: duplicate of entry 0"


def test_tp_transition_sides(fake_aur: FakeAur) -> None:
    install_typo(fake_aur)
    verdict = tp_sample()
    verdict["transition"] = {"old_version": None, "new_version": "0.1.0-1", "old_commit": None, "new_commit": D4}
    assert ok(verify_via(call_mcp, fake_aur.workspace, verdict))["version_transition"] == "? -> 0.1.0-1"


# ---------------------------------------------------------------------------------------------
# FP: the RPC, several items, suppressions and the report entry


def test_fp_on_a_package_absent_from_the_aur_stops_after_the_rpc(fake_aur: FakeAur, door: Door) -> None:
    result = ok(verify_via(door, fake_aur.workspace, v0()))
    assert result["reason"] == "package tiny-demo-bin is not on the AUR"
    assert check_names(result) == [("schema", True), ("aur_rpc", False)]
    assert result["findings_table"].endswith("| check_phantom_install | not run |")
    assert fake_aur.targets() == [RPC_DEMO]


def test_fp_rpc_mismatch_stops(demo: FakeAur) -> None:
    demo.put_rpc("tiny-demo-bin", rpc_document("tiny-demo-bin", "1.0.2-1", base="Tiny"))
    result = ok(verify_via(call_mcp, demo.workspace, v0()))
    assert result["reason"] == "AUR RPC returned a record that does not match tiny-demo-bin"
    assert result["pkgbase"] == ""


def test_the_rpc_base_drives_the_cgit_requests(demo: FakeAur) -> None:
    demo.put_rpc("tiny-demo-bin", rpc_document("tiny-demo-bin", "1.0.2-1", base="tiny-demo"))
    result = ok(verify_via(call_mcp, demo.workspace, v0()))
    assert result["pkgbase"] == "tiny-demo"
    assert result["reason"] == f"PKGBUILD unavailable at commit {B2}: not found"
    assert demo.targets()[1] == plain_target("tiny-demo", B2, "PKGBUILD")


def test_every_item_runs_and_the_first_failure_is_the_reason(demo: FakeAur) -> None:
    verdict = v0()
    verdict["evidence"].append({"rule_id": "C024", "file": "PKGBUILD", "line": 7, "claim": "Benign."})
    verdict["evidence"].append({"rule_id": "COVERAGE", "file": "PKGBUILD", "line": None, "claim": "Benign."})
    verdict["proposed_changes"] += [
        {"kind": "suppression", "rule_id": "C024", "reason": "Benign."},
        {"kind": "suppression", "rule_id": "COVERAGE", "reason": "Benign."},
    ]
    result = ok(verify_via(call_mcp, demo.workspace, verdict))
    assert check_names(result)[3:] == [("check_phantom_install", True), ("no_check", False), ("no_check", False)]
    assert result["reason"] == "no deterministic check for rule C024"
    assert result["suppressions"] == []


def test_suppressions_are_sorted_and_quote_distinct_sentences(demo: FakeAur) -> None:
    verdict = v0()
    verdict["evidence"].insert(0, {"rule_id": "H023", "file": "PKGBUILD", "line": 7, "claim": "Declared hook."})
    verdict["evidence"].append({"rule_id": "R007", "file": ".SRCINFO", "line": 5, "claim": "Same hook."})
    verdict["proposed_changes"].append({"kind": "suppression", "rule_id": "H023", "reason": "Hook unchanged."})
    result = ok(verify_via(call_mcp, demo.workspace, verdict))
    assert result["verified"] is True
    assert [s["rule_id"] for s in result["suppressions"]] == ["H023", "R007"]
    assert result["suppressions"][1]["reason"] == V0_SUPPRESSION_REASON
    assert result["suppressions"][0]["reason"].startswith("Hook unchanged. Verified by triage-harness: install ")
    assert result["report_entry"]["rules"] == ["H023", "R007"]
    assert result["report_entry"]["summary"].count("byte-identical") == 1
    assert demo.targets() == DEMO_TARGETS


def test_a_phantom_and_a_url_item_make_a_mixed_report(demo: FakeAur) -> None:
    url = "https://downloads.example.org/tiny/v1.0.1/tiny.tar.gz"
    verdict = v0()
    verdict["evidence"].append({"rule_id": "H016", "file": "PKGBUILD", "line": 6, "claim": "Declared.", "url": url})
    verdict["proposed_changes"].append({"kind": "suppression", "rule_id": "H016", "reason": "Declared download."})
    result = ok(verify_via(call_mcp, demo.workspace, verdict))
    assert result["verified"] is True
    assert result["report_entry"]["kind"] == "mixed"
    assert result["report_entry"]["summary"] == (
        "H016, R007 on tiny-demo-bin 1.0.0-1 -> 1.0.1-1: install scriptlet tiny-demo.install is byte-identical at "
        f"both commits (sha256 da27e3212b12); URL {url} is declared in the sources at the new commit"
    )


def test_abbreviated_commits_resolve_by_unique_prefix(demo: FakeAur) -> None:
    verdict = v0()
    verdict["transition"]["old_commit"] = "a1a1a1a"
    verdict["transition"]["new_commit"] = "b2b2b2b"
    result = ok(verify_via(call_mcp, demo.workspace, verdict))
    assert result["verified"] is True
    assert result["suppressions"][0]["reason"].endswith("AUR commits a1a1a1a and b2b2b2b).")


def test_join_sentences_caps_at_four() -> None:
    assert join_sentences(["a", "b", "a"]) == "a; b"
    assert join_sentences(["a", "b", "c", "d", "e", "f"]) == "a; b; c; d and 2 more"


# ---------------------------------------------------------------------------------------------
# Fail-closed rule (5): each transport problem is its own reason, never an error or true


def _small_timeouts(fake: FakeAur) -> Callable[[Context], None]:
    def prepare(context: Context) -> None:
        client = build_aur_client(
            fake.base_url, fake.ca_file, 0, 10, 1, 2, read_timeout_s=0.2, jitter_s=lambda delay: 0.0
        )
        context.service("aur", lambda: client)

    return prepare


def test_a_timeout_fails_closed(demo: FakeAur) -> None:
    demo.script(plain_target("tiny-demo-bin", A1, ".SRCINFO"), Reply(200, body=b"x", stall_s=5))
    result = ok(verify_via(call_mcp, demo.workspace, v0(), prepare=_small_timeouts(demo)))
    assert (result["verified"], result["reason"]) == (False, f".SRCINFO unavailable at commit {A1}: read timed out")


@pytest.mark.parametrize(
    ("target", "reply", "reason"),
    [
        (PKGBUILD_B2, Reply(502), f"PKGBUILD unavailable at commit {B2}: HTTP 502"),
        (PKGBUILD_B2, Reply(429, headers=[("Retry-After", "3600")]), f"PKGBUILD unavailable at commit {B2}: "
         "Retry-After 3600 s exceeds the 2 s cap"),
        (PKGBUILD_B2, html_reply("<html>hello</html>"), f"PKGBUILD unavailable at commit {B2}: unexpected HTML "
         "response"),
        (PKGBUILD_B2, Reply(200, body=b"x" * 1_048_577), f"PKGBUILD unavailable at commit {B2}: response larger "
         "than 1,048,576 bytes"),
        (PKGBUILD_B2, Reply(404), f"PKGBUILD unavailable at commit {B2}: not found"),
        (plain_target("tiny-demo-bin", B2, ".SRCINFO"), Reply(200, body=b"garbage\n"),
         f'.SRCINFO at commit {B2} is malformed: line 1 has no "="'),
        (RPC_DEMO, json_reply({**EMPTY_RPC, "type": "error"}), "AUR RPC gave no authoritative answer: RPC error reply"),
        (RPC_DEMO, Reply(503), "AUR RPC gave no authoritative answer: HTTP 503"),
        (plain_target("tiny-demo-bin", A1, "tiny-demo.install"), Reply(404),
         f"install scriptlet tiny-demo.install is missing at commit {A1}"),
    ],
)
def test_transport_and_content_failures_fail_closed(
    demo: FakeAur, door: Door, target: str, reply: Reply, reason: str
) -> None:
    demo.script(target, reply)
    result = ok(verify_via(door, demo.workspace, v0()))
    assert (result["verified"], result["reason"]) == (False, reason)
    assert (result["suppressions"], result["report_entry"]) == ([], None)


def test_a_dead_aur_fails_closed(fake_aur: FakeAur, door: Door) -> None:
    fake_aur.configure(base_url="https://127.0.0.1:1", max_retries=0)
    result = ok(verify_via(door, fake_aur.workspace, v0()))
    assert result["reason"] == "AUR RPC gave no authoritative answer: connection failed"


# ---------------------------------------------------------------------------------------------
# An unusable [aur] section


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"base_url": "http://aur.example"}, "base_url"),
        ({"max_retries": 9}, "max_retries"),
        ({"ca_file": "nope.pem"}, "ca_file"),
    ],
)
def test_an_unusable_aur_section_fails_closed(
    fake_aur: FakeAur, door: Door, settings: dict[str, Any], key: str
) -> None:
    fake_aur.configure(**settings)
    for verdict in (v0(), tp_sample()):
        result = ok(verify_via(door, fake_aur.workspace, verdict))
        assert (result["verified"], result["reason"]) == (False, f"AUR client not usable: [aur] {key} is invalid")
        assert result["checks"][1]["evidence"]["url"] is None
    uncertain = v0()
    uncertain["verdict"], uncertain["proposed_changes"] = "uncertain", []
    assert ok(verify_via(door, fake_aur.workspace, uncertain))["reason"] == "uncertain verdicts are never verified"
    assert fake_aur.server.connections == 0


# ---------------------------------------------------------------------------------------------
# Invalid input: the docs/triage.md §4 order, gate messages first


def test_gate_messages_come_before_model_errors(fake_aur: FakeAur, door: Door) -> None:
    verdict = v0()
    verdict["rationale"] = "old\u2014new"
    verdict["package"] = "Tiny-Demo"
    message = error(verify_via(door, fake_aur.workspace, verdict))
    assert message == (
        'verdict: format gate: $.rationale: em dash U+2014 at index 3 is not allowed (use ":", ";", "," or parentheses)'
    )


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda v: v.update(schema_version=True), "$.schema_version"),
        (lambda v: v.update(notes="x"), "$.notes: unknown key"),
        (lambda v: v["evidence"][0].update(claim="unchanged -- really"), "$.evidence[0].claim"),
        (lambda v: v.update(transition=None), "(X1)"),
        (lambda v: v.update(evidence=[]), "(X2)"),
        (lambda v: v.update(verdict="uncertain"), "(X6)"),
    ],
)
def test_invalid_verdicts_are_invalid_input_and_make_no_request(
    fake_aur: FakeAur, door: Door, change: Callable[[dict[str, Any]], None], fragment: str
) -> None:
    verdict = v0()
    change(verdict)
    assert fragment in error(verify_via(door, fake_aur.workspace, verdict))
    assert fake_aur.server.connections == 0


def test_duplicate_keys_in_a_verdict_file_are_refused(fake_aur: FakeAur) -> None:
    text = json.dumps(v0())[:-1] + ', "package": "tiny-demo-bin"}'
    assert "duplicate key" in error(verify_via(call_cli, fake_aur.workspace, text))


def test_a_verdict_over_one_mib_is_refused_before_anything_else(fake_aur: FakeAur) -> None:
    padded = json.dumps(v0()) + " " * (1_048_577 - len(json.dumps(v0())))
    assert len(padded.encode()) == 1_048_577
    error(verify_via(call_cli, fake_aur.workspace, padded))
    oversized = {**v0(), "notes": "x" * 1_048_576}
    assert "larger than 1,048,576 bytes" in error(verify_via(call_mcp, fake_aur.workspace, oversized))


def test_a_verdict_of_exactly_one_mib_passes_the_size_check(demo: FakeAur) -> None:
    text = json.dumps(v0())
    padded = text + " " * (1_048_576 - len(text))
    assert ok(verify_via(call_cli, demo.workspace, padded))["verified"] is True


def test_a_non_object_verdict_is_invalid_input(fake_aur: FakeAur, door: Door) -> None:
    error(verify_via(door, fake_aur.workspace, "[1, 2]" if door is call_cli else [1, 2]))


def test_the_result_echoes_the_document_as_submitted(demo: FakeAur) -> None:
    verdict = copy.deepcopy(v0())
    reordered = dict(reversed(list(verdict.items())))
    result = ok(verify_via(call_cli, demo.workspace, reordered))
    assert result["verdict_sha256"] == V0_SHA256


def test_workspace_files_are_not_needed(tmp_path: Path) -> None:
    workspace = tmp_path / "empty"
    workspace.mkdir()
    verdict = v0()
    verdict["verdict"], verdict["proposed_changes"] = "uncertain", []
    assert ok(verify_via(call_cli, workspace, verdict))["reason"] == "uncertain verdicts are never verified"


def test_aur_client_is_built_once_per_process(demo: FakeAur) -> None:
    built: list[AurClient] = []

    def prepare(context: Context) -> None:
        first, second = aur(context), aur(context)
        assert first is second
        assert isinstance(first, AurClient)
        built.append(first)

    ok(verify_via(call_mcp, demo.workspace, v0(), prepare=prepare))
    assert len(built) == 1


# ---------------------------------------------------------------------------------------------
# A22 for verify: CLI and MCP give byte-identical output in every kind of outcome


def _uncertain() -> dict[str, Any]:
    verdict = v0()
    verdict["verdict"], verdict["proposed_changes"] = "uncertain", []
    return verdict


def _fatal() -> dict[str, Any]:
    verdict = v0()
    verdict["evidence"][0]["rule_id"] = verdict["proposed_changes"][0]["rule_id"] = "R012"
    return verdict


@pytest.mark.parametrize(
    ("install", "verdict"),
    [
        (lambda fake: install_demo_bin(fake, "changed"), v0),
        (lambda fake: install_demo_bin(fake), _uncertain),
        (lambda fake: install_demo_bin(fake), _fatal),
        (lambda fake: install_fetch(fake, "srcinfo-only"), lambda: fetch_verdict(EXTRA_URL)),
        (lambda fake: install_typo(fake), tp_sample),
        (lambda fake: None, v0),
    ],
    ids=["changed-scriptlet", "uncertain", "fatal-rule", "srcinfo-only-url", "true-positive", "package-absent"],
)
def test_cli_and_mcp_bytes_agree(
    fake_aur: FakeAur,
    install: Callable[[FakeAur], None],
    verdict: Callable[[], dict[str, Any]],
) -> None:
    install(fake_aur)
    verify_via(call_both, fake_aur.workspace, verdict())


# ---------------------------------------------------------------------------------------------
# Issue 7: provenance is prose; a diff's characters are the code-fix gate's business, not the verdict's


def test_a_double_hyphen_in_a_provenance_is_invalid_input_naming_it(fake_aur: FakeAur, door: Door) -> None:
    install_typo(fake_aur)
    verdict = tp_sample()
    verdict["proposed_changes"][1]["provenance"] = "maintainer report -- see the AUR thread"
    assert error(verify_via(door, fake_aur.workspace, verdict)) == (
        'verdict: format gate: $.proposed_changes[1].provenance: "--" sentence separator (U+002D U+002D) at '
        "index 18 is not allowed in prose"
    )
    assert fake_aur.targets() == []


def test_code_fixes_with_non_ascii_or_cr_never_block_the_verdict(demo: FakeAur, door: Door) -> None:
    verdict = v0()
    verdict["code_fixes"] = [
        {"path": "src/trustsight/a.py", "diff": "--- a/src/trustsight/a.py\n+++ b/src/trustsight/a.py\n"
                                                "@@ -1 +1 @@\n-caf\u00e9\r\n+caf\u00e9 cr\u00e8me\r\n"},
    ]  # fmt: skip
    result = ok(verify_via(door, demo.workspace, verdict))
    assert (result["verified"], result["reason"]) == (True, "all checks passed")
    assert result["verdict_document"]["code_fixes"] == verdict["code_fixes"]
