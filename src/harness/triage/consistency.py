"""Result consistency (docs/triage.md §10 step 3, widened by docs/decisions.md, Triage rendering).

A result reaches the renderers from the agent, so none of its parts is trusted to agree with the
others: every part a renderer reads is checked here, once, against what the re-validated verdict
document fixes for a verified result. The renderers then look things up without guarding.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from harness.errors import InvalidInput
from harness.text.formatgate import FormatError, json_path
from harness.triage.ioc import check_indicators, ioc_entries
from harness.triage.result import Result
from harness.triage.verdict import ObjectInputError, Suppression, Verdict, validate_verdict
from harness.triage.verify import (
    report_head,
    suppression_reason_head,
    verified_findings_table,
    version_transition,
    without_takedown,
)


def _inconsistent(what: str) -> InvalidInput:
    return InvalidInput(f"result is internally inconsistent: {what}")


def _head(result: Result) -> Verdict:
    try:
        verdict = validate_verdict(result.verdict_document)
    except (FormatError, ObjectInputError) as exc:
        raise _inconsistent(f"verdict_document fails the verdict schema: {exc}") from None
    if verdict.sha256 != result.verdict_sha256:
        raise _inconsistent(f"verdict_sha256 {result.verdict_sha256} is not the digest of verdict_document")
    if verdict.verdict != result.verdict:
        raise _inconsistent(f"verdict {result.verdict} differs from verdict_document ({verdict.verdict})")
    if verdict.package != result.package:
        raise _inconsistent(f"package {result.package} differs from verdict_document ({verdict.package})")
    if verdict.verdict == "FP" and not result.suppressions:
        raise _inconsistent("a verified FP result has no suppressions")
    if verdict.verdict == "TP" and not result.ioc_entries:
        raise _inconsistent("a verified TP result has no ioc_entries")
    return verdict


def _fp_problems(document: dict[str, Any], result: Result, verdict: Verdict) -> Iterator[str]:
    if not result.pkgbase:
        yield "$.pkgbase is empty, but an FP verifies only for a package on the AUR"
    reasons = {c.rule_id: c.reason for c in verdict.proposed_changes if isinstance(c, Suppression)}
    expected = sorted(reasons)
    got = [record.rule_id for record in result.suppressions]
    if got != expected:
        wanted = ", ".join(expected)
        if len(got) != len(expected):
            yield f"$.suppressions has {len(got)} records; verdict_document suppresses {len(expected)} ({wanted})"
        else:
            i = next(i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b)
            yield (
                f"{json_path(('suppressions', i, 'rule_id'))} is {got[i]}; verdict_document suppresses {wanted} "
                "(one record per rule, sorted by rule id)"
            )
        return
    for i, record in enumerate(result.suppressions):
        if record.package != verdict.package:
            yield f"{json_path(('suppressions', i, 'package'))} {record.package} differs from the package"
        if not record.reason.startswith(suppression_reason_head(reasons[record.rule_id])):
            yield (
                f"{json_path(('suppressions', i, 'reason'))} does not start with the reason verdict_document gives "
                f"for {record.rule_id}"
            )
    entry = result.report_entry
    if entry is None:
        yield "$.report_entry is null in a verified FP result"
        return
    rules, kind, summary_head = report_head(verdict)
    if entry.package != verdict.package:
        yield f"$.report_entry.package {entry.package} differs from the package"
    if entry.rules != rules:
        yield f"$.report_entry.rules ({', '.join(entry.rules)}) differ from the evidence rules ({', '.join(rules)})"
    if entry.kind != kind:
        yield f"$.report_entry.kind {entry.kind} differs from what the evidence routes give ({kind})"
    if not entry.summary.startswith(summary_head):
        yield "$.report_entry.summary does not start with the rules, package and versions of verdict_document"
    if document["ioc_entries"]:
        yield "$.ioc_entries is not empty in an FP result"


def _tp_problems(document: dict[str, Any], result: Result, verdict: Verdict) -> Iterator[str]:
    expected = ioc_entries(verdict.proposed_changes, check_indicators(verdict.proposed_changes))
    got: Sequence[dict[str, Any]] = document["ioc_entries"]
    if len(got) != len(expected):
        yield f"$.ioc_entries has {len(got)} entries; verdict_document gives {len(expected)}"
    for i, (entry, want) in enumerate(zip(got, expected, strict=False)):
        for key in sorted(want):
            if entry[key] != want[key]:
                yield f"{json_path(('ioc_entries', i, key))} differs from what verdict_document gives"
                return
    index = without_takedown(verdict)
    if not result.pkgbase and index is not None:
        yield (
            f"$.pkgbase is empty (package absent from the AUR), but package indicator {index} of verdict_document "
            "cites no takedown"
        )
    if result.suppressions:
        yield "$.suppressions is not empty in a TP result"
    if result.report_entry is not None:
        yield "$.report_entry is not null in a TP result"


def _problems(document: dict[str, Any], result: Result, verdict: Verdict) -> Iterator[str]:
    failed = next((i for i, check in enumerate(result.checks) if not check.passed), None)
    if failed is not None:
        yield f"{json_path(('checks', failed, 'passed'))} is false in a verified result"
    transition = version_transition(verdict)
    if result.version_transition != transition:
        yield f"$.version_transition {result.version_transition} differs from verdict_document ({transition})"
    if result.findings_table != verified_findings_table(verdict):
        yield "$.findings_table is not the table verdict_document gives for a verified result"
    if verdict.verdict == "FP":
        yield from _fp_problems(document, result, verdict)
    else:
        yield from _tp_problems(document, result, verdict)


def consistent_verdict(document: dict[str, Any], result: Result) -> Verdict:
    """The re-validated verdict of a verified result whose every rendered part agrees with it; else invalid_input."""
    verdict = _head(result)
    problem = next(_problems(document, result, verdict), None)
    if problem is not None:
        raise _inconsistent(problem)
    return verdict
