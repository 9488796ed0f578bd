"""The fp_agent_verify algorithm (docs/triage.md §9) over a validated verdict, an AUR client and a clock.

Every outcome is a result: network trouble and unusable configuration fail closed as `verified: false`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from harness.aur.checks import CheckOutcome, Route, Snapshot, route, run_item, take_snapshot
from harness.aur.client import AurClient, AurSession, RpcAnswer, UnusableClient, plain_target, rpc_target
from harness.text.formatgate import cell
from harness.triage.ioc import check_indicators, ioc_entries
from harness.triage.result import Result
from harness.triage.verdict import IocChange, Suppression, Verdict

SCHEMA_PASSED = "verdict is well-formed"
UNCERTAIN = "uncertain verdicts are never verified"
ALL_PASSED = "all checks passed"
MAX_SENTENCES = 4
_TAKEDOWN = re.compile(r"(?i)\btake-?down\b")
_TABLE_HEAD = ("| Rule | File | Line | Check | Result |", "|---|---|---|---|---|")
_VERIFIED_BY = "Verified by triage-harness:"
_REPORT_KINDS = {
    frozenset({"check_phantom_install"}): "phantom_install",
    frozenset({"check_url_in_source"}): "url_in_source",
}
_EMPTY_SNAPSHOT: dict[str, Any] = {
    "source_url": None,
    "pkgbuild_sha256": None,
    "srcinfo_sha256": None,
    "install_sha256": None,
    "install_name": None,
}


def verify(verdict: Verdict, aur: AurClient | UnusableClient, clock: Callable[[], datetime]) -> Result:
    """Replay the deterministic checks a verdict's claims need and say whether they all hold."""
    checks = [CheckOutcome("schema", (), True, SCHEMA_PASSED, {"verdict_sha256": verdict.sha256})]
    if verdict.verdict == "uncertain":
        table = findings_table(verdict, _not_replayed)
        return _result(verdict, checks, table, reason=UNCERTAIN, pkgbase="", snapshot=dict(_EMPTY_SNAPSHOT))
    session = aur.session() if isinstance(aur, AurClient) else aur
    if verdict.verdict == "FP":
        return _verify_fp(verdict, session, checks, clock)
    return _verify_tp(verdict, session, checks)


# ---------------------------------------------------------------------------------------------
# aur_rpc


def _rpc_check(verdict: Verdict, session: AurSession | UnusableClient) -> tuple[CheckOutcome, RpcAnswer | None]:
    """The RPC lookup as a check; its reason for absent is the FP one (TP refines it)."""
    package = verdict.package
    if isinstance(session, UnusableClient):
        evidence = {"url": None, "outcome": "unavailable", "name": None, "pkgbase": None, "version": None}
        return CheckOutcome("aur_rpc", (), False, session.reason, evidence), None
    answer = session.rpc_info(package)
    evidence = {
        "url": answer.url,
        "outcome": answer.outcome,
        "name": answer.name,
        "pkgbase": answer.pkgbase,
        "version": answer.version,
    }
    reasons = {
        "present": f"package {package} is on the AUR with base {answer.pkgbase}",
        "absent": f"package {package} is not on the AUR",
        "mismatch": f"AUR RPC returned a record that does not match {package}",
        "unavailable": f"AUR RPC gave no authoritative answer: {answer.reason}",
    }
    passed = answer.outcome == "present"
    return CheckOutcome("aur_rpc", (), passed, reasons[answer.outcome], evidence), answer


def without_takedown(verdict: Verdict) -> int | None:
    """The index of the first package indicator whose provenance cites no takedown, else None."""
    for index, change in enumerate(verdict.proposed_changes):
        if isinstance(change, IocChange) and change.type == "package" and not _TAKEDOWN.search(change.provenance):
            return index
    return None


def _takedown_rpc_check(verdict: Verdict, check: CheckOutcome) -> CheckOutcome:
    """TP and absent: passes only when every package indicator's provenance cites a takedown (docs/triage.md §8)."""
    index = without_takedown(verdict)
    if index is not None:
        reason = f"package {verdict.package} is not on the AUR and package indicator {index} cites no takedown"
        return CheckOutcome("aur_rpc", (), False, reason, check.evidence)
    reason = f"package {verdict.package} is not on the AUR; every package indicator cites a takedown"
    return CheckOutcome("aur_rpc", (), True, reason, check.evidence)


# ---------------------------------------------------------------------------------------------
# FP


def _verify_fp(
    verdict: Verdict, session: AurSession | UnusableClient, checks: list[CheckOutcome], clock: Callable[[], datetime]
) -> Result:
    transition = verdict.transition
    assert transition is not None and transition.old_commit is not None and transition.old_version is not None
    labels = _labels(verdict)
    rpc_check, answer = _rpc_check(verdict, session)
    checks.append(rpc_check)
    pkgbase = answer.pkgbase if answer is not None and answer.outcome == "present" else None
    if pkgbase is None or not isinstance(session, AurSession):
        table = findings_table(verdict, lambda i: (labels[i], "not run"))
        return _result(verdict, checks, table, reason="", pkgbase="", snapshot=dict(_EMPTY_SNAPSHOT))

    snapshot_check, snap = take_snapshot(
        session,
        pkgbase,
        transition.old_commit,
        transition.new_commit,
        transition.old_version,
        transition.new_version,
        verdict.package,
    )
    checks.append(snapshot_check)
    snapshot = {
        "source_url": session.url(plain_target(pkgbase, transition.new_commit, "PKGBUILD")),
        "pkgbuild_sha256": snapshot_check.evidence["pkgbuild_sha256_new"],
        "srcinfo_sha256": snapshot_check.evidence["srcinfo_sha256_new"],
        "install_sha256": None,
        "install_name": None,
    }
    if snap is None:
        table = findings_table(verdict, lambda i: (labels[i], "not run"))
        return _result(verdict, checks, table, reason="", pkgbase=pkgbase, snapshot=snapshot)

    items = [run_item(session, snap, e.rule_id, e.file, e.line, e.url) for e in verdict.evidence]
    checks.extend(items)
    first_phantom = next((c for c in items if c.name == "check_phantom_install" and c.evidence["install_name"]), None)
    if first_phantom is not None:
        snapshot["install_name"] = first_phantom.evidence["install_name"]
        snapshot["install_sha256"] = first_phantom.evidence["new_sha256"]
    table = findings_table(verdict, lambda i: (labels[i], "passed" if items[i].passed else "failed"))
    if not all(check.passed for check in checks):
        return _result(verdict, checks, table, reason="", pkgbase=pkgbase, snapshot=snapshot)
    return _result(
        verdict,
        checks,
        table,
        reason="",
        pkgbase=pkgbase,
        snapshot=snapshot,
        suppressions=_suppressions(verdict, items, snap, clock),
        report_entry=_report_entry(verdict, items),
    )


def _label(routed: Route) -> str:
    return "none" if routed == "no_check" else routed


def _labels(verdict: Verdict) -> list[str]:
    """The check each evidence item is routed to, as the findings table names it."""
    return [_label(route(item.rule_id, item.file)) for item in verdict.evidence]


def _not_replayed(index: int) -> tuple[str, str]:
    return "-", "not replayed"


def join_sentences(sentences: Sequence[str]) -> str:
    """Distinct sentences joined by `; `, at most four, then ` and <n> more`."""
    distinct = list(dict.fromkeys(sentences))
    shown = "; ".join(distinct[:MAX_SENTENCES])
    extra = len(distinct) - MAX_SENTENCES
    return f"{shown} and {extra} more" if extra > 0 else shown


def _transition_text(snap: Snapshot, verdict: Verdict) -> str:
    transition = verdict.transition
    assert transition is not None
    return (
        f"{verdict.package} {transition.old_version} -> {transition.new_version}, "
        f"AUR commits {snap.old.commit} and {snap.new.commit}"
    )


def _suppressions(
    verdict: Verdict, items: list[CheckOutcome], snap: Snapshot, clock: Callable[[], datetime]
) -> list[dict[str, Any]]:
    created_at = clock().astimezone(UTC).date().isoformat() + "T00:00:00.000000Z"
    records = []
    for change in sorted(
        (c for c in verdict.proposed_changes if isinstance(c, Suppression)), key=lambda c: c.rule_id
    ):
        sentences = [item.sentence for item in items if item.rule_ids == (change.rule_id,)]
        reason = (
            f"{suppression_reason_head(change.reason)}{join_sentences(sentences)} ({_transition_text(snap, verdict)})."
        )
        records.append(
            {
                "created_at": created_at,
                "created_at_obs": 0,
                "package": verdict.package,
                "reason": reason,
                "requires_clear_indicators": True,
                "rule_id": change.rule_id,
                "ttl_observations": None,
            }
        )
    return records


def suppression_reason_head(reason: str) -> str:
    """The start of a verified suppression record's reason: the agent's reason, then the harness's sentences."""
    return f"{reason} {_VERIFIED_BY} "


def report_head(verdict: Verdict) -> tuple[list[str], str, str]:
    """A verified FP's report entry as the verdict alone fixes it: rules, kind and the start of the summary."""
    transition = verdict.transition
    assert transition is not None
    rules = sorted({item.rule_id for item in verdict.evidence})
    kind = _REPORT_KINDS.get(frozenset(route(item.rule_id, item.file) for item in verdict.evidence), "mixed")
    versions = f"{transition.old_version} -> {transition.new_version}"
    return rules, kind, f"{', '.join(rules)} on {verdict.package} {versions}: "


def _report_entry(verdict: Verdict, items: list[CheckOutcome]) -> dict[str, Any]:
    rules, kind, head = report_head(verdict)
    summary = head + join_sentences([item.sentence for item in items])
    return {"package": verdict.package, "rules": rules, "kind": kind, "summary": summary}


# ---------------------------------------------------------------------------------------------
# TP


def _verify_tp(verdict: Verdict, session: AurSession | UnusableClient, checks: list[CheckOutcome]) -> Result:
    rpc_check, answer = _rpc_check(verdict, session)
    if answer is not None and answer.outcome == "absent":
        rpc_check = _takedown_rpc_check(verdict, rpc_check)
    checks.append(rpc_check)
    indicators = check_indicators(verdict.proposed_changes)
    for indicator in indicators:
        if indicator.passed:
            reason = f"{indicator.type} indicator {indicator.index} normalizes to {indicator.normalized_value}"
        else:
            reason = f"{indicator.type} indicator {indicator.index} refused: {indicator.reason}"
        evidence = {
            "index": indicator.index,
            "type": indicator.type,
            "value": indicator.value,
            "normalized_value": indicator.normalized_value,
        }
        checks.append(CheckOutcome("ioc_schema", (), indicator.passed, reason, evidence))
    snapshot = dict(_EMPTY_SNAPSHOT)
    if isinstance(session, AurSession):
        snapshot["source_url"] = session.url(rpc_target(verdict.package))
    pkgbase = answer.pkgbase if answer is not None and answer.outcome == "present" and answer.pkgbase else ""
    table = findings_table(verdict, _not_replayed)
    entries = ioc_entries(verdict.proposed_changes, indicators) if all(c.passed for c in checks) else []
    return _result(verdict, checks, table, reason="", pkgbase=pkgbase, snapshot=snapshot, entries=entries)


# ---------------------------------------------------------------------------------------------
# Result


def findings_table(verdict: Verdict, state: Callable[[int], tuple[str, str]]) -> str:
    """The markdown table of the evidence items, `state(i)` giving item i's check and outcome; "" for none."""
    rows = []
    for index, item in enumerate(verdict.evidence):
        check, outcome = state(index)
        line = "-" if item.line is None else str(item.line)
        rows.append(f"| {cell(item.rule_id)} | {cell(item.file)} | {line} | {check} | {outcome} |")
    return "\n".join([*_TABLE_HEAD, *rows]) if rows else ""


def verified_findings_table(verdict: Verdict) -> str:
    """The findings table of a verified result: every FP item passed its check, TP items are not replayed."""
    if verdict.verdict == "FP":
        labels = _labels(verdict)
        return findings_table(verdict, lambda i: (labels[i], "passed"))
    return findings_table(verdict, _not_replayed)


def version_transition(verdict: Verdict) -> str:
    transition = verdict.transition
    if transition is None:
        return "? -> ?"
    return f"{transition.old_version or '?'} -> {transition.new_version}"


def _result(
    verdict: Verdict,
    checks: list[CheckOutcome],
    table: str,
    *,
    reason: str,
    pkgbase: str,
    snapshot: dict[str, Any],
    suppressions: list[dict[str, Any]] | None = None,
    report_entry: dict[str, Any] | None = None,
    entries: list[dict[str, Any]] | None = None,
) -> Result:
    """The strict result model; `reason` "" means derive it from the checks (first failing, else all passed)."""
    failing = next((check.reason for check in checks if not check.passed), None)
    verified = not reason and failing is None
    document = {
        "verified": verified,
        "reason": reason or failing or ALL_PASSED,
        "verdict": verdict.verdict,
        "package": verdict.package,
        "pkgbase": pkgbase,
        "version_transition": version_transition(verdict),
        "checks": [check.as_dict() for check in checks],
        "findings_table": table,
        "suppressions": suppressions or [],
        "report_entry": report_entry,
        "ioc_entries": entries or [],
        "snapshot": snapshot,
        "verdict_document": verdict.document,
        "verdict_sha256": verdict.sha256,
    }
    return Result.model_validate(document, strict=True)
