"""Pull-request content for a verified result (docs/triage.md §11.1-11.3, docs/triage.md §11.7): branch, title, body, files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from harness.errors import InvalidInput
from harness.triage.render import (
    Rendering,
    body,
    branch,
    campaign_label,
    gate_output,
    indicators_phrase,
    literal,
    pretty_json,
    prose,
    rules_phrase,
    table,
)
from harness.triage.sandbox import SandboxReport

Target = Literal["trustsight", "trustsight-harness"]
TARGETS: tuple[Target, ...] = ("trustsight", "trustsight-harness")
MAX_BODY_CHARS = 65_536
FP_REVIEW = (
    "This pull request is a proposal rendered by triage-harness from a verified verdict. Nothing is merged "
    "automatically; a maintainer reviews the suppression, the code fixes and the checks above."
)
TP_REVIEW = (
    "This pull request is a proposal rendered by triage-harness from a verified verdict. Nothing is merged "
    "automatically; a maintainer reviews every indicator before it ships."
)
FIXES_OTHER_TARGET = "Code fixes are rendered only for the trustsight target."
NO_FIXES = "No code fixes were proposed."


@dataclass(frozen=True)
class PullRequest:
    """The rendered PR; `code_fixes` holds one outcome object per proposed fix (trustsight FP only)."""

    target_repo: Target
    branch: str
    title: str
    body: str
    files: dict[str, str]
    code_fixes: list[dict[str, Any]]
    base_commit: str | None


def suppression_paths(r: Rendering, date: str) -> dict[str, str]:
    """Rule id to its suppression file: one file is named by the package, several also by the rule."""
    package = r.result.package
    rule_ids = [record.rule_id for record in r.result.suppressions]
    if len(rule_ids) == 1:
        return {rule_ids[0]: f"data/fp-suppressions/{date}-{package}.json"}
    return {rule_id: f"data/fp-suppressions/{date}-{package}-{rule_id.lower()}.json" for rule_id in rule_ids}


def benign_path(package: str, date: str) -> str:
    """Where trustsight-harness records a benign result."""
    return f"benign/fp-{date}/{package}.triage.json"


def ioc_path(date: str) -> str:
    """The indicator file of one day."""
    return f"data/iocs/triage-{date}.json"


def _file_list(files: dict[str, str]) -> list[str]:
    return [f"- {path} ({len(text.encode('utf-8'))} bytes)" for path, text in sorted(files.items())]


def _finalize(pr: PullRequest, json_paths: list[str]) -> PullRequest:
    if len(pr.body) > MAX_BODY_CHARS:
        raise InvalidInput(f"body: the rendered body has {len(pr.body):,} characters, over {MAX_BODY_CHARS:,}")
    gate_output(pr.title, pr.body, ((path, pr.files[path]) for path in json_paths))
    return pr


def _fp_files(r: Rendering, target: Target, date: str) -> dict[str, str]:
    if target == "trustsight-harness":
        return {benign_path(r.result.package, date): pretty_json(r.document)}
    paths = suppression_paths(r, date)
    created_at = f"{date}T00:00:00.000000Z"
    return {
        paths[record["rule_id"]]: pretty_json({**record, "created_at": created_at})
        for record in r.document["suppressions"]
    }


def _fix_rows(report: SandboxReport) -> list[list[str]]:
    rows = []
    for fix in report.fixes:
        detail = f"+{fix.added} -{fix.removed} lines" if fix.status == "applied" else fix.reason
        rows.append([str(fix.index), fix.path, fix.status, detail])
    return rows


def _fixes_section(r: Rendering, target: Target, report: SandboxReport | None) -> list[str]:
    if target == "trustsight-harness":
        return [FIXES_OTHER_TARGET]
    if report is None or not report.fixes:
        return [NO_FIXES]
    base = report.base_commit or "none"
    return [
        f"Base commit of the watcher checkout: {base}.",
        "",
        *table(("#", "Path", "Status", "Detail"), _fix_rows(report)),
    ]


def _rationale(r: Rendering) -> list[str]:
    return literal(prose(r.verdict.rationale, "prose_text", "$.verdict_document.rationale"))


def render_fp(r: Rendering, target: Target, date: str, report: SandboxReport | None) -> PullRequest:
    """The PR of a verified FP; `report` is the sandbox outcome of its code fixes (trustsight only)."""
    result, verdict = r.result, r.verdict
    transition = verdict.transition
    if transition is None:
        raise InvalidInput("result is internally inconsistent: an FP verdict without a transition")
    rules = rules_phrase(record.rule_id for record in result.suppressions)
    versions = result.version_transition
    title = (
        f"fp: suppress {rules} on {result.package} ({versions})"
        if target == "trustsight"
        else f"triage: record benign {rules} on {result.package} ({versions})"
    )
    files = _fp_files(r, target, date)
    json_paths = sorted(files)
    fixes = report if target == "trustsight" else None
    if fixes is not None:
        files.update(fixes.files)
    paths = suppression_paths(r, date)
    finding_rows = []
    for i, item in enumerate(verdict.evidence):
        where = f"{item.rule_id} in {item.file}" + (f":{item.line}" if item.line is not None else "")
        fix = (
            f"suppression in {paths[item.rule_id]}"
            if target == "trustsight"
            else f"recorded in {benign_path(result.package, date)}"
        )
        finding_rows.append([where, prose(item.claim, "prose_line", f"$.verdict_document.evidence[{i}].claim"), fix])
    text = body(
        [
            (
                "Summary",
                [
                    f"Verified false positive on {result.package} ({versions}), AUR commits "
                    f"{transition.old_commit} and {transition.new_commit}.",
                    f"Verdict confidence: {verdict.confidence}. Verdict sha256: {result.verdict_sha256}.",
                ],
            ),
            ("Findings", table(("Finding", "False trigger", "Fix"), finding_rows)),
            ("Checks", [result.findings_table]),
            ("Rationale", _rationale(r)),
            ("Code fixes", _fixes_section(r, target, fixes)),
            ("Files", _file_list(files)),
            ("Review", [FP_REVIEW]),
        ]
    )
    pr = PullRequest(
        target_repo=target,
        branch=branch("fp", result.package, result.verdict_sha256),
        title=title,
        body=text,
        files=files,
        code_fixes=[
            {
                "index": fix.index,
                "path": fix.path,
                "status": fix.status,
                "reason": fix.reason,
                "added": fix.added,
                "removed": fix.removed,
            }
            for fix in (fixes.fixes if fixes is not None else ())
        ],
        base_commit=fixes.base_commit if fixes is not None else None,
    )
    return _finalize(pr, json_paths)


def render_tp(r: Rendering, date: str) -> PullRequest:
    """The indicator PR of a verified TP (target trustsight only)."""
    result, verdict = r.result, r.verdict
    entries = result.ioc_entries
    path = ioc_path(date)
    records = [
        {**{key: value for key, value in raw.items() if value is not None}, "added": date}
        for raw in r.document["ioc_entries"]
    ]
    files = {path: pretty_json(records)}
    status = "present" if result.pkgbase else "absent"
    count = indicators_phrase(len(entries))
    provenance = [
        f"- {e.type}:{e.value}: {prose(e.provenance, 'prose_line', f'$.ioc_entries[{i}].provenance')}; "
        f"campaign {e.campaign or 'none'}; incident {e.incident or 'none'}; expires {e.expires_at or 'never'}"
        for i, e in enumerate(entries)
    ]
    text = body(
        [
            (
                "Summary",
                [
                    f"Verified true positive on {result.package} ({result.version_transition}): {count} proposed "
                    f"for {path}.",
                    f"AUR status of {result.package}: {status}. Verdict confidence: {verdict.confidence}. "
                    f"Verdict sha256: {result.verdict_sha256}.",
                ],
            ),
            ("Indicators", table(("Type", "Value", "Confidence"), ([e.type, e.value, e.confidence] for e in entries))),
            ("Provenance", provenance),
            ("Rationale", _rationale(r)),
            ("Files", _file_list(files)),
            ("Review", [TP_REVIEW]),
        ]
    )
    pr = PullRequest(
        target_repo="trustsight",
        branch=branch("ioc", result.package, result.verdict_sha256),
        title=f"ioc: add {count} for {result.package} ({campaign_label(entries)})",
        body=text,
        files=files,
        code_fixes=[],
        base_commit=None,
    )
    return _finalize(pr, [path])
