"""fp_agent_pr (docs/triage.md §10, docs/triage.md §11, A16-A21) on real fp_agent_verify results, through the CLI and MCP."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import trustme
from doors import Answer, call_both, call_cli, call_mcp
from hypothesis import given, settings
from hypothesis import strategies as st
from render_support import OBJECT_FILES, fresh, render_workspace, reverified, verify_all
from watcher import RULES_PATH, edit_diff, head, make_watcher, rules_line, rules_text, tree_state

from harness.text.formatgate import check
from harness.triage.render import branch, pretty_json, rules_phrase
from harness.triage.verdict import verdict_sha256

DAY = "2026-01-15"
RESULT_CAP = 2_097_152
V0_FILE = f"data/fp-suppressions/{DAY}-tiny-demo-bin.json"
V0_FILE_SHA256 = "ab235ccba53f3fe5a9636a2071cc8c9d3448df219f06f9b3e9309f3271c39b75"
TP_FILE = f"data/iocs/triage-{DAY}.json"
TP_FILE_SHA256 = "b96796533f884854407721b46f5322bfe910cc9368fc463105fe53b49429984c"
V0_SHA256 = "260f694d794f3a7daf259619321bf1500a6d18cb5ad3918a71b3297585fbccc2"
A1, B2 = "a1" * 20, "b2" * 20
FP_REVIEW = (
    "This pull request is a proposal rendered by triage-harness from a verified verdict. Nothing is merged "
    "automatically; a maintainer reviews the suppression, the code fixes and the checks above."
)
TP_REVIEW = (
    "This pull request is a proposal rendered by triage-harness from a verified verdict. Nothing is merged "
    "automatically; a maintainer reviews every indicator before it ships."
)
V0_BODY = f"""\
## Summary

Verified false positive on tiny-demo-bin (1.0.0-1 -> 1.0.1-1), AUR commits {A1} and {B2}.
Verdict confidence: high. Verdict sha256: {V0_SHA256}.

## Findings

| Finding | False trigger | Fix |
|---|---|---|
| R007 in tiny-demo.install | The scriptlet is byte-identical to the previous release. | suppression in {V0_FILE} |

## Checks

| Rule | File | Line | Check | Result |
|---|---|---|---|---|
| R007 | tiny-demo.install | - | check_phantom_install | passed |

## Rationale

    The install scriptlet did not change in this update.

## Code fixes

No code fixes were proposed.

## Files

- {V0_FILE} (516 bytes)

## Review

{FP_REVIEW}
"""


@pytest.fixture(scope="module")
def results(aur_ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return verify_all(aur_ca, tmp_path_factory.mktemp("verify"))


@pytest.fixture(scope="module")
def watcher(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_watcher(tmp_path_factory.mktemp("watcher") / "checkout")


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory, watcher: Path) -> Path:
    return render_workspace(tmp_path_factory.mktemp("render") / "ws", watcher)


def pr(ws: Path, result: dict[str, Any], target: str = "trustsight", date: str = DAY) -> Answer:
    answer = call_both(ws, "fp_agent_pr", {"result": result, "target_repo": target, "date": date}, encode=OBJECT_FILES)
    if answer.exit_code == 0:
        assert_emitted_strings_pass_the_gate(answer.document)
    return answer


def assert_emitted_strings_pass_the_gate(document: dict[str, Any]) -> None:
    check(document["title"], "line")
    check(document["body"], "document")
    for path, text in document["files"].items():
        if path.endswith(".json"):
            check(text, "document")
        text.encode("utf-8")
    ref = subprocess.run(["git", "check-ref-format", "--branch", document["branch"]], capture_output=True)
    assert ref.returncode == 0, document["branch"]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_a16_v0_renders_the_spec_branch_title_file_and_body_twice_identically(
    ws: Path, results: dict[str, dict[str, Any]]
) -> None:
    first = pr(ws, results["A1"])
    second = pr(ws, results["A1"])
    assert first.exit_code == 0 and first.text == second.text
    document = first.document
    assert document["target_repo"] == "trustsight"
    assert document["branch"] == "triage/fp-tiny-demo-bin-260f694d794f"
    assert document["title"] == "fp: suppress R007 on tiny-demo-bin (1.0.0-1 -> 1.0.1-1)"
    assert list(document["files"]) == [V0_FILE]
    text = document["files"][V0_FILE]
    assert (len(text.encode()), sha256(text)) == (516, V0_FILE_SHA256)
    assert document["body"] == V0_BODY
    assert (document["code_fixes"], document["base_commit"]) == ([], None)


def test_a17_the_date_names_the_file_and_is_the_only_changed_field(
    ws: Path, results: dict[str, dict[str, Any]]
) -> None:
    document = pr(ws, results["A1"], date="2026-01-16").document
    path = "data/fp-suppressions/2026-01-16-tiny-demo-bin.json"
    assert list(document["files"]) == [path]
    record = json.loads(document["files"][path])
    assert record == {**results["A1"]["suppressions"][0], "created_at": "2026-01-16T00:00:00.000000Z"}
    assert results["A1"]["suppressions"][0]["created_at"] == "2026-01-14T00:00:00.000000Z"


def test_a18_an_unverified_result_is_refused(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    answer = pr(ws, results["A2"])
    assert answer.exit_code == 5
    assert answer.error == {
        "code": "refused",
        "message": "result is not verified; only verified results are rendered",
        "operation": "fp_agent_pr",
    }


def test_a18_an_edited_verdict_document_is_a_digest_mismatch(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    result = fresh(results, "A1")
    result["verdict_document"]["rationale"] = "Edited after verification."
    answer = pr(ws, result)
    assert answer.exit_code == 2
    assert answer.error["message"] == (
        f"result is internally inconsistent: verdict_sha256 {V0_SHA256} is not the digest of verdict_document"
    )


def test_a19_a_valid_fix_is_applied_and_a_dot_path_rejected_beside_the_suppression(
    ws: Path, watcher: Path, results: dict[str, dict[str, Any]]
) -> None:
    before = tree_state(watcher)
    document = pr(ws, results["A19"]).document
    assert tree_state(watcher) == before
    assert document["base_commit"] == head(watcher)
    assert document["code_fixes"] == [
        {"index": 1, "path": RULES_PATH, "status": "applied", "reason": "", "added": 1, "removed": 1},
        {"index": 2, "path": "../etc/passwd", "status": "rejected", "reason": "path has a dot component",
         "added": 0, "removed": 0},
    ]  # fmt: skip
    assert sorted(document["files"]) == [V0_FILE, RULES_PATH]
    assert document["files"][RULES_PATH] == rules_text().replace(rules_line(2), 'RULE_002 = "fixed"\n')
    fixes = document["body"].split("## Code fixes\n\n")[1].split("\n\n## Files")[0]
    assert fixes == (
        f"Base commit of the watcher checkout: {head(watcher)}.\n\n"
        "| # | Path | Status | Detail |\n|---|---|---|---|\n"
        f"| 1 | {RULES_PATH} | applied | +1 -1 lines |\n"
        "| 2 | ../etc/passwd | rejected | path has a dot component |"
    )
    files = document["body"].split("## Files\n\n")[1].split("\n\n## Review")[0]
    size = len(document["files"][RULES_PATH].encode())
    assert files == f"- {V0_FILE} (516 bytes)\n- {RULES_PATH} ({size} bytes)"


def test_a19_is_byte_identical_across_calls_and_fresh_checkouts(
    tmp_path: Path, ws: Path, results: dict[str, dict[str, Any]]
) -> None:
    other = render_workspace(tmp_path / "ws2", make_watcher(tmp_path / "checkout2"))
    assert pr(ws, results["A19"]).text == pr(ws, results["A19"]).text == pr(other, results["A19"]).text


@pytest.mark.parametrize(
    ("name", "reason"),
    [("A20-mode", 'diff header "new mode" is not allowed'), ("A20-link", "target is a symlink or not a regular file")],
)
def test_a20_mode_changes_and_symlink_targets_are_rejected(
    ws: Path, results: dict[str, dict[str, Any]], name: str, reason: str
) -> None:
    document = pr(ws, results[name]).document
    assert [(fix["status"], fix["reason"]) for fix in document["code_fixes"]] == [
        ("rejected", reason),
        ("rejected", "path has a dot component"),
    ]
    assert list(document["files"]) == [V0_FILE]
    assert f"| 1 | {document['code_fixes'][0]['path']} | rejected | {reason} |" in document["body"]


def test_without_a_watcher_every_fix_is_rejected_and_the_suppression_still_renders(
    tmp_path: Path, results: dict[str, dict[str, Any]]
) -> None:
    document = pr(render_workspace(tmp_path / "bare", None), results["A19"]).document
    assert [(fix["status"], fix["reason"]) for fix in document["code_fixes"]] == [
        ("rejected", "watcher checkout not configured"),
        ("rejected", "path has a dot component"),
    ]
    assert document["base_commit"] is None
    assert list(document["files"]) == [V0_FILE]
    assert "Base commit of the watcher checkout: none.\n" in document["body"]


def test_a21_a_tp_for_trustsight_harness_is_refused(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    answer = pr(ws, results["A14"], target="trustsight-harness")
    assert (answer.exit_code, answer.error["message"]) == (5, "TP results render only for target trustsight")


def test_the_tp_pr_of_16_1(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    first, second = pr(ws, results["A14"]), pr(ws, results["A14"])
    assert first.text == second.text
    document = first.document
    digest = results["A14"]["verdict_sha256"]
    assert document["branch"] == f"triage/ioc-tiny-typo-{digest[:12]}"
    assert document["title"] == "ioc: add 2 indicators for tiny-typo (tiny-typo-2026-01)"
    assert list(document["files"]) == [TP_FILE]
    text = document["files"][TP_FILE]
    assert (len(text.encode()), sha256(text)) == (496, TP_FILE_SHA256)
    assert [entry["type"] for entry in json.loads(text)] == ["domain", "hash"]
    assert (document["code_fixes"], document["base_commit"]) == ([], None)
    provenance = "AUR takedown 2026-01-14, maintainer report; campaign tiny-typo-2026-01; incident none; expires never"
    hash_value = "854216add0a53613db64d748eac6731fb549c9ada21b33ceafec83c6597f584d"
    assert document["body"] == (
        "## Summary\n\n"
        f"Verified true positive on tiny-typo (? -> ?): 2 indicators proposed for {TP_FILE}.\n"
        f"AUR status of tiny-typo: present. Verdict confidence: high. Verdict sha256: {digest}.\n\n"
        "## Indicators\n\n| Type | Value | Confidence |\n|---|---|---|\n"
        "| domain | updates.tiny-typo-c2.net | high |\n"
        f"| hash | {hash_value} | confirmed |\n\n"
        "## Provenance\n\n"
        f"- domain:updates.tiny-typo-c2.net: {provenance}\n"
        f"- hash:{hash_value}: {provenance}\n\n"
        "## Rationale\n\n    The package fetches a second stage from a typosquatted host.\n\n"
        f"## Files\n\n- {TP_FILE} (496 bytes)\n\n"
        f"## Review\n\n{TP_REVIEW}\n"
    )


def test_a_tp_label_falls_back_to_the_incident_and_one_indicator_is_singular(
    ws: Path, results: dict[str, dict[str, Any]]
) -> None:
    document = pr(ws, results["tp-incident"]).document
    assert document["title"] == "ioc: add 1 indicator for tiny-typo (INC-7)"
    assert "2 indicators" not in document["body"]
    assert ": 1 indicator proposed for " in document["body"]
    assert "; campaign none; incident INC-7; expires never" in document["body"]


def test_an_absent_package_with_a_takedown_renders_absent_and_keeps_only_set_keys(
    ws: Path, results: dict[str, dict[str, Any]]
) -> None:
    document = pr(ws, results["tp-absent"]).document
    assert "AUR status of tiny-gone: absent." in document["body"]
    assert document["title"] == "ioc: add 3 indicators for tiny-gone (tiny-typo-2026-01)"
    entries = json.loads(document["files"][TP_FILE])
    assert entries[2] == {
        "added": DAY,
        "confidence": "confirmed",
        "expires_at": "2026-07-01",
        "incident": "INC-9",
        "note": "Removed by the AUR team.",
        "provenance": "AUR takedown 2026-01-14, maintainer report",
        "type": "package",
        "value": "tiny-gone",
    }
    assert all(None not in entry.values() for entry in entries)
    assert "- package:tiny-gone: AUR takedown 2026-01-14, maintainer report; campaign none; incident INC-9; " \
        "expires 2026-07-01" in document["body"]


def test_several_suppressions_get_one_file_each_named_by_rule(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    document = pr(ws, results["two-rules"]).document
    paths = [f"data/fp-suppressions/{DAY}-tiny-demo-bin-r007.json", f"data/fp-suppressions/{DAY}-tiny-demo-bin-r053.json"]
    assert sorted(document["files"]) == paths
    assert [json.loads(document["files"][p])["rule_id"] for p in paths] == ["R007", "R053"]
    assert document["title"] == "fp: suppress R007, R053 on tiny-demo-bin (1.0.0-1 -> 1.0.1-1)"
    assert f"| R007 in tiny-demo.install | The scriptlet is byte-identical to the previous release. | suppression in {paths[0]} |" in document["body"]
    assert f"| R053 in tiny-demo.install | Same scriptlet, other rule. | suppression in {paths[1]} |" in document["body"]


def test_trustsight_harness_records_the_result_as_received(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    document = pr(ws, results["A19"], target="trustsight-harness").document
    path = f"benign/fp-{DAY}/tiny-demo-bin.triage.json"
    assert document["files"] == {path: pretty_json(results["A19"])}
    assert document["title"] == "triage: record benign R007 on tiny-demo-bin (1.0.0-1 -> 1.0.1-1)"
    assert document["branch"] == f"triage/fp-tiny-demo-bin-{results['A19']['verdict_sha256'][:12]}"
    assert (document["code_fixes"], document["base_commit"]) == ([], None)
    assert "## Code fixes\n\nCode fixes are rendered only for the trustsight target.\n" in document["body"]
    assert f"| recorded in {path} |" in document["body"]


def test_pipes_in_verdict_text_are_escaped_in_tables_only(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    body = pr(ws, results["pipes"]).document["body"]
    assert f"| R007 in tiny-demo.install | Same \\| bytes, x\\\\|y kept. | suppression in {V0_FILE} |" in body
    assert "## Rationale\n\n    Line one | with a pipe.\n    Line two.\n\n## Code fixes" in body


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"target_repo": "other"}, 'target_repo: "other" is not one of trustsight, trustsight-harness'),
        ({"date": "2026-02-30"}, 'date: "2026-02-30" is not a real date YYYY-MM-DD in the years 2000 to 2099'),
        ({"date": "1999-12-31"}, 'date: "1999-12-31" is not a real date YYYY-MM-DD in the years 2000 to 2099'),
        ({"date": "2026-1-15"}, 'date: "2026-1-15" is not a real date YYYY-MM-DD in the years 2000 to 2099'),
    ],
)
def test_target_and_date_are_checked(
    ws: Path, results: dict[str, dict[str, Any]], arguments: dict[str, str], message: str
) -> None:
    answer = call_both(ws, "fp_agent_pr", {"result": results["A1"], "target_repo": "trustsight", "date": DAY, **arguments}, encode=OBJECT_FILES)
    assert (answer.exit_code, answer.error["code"], answer.error["message"]) == (2, "invalid_input", message)


def test_all_inputs_are_required(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    for missing in ("result", "target_repo", "date"):
        arguments = {"result": results["A1"], "target_repo": "trustsight", "date": DAY}
        del arguments[missing]
        answer = call_both(ws, "fp_agent_pr", arguments, encode=OBJECT_FILES)
        assert (answer.exit_code, answer.error["message"]) == (2, f"{missing}: is required")


def edited(results: dict[str, dict[str, Any]], name: str, path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    result = fresh(results, name)
    node = result
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return result


@pytest.mark.parametrize(
    ("name", "path", "value", "code", "message"),
    [
        # Step 1: shape, the gate with the result's modes, the model.
        ("A1", ("extra",), 1, "invalid_input",
         "result: extra: unknown field; the accepted fields are verified, reason, verdict, package, pkgbase, "
         "version_transition, checks, findings_table, suppressions, report_entry, ioc_entries, snapshot, "
         "verdict_document, verdict_sha256"),
        ("A1", ("verified",), "true", "invalid_input", "result: verified: expected a boolean, got \"true\""),
        ("A1", ("findings_table",), KeyError, "invalid_input", "result: findings_table: is required"),
        ("A1", ("verdict_document", "rationale"), "old\u2014new", "invalid_input",
         'result: format gate: $.verdict_document.rationale: em dash U+2014 at index 3 is not allowed '
         '(use ":", ";", "," or parentheses)'),
        ("A1", ("checks", 0, "reason"), "2.0\u20132.1", "invalid_input",
         'result: format gate: $.checks[0].reason: en dash U+2013 at index 3 is not allowed (use "-" or "to")'),
        ("A1", ("verdict_document", "evidence", 0, "claim"), "unchanged -- really", "invalid_input",
         'result: format gate: $.verdict_document.evidence[0].claim: "--" sentence separator (U+002D U+002D) '
         "at index 10 is not allowed in prose"),
        ("A1", ("package",), "tiny\x07demo", "invalid_input",
         "result: format gate: $.package: character U+0007 at index 4 is not allowed"),
        ("A1", ("findings_table",), "a\tb", "invalid_input",
         "result: format gate: $.findings_table: character U+0009 at index 1 is not allowed"),
        ("A1", ("reason",), "well--known", "invalid_input", None),
        # Step 2: only verified, never uncertain.
        ("A1", ("verified",), False, "refused", "result is not verified; only verified results are rendered"),
        ("A1", ("verdict",), "uncertain", "refused", "uncertain verdicts are never rendered"),
        # Step 3: consistency with the verdict document.
        ("A1", ("verdict_document", "notes"), "x", "invalid_input",
         "result is internally inconsistent: verdict_document fails the verdict schema: verdict: $.notes: unknown key"),
        ("A1", ("verdict_sha256",), "0" * 64, "invalid_input",
         f"result is internally inconsistent: verdict_sha256 {'0' * 64} is not the digest of verdict_document"),
        ("A1", ("verdict",), "TP", "invalid_input", "result is internally inconsistent: verdict TP differs from "
         "verdict_document (FP)"),
        ("A1", ("package",), "tiny-demo", "invalid_input", "result is internally inconsistent: package tiny-demo "
         "differs from verdict_document (tiny-demo-bin)"),
        ("A1", ("suppressions",), [], "invalid_input",
         "result is internally inconsistent: a verified FP result has no suppressions"),
        ("A14", ("ioc_entries",), [], "invalid_input",
         "result is internally inconsistent: a verified TP result has no ioc_entries"),
    ],
)
def test_section_10_checks_in_order(
    ws: Path, results: dict[str, dict[str, Any]], name: str, path: tuple[Any, ...], value: Any, code: str,
    message: str | None,
) -> None:
    answer = pr(ws, edited(results, name, path, value))
    if message is None:
        # `--` is only refused in prose; the result's reason is a `line` field.
        assert answer.exit_code == 0
        return
    assert (answer.error["code"], answer.error["message"]) == (code, message)
    assert answer.exit_code == {"invalid_input": 2, "refused": 5}[code]


def test_result_cap_is_two_mebibytes(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    # Over MCP the cap applies to the canonical JSON of the received object: exactly the cap passes.
    # A check's reason is the one free `line` string a renderer never shows, so it pads the result.
    result = fresh(results, "A1")
    result["checks"][0]["reason"] = ""
    size = len(json.dumps(result, sort_keys=True, separators=(",", ":")).encode())
    result["checks"][0]["reason"] = "x" * (RESULT_CAP - size)
    arguments = {"result": result, "target_repo": "trustsight", "date": DAY}
    at_cap = call_mcp(ws, "fp_agent_pr", arguments)
    assert at_cap.exit_code == 0
    result["checks"][0]["reason"] += "x"
    over = call_mcp(ws, "fp_agent_pr", arguments)
    assert over.error == {
        "code": "invalid_input",
        "message": "result: input is larger than 2,097,152 bytes",
        "operation": "fp_agent_pr",
    }
    # On the CLI the file itself is capped before it is read.
    cli = call_cli(ws, "fp_agent_pr", arguments, encode=OBJECT_FILES)
    assert (cli.exit_code, cli.error["code"]) == (2, "invalid_input")


def test_a_body_over_65536_characters_is_invalid_input(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    # 64 evidence items with the longest file and a claim of pipes (escaped to two characters each).
    def long_evidence(document: dict[str, Any]) -> None:
        item = {"rule_id": "R007", "file": "f" * 255, "line": 10_000_000, "claim": "|" * 500}
        document["evidence"] = [dict(item, file=f"{i:02d}" + "f" * 253) for i in range(64)]

    answer = pr(ws, reverified(results["A1"], long_evidence))
    assert (answer.exit_code, answer.error["code"]) == (2, "invalid_input")
    assert answer.error["message"].startswith("body: the rendered body has ")


def test_a_cli_result_file_with_a_duplicate_key_is_refused(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    from runners import run_cli

    text = json.dumps(results["A1"])
    path = ws / "dup.json"
    path.write_text('{"verified": true, ' + text[1:])
    answer = run_cli(["--workspace", str(ws), "fp_agent_pr", "--result", str(path), "--target-repo", "trustsight",
                      "--date", DAY])  # fmt: skip
    assert answer.exit_code == 2
    assert 'duplicate key "verified"' in answer.json()["error"]["message"]


@settings(max_examples=40, deadline=None)
@given(st.from_regex(r"[a-z0-9@_+][a-z0-9@._+-]{0,126}", fullmatch=True).filter(lambda p: ".." not in p))
def test_branch_names_pass_git_check_ref_format(package: str) -> None:
    for kind in ("fp", "ioc"):
        name = branch(kind, package, V0_SHA256)
        assert subprocess.run(["git", "check-ref-format", "--branch", name], capture_output=True).returncode == 0


def test_rules_phrase_caps_at_three() -> None:
    assert rules_phrase(["R007"]) == "R007"
    assert rules_phrase(["H016", "R007", "C003"]) == "C003, H016, R007"
    assert rules_phrase(["R1", "R5", "R3", "R2", "R4"]) == "R1, R2, R3 and 2 more"


# Issue 7: a result's parts must agree; agent text can neither carry "--" nor forge structure; code fixes
# are gated line by line and land only where their hunks say.


def _set(path: tuple[Any, ...], value: Any) -> Any:
    return lambda result: edited({"r": result}, "r", path, value)


@pytest.mark.parametrize("target", ["trustsight", "trustsight-harness"])
def test_suppressions_that_do_not_cover_the_cited_rules_are_invalid_input(
    ws: Path, results: dict[str, dict[str, Any]], target: str
) -> None:
    result = edited(results, "A1", ("suppressions", 0, "rule_id"), "R012")
    answer = pr(ws, result, target=target)
    assert (answer.exit_code, answer.error["code"], answer.error["message"]) == (
        2,
        "invalid_input",
        "result is internally inconsistent: $.suppressions[0].rule_id is R012; verdict_document suppresses R007 "
        "(one record per rule, sorted by rule id)",
    )


def _reversed_suppressions(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    result = fresh(results, "two-rules")
    result["suppressions"].reverse()
    return result


def _doubled_suppression(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    result = fresh(results, "A1")
    result["suppressions"].append(dict(result["suppressions"][0]))
    return result


def _extra_indicator(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    result = fresh(results, "A14")
    result["ioc_entries"].append(dict(result["ioc_entries"][0], value="other.example.net"))
    return result


def _absent_without_takedown(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    def plain(document: dict[str, Any]) -> None:
        document["proposed_changes"][2]["provenance"] = "maintainer report"

    result = reverified(results["tp-absent"], plain)
    result["ioc_entries"][2]["provenance"] = "maintainer report"
    return result


INCONSISTENT = "result is internally inconsistent: "


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_reversed_suppressions, "$.suppressions[0].rule_id is R053; verdict_document suppresses R007, R053 "
         "(one record per rule, sorted by rule id)"),
        (_doubled_suppression, "$.suppressions has 2 records; verdict_document suppresses 1 (R007)"),
        (lambda rs: edited(rs, "A1", ("suppressions", 0, "package"), "other"),
         "$.suppressions[0].package other differs from the package"),
        (lambda rs: edited(rs, "A1", ("suppressions", 0, "reason"), "Anything at all."),
         "$.suppressions[0].reason does not start with the reason verdict_document gives for R007"),
        (lambda rs: edited(rs, "A1", ("report_entry",), None), "$.report_entry is null in a verified FP result"),
        (lambda rs: edited(rs, "A1", ("report_entry", "rules"), ["R053"]),
         "$.report_entry.rules (R053) differ from the evidence rules (R007)"),
        (lambda rs: edited(rs, "A1", ("report_entry", "kind"), "mixed"),
         "$.report_entry.kind mixed differs from what the evidence routes give (phantom_install)"),
        (lambda rs: edited(rs, "A1", ("report_entry", "summary"), "R007 on other 1 -> 2: x"),
         "$.report_entry.summary does not start with the rules, package and versions of verdict_document"),
        (lambda rs: edited(rs, "A1", ("version_transition",), "0.1 -> 9.9"),
         "$.version_transition 0.1 -> 9.9 differs from verdict_document (1.0.0-1 -> 1.0.1-1)"),
        (lambda rs: edited(rs, "A1", ("findings_table",), rs["A1"]["findings_table"] + "\n\n## Fake heading"),
         "$.findings_table is not the table verdict_document gives for a verified result"),
        (lambda rs: edited(rs, "A1", ("ioc_entries",), rs["A14"]["ioc_entries"]),
         "$.ioc_entries is not empty in an FP result"),
        (_extra_indicator, "$.ioc_entries has 3 entries; verdict_document gives 2"),
        (lambda rs: edited(rs, "A14", ("ioc_entries", 1, "provenance"), "Forged after verification."),
         "$.ioc_entries[1].provenance differs from what verdict_document gives"),
        (lambda rs: edited(rs, "A14", ("ioc_entries", 0, "campaign"), None),
         "$.ioc_entries[0].campaign differs from what verdict_document gives"),
        (lambda rs: edited(rs, "A14", ("suppressions",), rs["A1"]["suppressions"]),
         "$.suppressions is not empty in a TP result"),
        (lambda rs: edited(rs, "A14", ("report_entry",), rs["A1"]["report_entry"]),
         "$.report_entry is not null in a TP result"),
        (_absent_without_takedown, "$.pkgbase is empty (package absent from the AUR), but package indicator 2 of "
         "verdict_document cites no takedown"),
        (lambda rs: edited(rs, "A1", ("pkgbase",), ""),
         "$.pkgbase is empty, but an FP verifies only for a package on the AUR"),
        (lambda rs: edited(rs, "A1", ("checks", 3, "passed"), False),
         "$.checks[3].passed is false in a verified result"),
    ],
)
def test_every_part_a_renderer_reads_must_agree_with_the_verdict(
    ws: Path, results: dict[str, dict[str, Any]], make: Any, message: str
) -> None:
    result = make(results)
    for operation in ("fp_agent_pr", "fp_agent_alert") if result["verdict"] == "TP" else ("fp_agent_pr",):
        arguments = {"result": result, "target_repo": "trustsight", "date": DAY}
        if operation == "fp_agent_alert":
            arguments = {"result": result}
        answer = call_both(ws, operation, arguments, encode=OBJECT_FILES)
        assert (answer.exit_code, answer.error["message"]) == (2, INCONSISTENT + message), operation


DOUBLE_HYPHEN = "maintainer report -- see the AUR thread"
GATE_DOUBLE_HYPHEN = '"--" sentence separator (U+002D U+002D) at index 18 is not allowed in prose'


def _provenance_everywhere(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    # What verification gave before provenance was prose: the string in the verdict and in every entry.
    result = fresh(results, "A14")
    for change in result["verdict_document"]["proposed_changes"]:
        change["provenance"] = DOUBLE_HYPHEN
    for entry in result["ioc_entries"]:
        entry["provenance"] = DOUBLE_HYPHEN
    result["verdict_sha256"] = verdict_sha256(result["verdict_document"])
    return result


@pytest.mark.parametrize(
    ("make", "path"),
    [
        (_provenance_everywhere, "$.ioc_entries[0].provenance"),
        (lambda rs: edited(rs, "A14", ("ioc_entries", 0, "provenance"), DOUBLE_HYPHEN), "$.ioc_entries[0].provenance"),
        (lambda rs: edited(rs, "A14", ("ioc_entries", 0, "note"), "ok -- really"), "$.ioc_entries[0].note"),
    ],
)
def test_a_double_hyphen_in_an_indicators_prose_is_never_emitted(
    ws: Path, results: dict[str, dict[str, Any]], make: Any, path: str
) -> None:
    result = make(results)
    index = 3 if path.endswith("note") else 18
    message = f"result: format gate: {path}: " + GATE_DOUBLE_HYPHEN.replace("index 18", f"index {index}")
    for arguments in ({"result": result, "target_repo": "trustsight", "date": DAY}, {"result": result}):
        operation = "fp_agent_pr" if "date" in arguments else "fp_agent_alert"
        answer = call_both(ws, operation, arguments, encode=OBJECT_FILES)
        assert (answer.exit_code, answer.error["message"]) == (2, message), operation
        assert DOUBLE_HYPHEN not in answer.text and "ok -- really" not in answer.text


FORGERY = "Benign.\n## Fake heading\n| fake | table |\n|---|---|\n- fake item\n```\n> quoted\n<b>html</b>\n\nEnd."


@pytest.mark.parametrize("name", ["A1", "A14"])
def test_agent_rationale_cannot_forge_pr_structure(ws: Path, results: dict[str, dict[str, Any]], name: str) -> None:
    result = reverified(results[name], lambda document: document.update(rationale=FORGERY))
    body = pr(ws, result).document["body"]
    headings = [line for line in body.split("\n") if line.startswith("#")]
    expected = ["Summary", "Findings", "Checks", "Rationale", "Code fixes", "Files", "Review"]
    if name == "A14":
        expected = ["Summary", "Indicators", "Provenance", "Rationale", "Files", "Review"]
    assert headings == [f"## {heading}" for heading in expected]
    section = body.split("## Rationale\n\n")[1].split("\n\n## ")[0]
    assert section == "\n".join("    " + line for line in FORGERY.split("\n"))
    rendered = [line for line in body.split("\n") if not line.startswith("    ")]
    assert not any(line.startswith(("| fake", "- fake", "```", "> ", "<b>")) for line in rendered)


def test_a_claim_with_a_newline_is_refused_naming_it(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    result = fresh(results, "A1")
    result["verdict_document"]["evidence"][0]["claim"] = "Same.\n## Fake heading"
    answer = pr(ws, result)
    assert (answer.exit_code, answer.error["message"]) == (
        2,
        "result: format gate: $.verdict_document.evidence[0].claim: character U+000A at index 5 is not allowed",
    )


ACCENT = "src/trustsight/accent.txt"
ACCENT_FIX = {
    "path": ACCENT,
    "diff": f"--- a/{ACCENT}\n+++ b/{ACCENT}\n@@ -1 +1 @@\n-abcdefghi\u00e9xyz\n\\ No newline at end of file\n"
    "+abcdefghi-xyz\n\\ No newline at end of file\n",
}


def test_a_fix_adding_non_ascii_is_rejected_alone_and_one_removing_it_applies(
    ws: Path, results: dict[str, dict[str, Any]]
) -> None:
    fixes = [{"path": RULES_PATH, "diff": edit_diff(2, 'RULE_002 = "caf\u00e9"')}, ACCENT_FIX]
    result = reverified(results["A1"], lambda document: document.update(code_fixes=fixes))
    document = pr(ws, result).document
    assert [(fix["status"], fix["reason"]) for fix in document["code_fixes"]] == [
        ("rejected", "format gate: diff line 6: character U+00E9 at index 16 is not allowed"),
        ("applied", ""),
    ]
    assert document["files"][ACCENT] == "abcdefghi-xyz"
    assert V0_FILE in document["files"]
    assert "| 1 | src/trustsight/rules.py | rejected | format gate: diff line 6: character U+00E9 " in document["body"]


def test_a_fix_with_a_cr_in_an_added_line_is_rejected_alone(ws: Path, results: dict[str, dict[str, Any]]) -> None:
    fixes = [{"path": RULES_PATH, "diff": edit_diff(3, "x = 1\r")}]
    document = pr(ws, reverified(results["A1"], lambda d: d.update(code_fixes=fixes))).document
    assert [(fix["status"], fix["reason"]) for fix in document["code_fixes"]] == [
        ("rejected", "diff line 7 contains CR")
    ]
    assert list(document["files"]) == [V0_FILE]


def test_a_zero_context_hunk_git_would_move_is_rejected_beside_the_suppression(
    ws: Path, results: dict[str, dict[str, Any]]
) -> None:
    inject = {"path": RULES_PATH, "diff": f"--- a/{RULES_PATH}\n+++ b/{RULES_PATH}\n@@ -5,0 +6 @@\n+INJECT = 1\n"}
    document = pr(ws, reverified(results["A1"], lambda d: d.update(code_fixes=[inject]))).document
    assert document["code_fixes"] == [
        {"index": 1, "path": RULES_PATH, "status": "rejected",
         "reason": "post-check failed: git applied the hunks other than where their headers place them",
         "added": 0, "removed": 0},
    ]  # fmt: skip
    assert list(document["files"]) == [V0_FILE]
