"""What the ledger web view shows, built from ledger rows (pure): calls paired from start and end rows, triage
results read for a reviewer, and the links between pages. Every string here is agent- or package-influenced text;
the templates escape it and links are built only from quoted ids (docs/decisions.md, "Ledger web view")."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from harness.ledger.model import LedgerRow, format_ts

PREFIX = "/ui/"
VERIFY_TOOL = "fp_agent_verify"
PR_TOOL = "fp_agent_pr"


def conversation_url(conversation_id: str, **query: str | int) -> str:
    """The timeline page of a conversation; the id is quoted as one path segment."""
    url = f"{PREFIX}c/{quote(conversation_id, safe='')}"
    return url + ("?" + urlencode(query) if query else "")


def result_url(conversation_id: str, row_id: str) -> str:
    """The full sidecar result of an end row."""
    return f"{conversation_url(conversation_id)}/result/{quote(row_id, safe='')}"


def list_url(query: Mapping[str, str]) -> str:
    """The conversation list with these filter values (empty ones left out)."""
    kept = {k: v for k, v in query.items() if v}
    return PREFIX + ("?" + urlencode(kept) if kept else "")


@dataclasses.dataclass(frozen=True)
class CheckLine:
    name: str
    rule_ids: str
    passed: bool
    reason: str


@dataclasses.dataclass(frozen=True)
class VerifyView:
    """An fp_agent_verify result: its verdict line and checks table."""

    verified: bool
    verdict: str
    package: str
    version_transition: str
    reason: str
    checks: list[CheckLine]


@dataclasses.dataclass(frozen=True)
class PrView:
    """An fp_agent_pr result: title, body as text, and the files it adds or changes."""

    target_repo: str
    branch: str
    title: str
    body: str
    files: list[str]


@dataclasses.dataclass(frozen=True)
class CallView:
    """One call of a timeline: its start row, its end row if any, and what the reviewer reads."""

    seq: int
    tool_name: str
    started_at: str
    start_chain_seq: int
    principal: str
    arguments: str
    args_bytes: int | None
    status: str
    end_chain_seq: int | None = None
    duration_ms: int | None = None
    error: str = ""
    preview: str = ""
    result_bytes: int | None = None
    result_truncated: bool = False
    result_link: str = ""
    triage: VerifyView | PrView | None = None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def pretty_json(text: str | None) -> str:
    """Indented JSON when the text parses (the view reads easier), else the text as stored."""
    if not text:
        return ""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False, sort_keys=True)
    except ValueError:
        return text


def parse_document(text: str | None) -> dict[str, Any] | None:
    """A JSON object, or None for anything else (a capped preview, a non-object)."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def verify_view(document: Mapping[str, Any]) -> VerifyView | None:
    """The reviewer's view of an fp_agent_verify result; None when the document lacks its shape."""
    checks = document.get("checks")
    if not isinstance(document.get("verified"), bool) or not isinstance(checks, list):
        return None
    lines = []
    for check in checks:
        if not isinstance(check, dict):
            return None
        rules = check.get("rule_ids")
        rule_ids = ", ".join(r for r in rules if isinstance(r, str)) if isinstance(rules, list) else ""
        lines.append(CheckLine(_text(check.get("name")), rule_ids, check.get("passed") is True, _text(check.get("reason"))))
    return VerifyView(
        document["verified"],
        _text(document.get("verdict")),
        _text(document.get("package")),
        _text(document.get("version_transition")),
        _text(document.get("reason")),
        lines,
    )


def pr_view(document: Mapping[str, Any]) -> PrView | None:
    """The reviewer's view of an fp_agent_pr result; None when the document lacks its shape."""
    files = document.get("files")
    if not isinstance(document.get("title"), str) or not isinstance(files, dict):
        return None
    return PrView(
        _text(document.get("target_repo")),
        _text(document.get("branch")),
        document["title"],
        _text(document.get("body")),
        sorted(k for k in files if isinstance(k, str)),
    )


def triage_view(tool_name: str, document: Mapping[str, Any] | None) -> VerifyView | PrView | None:
    """A triage result rendered for a reviewer, for the two triage tools whose results a reviewer signs off."""
    if document is None:
        return None
    if tool_name == VERIFY_TOOL:
        return verify_view(document)
    if tool_name == PR_TOOL:
        return pr_view(document)
    return None


def _principal(row: LedgerRow) -> str:
    try:
        meta = row.meta_object or {}
    except ValueError:
        return ""  # a meta that is not JSON: verify reports the row, the view shows no principal
    caller = meta.get("caller") if isinstance(meta, dict) else None
    return _text(caller.get("principal")) if isinstance(caller, dict) else ""


def call_views(rows: Iterable[LedgerRow], documents: Mapping[str, str]) -> list[CallView]:
    """Calls in the order their starts were chained; an end pairs with its start by (request_id, tool_call_id), and a
    start without one is in flight. `documents` holds, by end row id, the full result text read from a sidecar."""
    calls: dict[tuple[str, str], CallView] = {}
    for row in rows:
        key = (row.request_id, row.tool_call_id)
        if row.event == "start":
            calls[key] = CallView(
                seq=row.seq,
                tool_name=row.tool_name,
                started_at=format_ts(row.started_at or row.ts),
                start_chain_seq=row.chain_seq,
                principal=_principal(row),
                arguments=pretty_json(row.arguments),
                args_bytes=row.args_bytes,
                status="in_flight",
            )
            continue
        start = calls.get(key)
        if start is None:
            continue  # an end whose start is on an earlier page (or missing: the chain check reports that)
        full = documents.get(str(row.id))
        document = parse_document(full) or parse_document(row.result_preview)
        link = result_url(row.conversation_id, str(row.id)) if row.result_sidecar_path else ""
        calls[key] = dataclasses.replace(
            start,
            status=row.status or "in_flight",
            end_chain_seq=row.chain_seq,
            duration_ms=row.duration_ms,
            error=row.error or "",
            preview=row.result_preview or "",
            result_bytes=row.result_bytes,
            result_truncated=bool(row.result_truncated),
            result_link=link,
            triage=triage_view(row.tool_name, document),
        )
    return list(calls.values())


def needs_full_result(row: LedgerRow) -> bool:
    """A triage end row whose preview is not the whole result: the view reads its sidecar to render it."""
    return (
        row.event == "end"
        and row.tool_name in (VERIFY_TOOL, PR_TOOL)
        and row.result_sidecar_path is not None
        and parse_document(row.result_preview) is None
    )


def first_bad(problems: Sequence[Mapping[str, Any]], conversation_id: str) -> Mapping[str, Any] | None:
    """The verify problem of this conversation, if any (verify reports the first one per conversation)."""
    for problem in problems:
        if problem.get("conversation_id") in (conversation_id, None):
            return problem
    return None
