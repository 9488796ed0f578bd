"""Loopback HTTPS fakes of the GitHub audit-log and Okta System Log APIs, paginated by cursor links, and the
pull commands run through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners import CliResult, run_cli
from store_backends import stored_records

from tests.adapters import github_samples, okta_samples
from tests.investigate.github_support import JSON_HEADERS
from tests.net.https_server import HttpsServer, Recorded, Reply

GITHUB_TOKEN = "ghp_PullTestToken0123456789abcdefABCDEF42"
OKTA_TOKEN = "00PullTestOktaToken-0123456789abcdefXYZ"
ORG = "contoso"
PER_PAGE = 3
PAGES = 5


def github_pages() -> list[list[dict[str, Any]]]:
    """Five pages of three audit-log records, oldest first."""
    records = [github_samples.record(n, "org.add_member", user=f"user-{n}") for n in range(PAGES * PER_PAGE)]
    return [records[i : i + PER_PAGE] for i in range(0, len(records), PER_PAGE)]


def okta_pages() -> list[list[dict[str, Any]]]:
    """Five pages of three System Log sign-ins, oldest first."""
    records = [okta_samples.record(n, "user.session.start", okta_samples.JANE) for n in range(PAGES * PER_PAGE)]
    return [records[i : i + PER_PAGE] for i in range(0, len(records), PER_PAGE)]


@dataclass
class FakeApi:
    """A paginated API on loopback: page N answers with `Link: <...cursor=pN+1>; rel="next"`; `faults` maps a
    page number (1-based) to the replies served for it before the real page (each once)."""

    server: HttpsServer
    path: str
    cursor_param: str
    pages: list[list[dict[str, Any]]]
    okta_tail: bool = False
    faults: dict[int, list[Reply]] = field(default_factory=dict)
    next_link: Callable[[int], str] | None = None

    def __post_init__(self) -> None:
        self.server.script(self.path, self._answer)

    def link_to(self, page: int) -> str:
        if self.next_link is not None:
            return self.next_link(page)
        return f"{self.server.origin}{self.path}?limit=3&{self.cursor_param}=p{page}"

    def _answer(self, request: Recorded) -> Reply:
        cursor = request.query.get(self.cursor_param, ["p1"])[0]
        page = int(cursor[1:])
        pending = self.faults.get(page)
        if pending:
            return pending.pop(0)
        if page > len(self.pages):
            # Okta links onward from its last page too; that answer is an empty page (GitHub never gets here).
            return Reply(200, headers=[*JSON_HEADERS, ("Link", f'<{self.link_to(page)}>; rel="next"')], body=b"[]")
        headers = [*JSON_HEADERS, ("Link", f'<{self.server.origin}{request.target}>; rel="self"')]
        if page < len(self.pages) or self.okta_tail:
            headers.append(("Link", f'<{self.link_to(page + 1)}>; rel="next"'))
        return Reply(200, headers=headers, body=json.dumps(self.pages[page - 1]).encode("utf-8"))

    def pages_requested(self) -> list[str]:
        return [r.query.get(self.cursor_param, ["p1"])[0] for r in self.server.requests if r.path == self.path]


def pull_cli(workspace: Path, *args: str) -> CliResult:
    """`harness --workspace W pull ARGS...` in-process."""
    return run_cli(["--workspace", str(workspace), "pull", *args])


def stored_ids(workspace: Path) -> list[str]:
    """Every stored event id, in store order, duplicates kept (so a doubled event shows)."""
    return [record["id"] for record in stored_records(workspace)]


def ledger_bytes(workspace: Path) -> bytes:
    """The SQLite ledger's bytes, its WAL included."""
    return b"".join(p.read_bytes() for p in workspace.glob("ledger.sqlite3*"))
