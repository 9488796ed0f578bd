"""The ledger web view as an ASGI app mounted at /ui (docs/decisions.md, "Ledger web view"): read-only handlers over
one ledger snapshot per page, rendered by Jinja2 with autoescaping, every response under a strict
Content-Security-Policy. Authentication is the edge's (harness.serve); this app trusts the caller it is given."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import logging
import threading
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from harness import files
from harness.errors import HarnessError, InvalidInput
from harness.ledger import ids
from harness.ledger.browse import ConversationFilter, PageKey
from harness.ledger.commands import CALL_STATUSES, parse_ts_option
from harness.ledger.errors import LedgerError
from harness.ledger.model import format_ts
from harness.ledger.sidecars import SIDECAR_DIR
from harness.ledger.store import LedgerStore, Snapshot
from harness.ledger.verify import HeadsFormatError, parse_heads_document, verify_snapshot
from harness.serve.guard import HostOriginGuard
from harness.serve.origins import HostPolicy
from harness.text.sanitize import echo
from harness.ui import views

log = logging.getLogger("harness.ui")

PAGE_SIZE = 50
TIMELINE_PAGE = 500
TEXT_FILTER_MAX = 256
PRINCIPAL_MAX = 256
HEADS_UPLOAD_MAX = 8 * 1024 * 1024
SIDECAR_READ_MAX = 16 * 1024 * 1024
CSP_REPORTS_KEPT = 100
CSP_REPORT_MAX = 16 * 1024
CSP_REPORT_PATH = "/ui/csp-report"
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none';"
    f" base-uri 'none'; report-uri {CSP_REPORT_PATH}"
)
# A sidecar result is served as text that no browser may render, sniff or script.
RAW_CSP = "default-src 'none'; sandbox; frame-ancestors 'none'"
# same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" on the heads upload, which the
# Host/Origin guard rightly refuses.
SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
# Browsers ask for /favicon.ico even on a text page; a 404 would be console noise in every tab.
ICON_PATH = "/ui/static/icon.svg"
FILTER_KEYS = ("since", "until", "tool", "status", "principal", "text")


@dataclasses.dataclass
class LedgerView:
    """What the handlers read: the ledger, the workspace its sidecars live in, and the CSP reports received."""

    store: LedgerStore
    workspace: Path
    csp_reports: collections.deque[dict[str, Any]] = dataclasses.field(
        default_factory=lambda: collections.deque(maxlen=CSP_REPORTS_KEPT)
    )
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


def _environment() -> Environment:
    # Autoescaping on for every template, whatever its name; a missing variable is an error, never blank.
    return Environment(loader=PackageLoader("harness.ui", "templates"), autoescape=True, undefined=StrictUndefined)


class SecurityHeaders:
    """Adds the CSP and the hardening headers to every response of the view (a handler's own CSP wins)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if "content-security-policy" not in headers:
                    headers["content-security-policy"] = CSP
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, with_headers)


def _filters(request: Request) -> tuple[ConversationFilter, dict[str, str]]:
    raw = {k: request.query_params.get(k, "").strip() for k in FILTER_KEYS}
    tool, status, principal, text = raw["tool"], raw["status"], raw["principal"], raw["text"]
    if tool and not ids.is_tool_name(tool):
        raise InvalidInput(f"tool: expected a name matching {ids.TOOL_NAME_RE.pattern}, got {echo(tool)}")
    if status and status not in CALL_STATUSES:
        raise InvalidInput(f"status: expected one of {', '.join(CALL_STATUSES)}, got {echo(status)}")
    if len(principal) > PRINCIPAL_MAX:
        raise InvalidInput(f"principal: at most {PRINCIPAL_MAX} characters")
    if len(text) > TEXT_FILTER_MAX:
        raise InvalidInput(f"text: at most {TEXT_FILTER_MAX} characters")
    where = ConversationFilter(
        since=parse_ts_option("since", raw["since"]) if raw["since"] else None,
        until=parse_ts_option("until", raw["until"]) if raw["until"] else None,
        tool_name=tool or None,
        status=status or None,
        principal=principal or None,
        text=text or None,
    )
    return where, raw


def _page_key(request: Request) -> PageKey | None:
    at, cid = request.query_params.get("after_ts", ""), request.query_params.get("after_id", "")
    if not at and not cid:
        return None
    if not ids.is_id(cid):
        raise InvalidInput("after_id: expected a conversation id")
    return PageKey(parse_ts_option("after_ts", at), cid)


def _int_param(request: Request, name: str) -> int:
    value = request.query_params.get(name, "0")
    if not value.isascii() or not value.isdigit() or len(value) > 18:
        raise InvalidInput(f"{name}: expected an integer >= 0, got {echo(value)}")
    return int(value)


def read_sidecar(workspace: Path, relpath: str) -> str | None:
    """A sidecar's text, only from under the workspace's sidecars/ directory, never through a link; None when gone."""
    parts = relpath.split("/")
    if parts[0] != SIDECAR_DIR or any(p in ("", ".", "..") for p in parts):
        return None
    try:
        # harness.files: a FIFO or device swapped in for the file is refused instead of blocking the server.
        with files.open_regular(workspace.joinpath(*parts)) as (fd, _):
            data = files.read_prefix(fd, relpath, SIDECAR_READ_MAX)
    except files.FileRefused:
        return None
    return data.decode("utf-8", errors="replace")


def full_result(snap: Snapshot, workspace: Path, row: Any) -> str | None:
    """An end row's full result: stored in the ledger, else (not yet migrated) its sidecar file; None when gone."""
    stored = snap.sidecar(row.id)
    return stored if stored is not None else read_sidecar(workspace, row.result_sidecar_path or "")


class Pages:
    """The handlers. Each page reads one snapshot; nothing here writes anything but its CSP report memory."""

    def __init__(self, view: LedgerView) -> None:
        self.view = view
        self.env = _environment()

    def _html(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        body = self.env.get_template(name).render(backend=self.view.store.backend, **context)
        return HTMLResponse(body, status_code=status)

    def _error(self, status: int, message: str) -> HTMLResponse:
        return self._html("error.html", status, title="Error", message=message)

    async def conversations(self, request: Request) -> Response:
        return await _run(request, self._conversations)

    def _conversations(self, request: Request) -> Response:
        where, raw = _filters(request)
        after = _page_key(request)
        with self.view.store.snapshot() as snap:
            found = snap.conversation_page(where, after, PAGE_SIZE + 1)
        page = found[:PAGE_SIZE]
        next_url = ""
        if len(found) > PAGE_SIZE:
            last = page[-1].key
            next_url = views.list_url({**raw, "after_ts": format_ts(last.started_at), "after_id": last.conversation_id})
        rows = [
            {
                "id": c.conversation_id,
                "url": views.conversation_url(c.conversation_id),
                "started_at": format_ts(c.started_at),
                "last_ts": format_ts(c.last_ts),
                "principal": c.principal,
                "calls": c.calls,
                "errors": c.errors,
                "in_flight": c.in_flight,
                "rows": c.last_chain_seq,
            }
            for c in page
        ]
        return self._html(
            "conversations.html",
            title="Conversations",
            rows=rows,
            filters=raw,
            statuses=CALL_STATUSES,
            next_url=next_url,
            first_url=views.list_url(raw) if after is not None else "",
        )

    async def timeline(self, request: Request) -> Response:
        return await _run(request, self._timeline)

    def _timeline(self, request: Request) -> Response:
        cid = request.path_params["conversation_id"]
        if not ids.is_id(cid):
            raise InvalidInput("conversation_id: expected a conversation id")
        after = _int_param(request, "after_chain_seq")
        store = self.view.store
        with store.snapshot() as snap:
            infos = snap.conversations([cid])
            if not infos:
                return self._error(404, f"conversation {cid} is not in the ledger")
            rows = snap.conversation_rows(cid, after_chain_seq=after, limit=TIMELINE_PAGE + 1)
            report = verify_snapshot(snap, backend=store.backend, expected_catalog=store.expected_catalog(),
                                     conversation_ids=[cid])
            shown = rows[:TIMELINE_PAGE]
            documents = {}
            for row in shown:
                if views.needs_full_result(row):
                    text = full_result(snap, self.view.workspace, row)
                    if text is not None:
                        documents[str(row.id)] = text
        calls = views.call_views(shown, documents)
        next_url = ""
        if len(rows) > TIMELINE_PAGE:
            next_url = views.conversation_url(cid, after_chain_seq=shown[-1].chain_seq)
        return self._html(
            "timeline.html",
            title=f"Conversation {cid}",
            conversation_id=cid,
            created_at=format_ts(infos[0].created_at),
            calls=calls,
            problem=views.first_bad(report["problems"], cid),
            checked_rows=report["rows"],
            next_url=next_url,
        )

    async def result(self, request: Request) -> Response:
        return await _run(request, self._result)

    def _result(self, request: Request) -> Response:
        cid, row_id = request.path_params["conversation_id"], request.path_params["row_id"]
        if not ids.is_id(cid):
            raise InvalidInput("conversation_id: expected a conversation id")
        with self.view.store.snapshot() as snap:
            rows = [r for r in snap.conversation_rows(cid) if str(r.id) == row_id and r.event == "end"]
            if not rows or rows[0].result_sidecar_path is None:
                return self._error(404, "no sidecar result for that row")
            text = full_result(snap, self.view.workspace, rows[0])
        if text is None:
            return self._error(404, "the sidecar file is missing; run the verify page with sidecars checked")
        return Response(text, media_type="text/plain; charset=utf-8", headers={"content-security-policy": RAW_CSP})

    async def verify_form(self, request: Request) -> Response:
        return await _run(request, lambda r: self._verify(r, None, sidecars=r.query_params.get("sidecars") == "1"))

    async def verify_upload(self, request: Request) -> Response:
        # A POST only because a file travels in a body: it reads the upload and the ledger, and changes nothing.
        length = request.headers.get("content-length", "")
        if not length.isdigit() or int(length) > HEADS_UPLOAD_MAX + 64 * 1024:
            return self._error(413, f"heads: the upload must declare a length of at most {HEADS_UPLOAD_MAX} bytes")
        async with request.form(max_files=1, max_fields=4, max_part_size=HEADS_UPLOAD_MAX) as form:
            upload = form.get("heads")
            sidecars = form.get("sidecars") == "1"
            data = await upload.read(HEADS_UPLOAD_MAX + 1) if upload is not None and not isinstance(upload, str) else b""
        return await _run(request, lambda r: self._verify(r, data, sidecars=sidecars))

    def _verify(self, request: Request, upload: bytes | None, *, sidecars: bool) -> Response:
        heads = None
        if upload is not None:
            if not upload:
                raise InvalidInput("heads: choose a heads file exported by `harness ledger head`")
            if len(upload) > HEADS_UPLOAD_MAX:
                raise InvalidInput(f"heads: the file is larger than {HEADS_UPLOAD_MAX} bytes")
            try:
                heads = parse_heads_document(upload.decode("utf-8"))
            except UnicodeDecodeError:
                raise InvalidInput("heads: the file is not valid UTF-8") from None
            except HeadsFormatError as exc:
                raise InvalidInput(f"heads: {exc}") from exc
        store = self.view.store
        with store.snapshot() as snap:
            report = verify_snapshot(snap, backend=store.backend, expected_catalog=store.expected_catalog(),
                                     heads=heads, sidecar_root=self.view.workspace if sidecars else None)
        problems = [
            {**p, "url": views.conversation_url(p["conversation_id"]) if p["conversation_id"] else ""}
            for p in report["problems"]
        ]
        return self._html("verify.html", title="Verify", report=report, problems=problems, ran=True,
                          with_heads=heads is not None, sidecars=sidecars)

    async def csp_report(self, request: Request) -> Response:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > CSP_REPORT_MAX:
                return Response(status_code=413)  # a report is small; a large body is not one
        report = {"received_at": format_ts(datetime.datetime.now(datetime.UTC)), "bytes": len(body),
                  "body": body.decode("utf-8", errors="replace")}
        with self.view.lock:
            self.view.csp_reports.append(report)
        log.warning("CSP violation reported by a browser on the ledger view (%d bytes)", len(body))
        return Response(status_code=204)

    async def login(self, request: Request) -> Response:
        # The form posts to the edge's bearer middleware (harness.serve.browser), which sets the cookie.
        return self._html("login.html", title="Sign in", failed=request.query_params.get("failed") == "1")


async def _run(request: Request, handler: Any) -> Response:
    """Run a page's blocking reads on a worker thread; bad input and an unavailable ledger become error pages."""
    import anyio

    pages: Pages = request.app.state.pages
    try:
        return await anyio.to_thread.run_sync(handler, request)
    except HarnessError as exc:
        return pages._error(400, str(exc))
    except LedgerError as exc:
        log.warning("ledger view: ledger unavailable: %s", exc)
        return pages._error(503, "the ledger is unavailable; details are in the server log")


def ui_app(view: LedgerView) -> ASGIApp:
    """The view's ASGI app, to be mounted at /ui (paths below are relative to the mount)."""
    pages = Pages(view)
    static = StaticFiles(packages=[("harness.ui", "static")])
    app = Starlette(
        routes=[
            Route("/", pages.conversations, methods=["GET"]),
            Route("/c/{conversation_id}", pages.timeline, methods=["GET"]),
            Route("/c/{conversation_id}/result/{row_id}", pages.result, methods=["GET"]),
            Route("/verify", pages.verify_form, methods=["GET"]),
            Route("/verify", pages.verify_upload, methods=["POST"]),
            Route("/csp-report", pages.csp_report, methods=["POST"]),
            Route("/login", pages.login, methods=["GET"]),
            Mount("/static", app=static),
        ]
    )
    app.state.pages = pages
    return SecurityHeaders(app)


def standalone_app(view: LedgerView, policy: HostPolicy) -> ASGIApp:
    """`harness ui`: the view alone at /ui behind the Host/Origin guard (loopback only, so no authentication)."""
    async def to_view(request: Request) -> Response:
        return RedirectResponse("/ui/", status_code=307)

    async def icon(request: Request) -> Response:
        return RedirectResponse(ICON_PATH, status_code=307)

    app = Starlette(routes=[Route("/", to_view, methods=["GET"]), Route("/ui", to_view, methods=["GET"]),
                            Route("/favicon.ico", icon, methods=["GET"]), Mount("/ui", app=ui_app(view))])
    return HostOriginGuard(app, policy)
