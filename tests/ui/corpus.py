"""Ledgers for the web view's tests: one conversation shaped like a triage session (calls that succeed, fail, stay in
flight, a verify result and a rendered PR with its sidecar), written through the real store, optionally with hostile
agent text in every field a caller can reach."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
from pathlib import Path
from typing import Any

from harness.files import write_private
from harness.ledger.model import LedgerEvent, LedgerRow
from harness.ledger.sidecars import sidecar_relpath
from harness.ledger.store import LedgerStore

MIB = 1 << 20
# Each of these would run script, fetch the report URL, restyle the page or reorder text if it reached the page as
# markup; `window.__pwned` and the fetch of a canary path are what the browser test watches.
HOSTILE = [
    "<script>window.__pwned = 'script'; fetch('/ui/canary?script')</script>",
    '"><img src=x onerror="window.__pwned=\'img\'; fetch(\'/ui/canary?img\')">',
    "' onmouseover='window.__pwned=1' autofocus onfocus='window.__pwned=2' x='",
    "javascript:window.__pwned='href';fetch('/ui/canary?href')",
    '<a href="javascript:window.__pwned=\'a\'">click me</a>',
    "<svg/onload=window.__pwned='svg'>",
    "</pre></details></li></ol><style>body{display:none}*{width:100000px!important}</style>",
    '<div style="position:fixed;top:0;left:0;width:100vw;height:100vh;background:red">overlay</div>',
    "<link rel=stylesheet href=https://evil.test/x.css><base href='https://evil.test/'>",
    "<meta http-equiv=refresh content='0;url=https://evil.test/'><iframe src=javascript:alert(1)></iframe>",
    "{{ 7 * 7 }} {% if true %}jinja{% endif %} ${7*7}",
    "\u202eesrever\u202c \u2066isolate\u2069 \u200fRLM \u061cALM \u2067rtl-isolate",
    "expression(alert(1)); background:url(javascript:alert(1))",
]
HOSTILE_TEXT = " ".join(HOSTILE)
HUGE = "A" * MIB  # one unbroken 1 MiB word: the layout must wrap or scroll it, never widen the page


@dataclasses.dataclass(frozen=True)
class Written:
    conversation_id: str
    rows: list[LedgerRow]


def _verify_result(reason: str) -> dict[str, Any]:
    return {
        "verified": False,
        "reason": reason,
        "verdict": "FP",
        "package": "hostile-pkg",
        "version_transition": "1.0-1 -> 1.0-2",
        "checks": [
            {"name": "schema", "rule_ids": [], "passed": True, "reason": "ok", "evidence": {}},
            {"name": "check_url_in_source", "rule_ids": ["R-URL-1"], "passed": False, "reason": reason, "evidence": {}},
        ],
    }


def _pr_result(title: str, body: str, path: str) -> dict[str, Any]:
    return {
        "target_repo": "trustsight",
        "branch": "triage/fp-hostile-0123456789ab",
        "title": title,
        "body": body,
        "files": {path: "content", "suppressions/hostile.json": "{}"},
        "code_fixes": [],
        "base_commit": None,
    }


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class Writer:
    """Writes calls of one conversation through the store, as the dispatcher's recorder would."""

    def __init__(self, store: LedgerStore, workspace: Path, conversation_id: str, principal: str) -> None:
        self.store = store
        self.workspace = workspace
        self.cid = conversation_id
        self.meta = {"surface": "mcp", "caller": {"principal": principal, "auth_method": "oauth"}}
        self.n = 0
        self.rows: list[LedgerRow] = []
        self.started: dict[tuple[str, str], datetime.datetime] = {}

    def start(self, tool: str, arguments: dict[str, Any]) -> tuple[str, str]:
        self.n += 1
        key = (f"r{self.n}", f"t{self.n}")
        self.started[key] = at = _now()
        event = LedgerEvent(self.cid, *key, tool, "start", ts=at, started_at=at, arguments=json.dumps(arguments),
                            meta=self.meta)
        self.rows.append(self.store.insert(event).row)
        return key

    def end(self, key: tuple[str, str], tool: str, result: dict[str, Any] | None, error: str = "") -> None:
        text = json.dumps(result) if result is not None else ""
        at = _now()
        fields: dict[str, Any] = {"duration_ms": 17 * self.n, "meta": {"caller": self.meta["caller"]}, "ts": at,
                                  "started_at": self.started[key], "ended_at": at}
        if error:
            fields.update(status="error", error=error, result_preview=json.dumps({"error": {"message": error}}))
        else:
            fields.update(status="ok", result_preview=text, result_bytes=len(text.encode()))
        if len(text.encode()) > 2048:
            import uuid

            row_id = uuid.uuid4()
            relpath = sidecar_relpath(self.cid, row_id)
            content = text.encode()
            # A sidecar file as releases before the result_sidecars table wrote it (the view still reads them).
            target = self.workspace / relpath
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_private(target, [content])
            sidecar = {"sidecar_bytes": len(content), "sidecar_sha256": hashlib.sha256(content).hexdigest()}
            fields.update(id=row_id, result_truncated=True, result_sidecar_path=relpath,
                          meta={**fields["meta"], **sidecar})
        event = LedgerEvent(self.cid, *key, tool, "end", **fields)
        self.rows.append(self.store.insert(event).row)

    def call(self, tool: str, arguments: dict[str, Any], result: dict[str, Any] | None, error: str = "") -> None:
        self.end(self.start(tool, arguments), tool, result, error)


def triage_session(store: LedgerStore, workspace: Path, conversation_id: str, *, hostile: bool) -> Written:
    """search_events ok, an error call, fp_agent_verify, fp_agent_pr (result in a sidecar) and one in flight."""
    text = HOSTILE_TEXT if hostile else "deploy-svc"
    writer = Writer(store, workspace, conversation_id, f"agent {text}" if hostile else "alice@example.test")
    writer.call("search_events", {"actor": text, "limit": 10, "huge": HUGE if hostile else ""},
                {"events": [{"actor": text, "note": text}], "notes": ""})
    writer.call("get_raw_event", {"event_id": text}, None, error=f"not_found: no event {text}")
    reason = f"the URL {text} is not in the source" if hostile else "the URL is not in the source"
    writer.call("fp_agent_verify", {"verdict": {"package": "hostile-pkg", "note": text}}, _verify_result(reason))
    body = f"## Why\n{text}\n<b>not bold</b>\n" + (HUGE if hostile else "A clear FP.\n" * 300)
    path = f"packages/{text}.json" if hostile else "packages/hostile-pkg.json"
    writer.call("fp_agent_pr", {"result": {"n": 1}}, _pr_result(f"FP: {text}" if hostile else "FP: hostile-pkg", body, path))
    writer.start("github_actor", {"login": text})
    return Written(conversation_id, writer.rows)
