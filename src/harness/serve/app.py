"""The streamable HTTP ASGI app of `harness serve --http`: the MCP transport behind the edge's checks."""

from __future__ import annotations

from typing import Any

from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Mount, Route
from starlette.types import ASGIApp

from harness.serve.bearer import StaticBearerMiddleware
from harness.serve.disconnect import CompleteBodyMiddleware
from harness.serve.guard import HostOriginGuard
from harness.serve.limits import CallerLimits
from harness.serve.oauth import JwtVerifier, auth_settings
from harness.serve.origins import HostPolicy
from harness.serve.plan import MCP_PATH, ServePlan
from harness.serve.sessions import OpenSessions, SessionOpenLimiter
from harness.serve.uigate import LedgerScopeGate

# An opening request is admitted and released at once: only the rate applies to session opens.
SESSION_OPENS_IN_FLIGHT = 1_000_000


async def _to_view(request: Request) -> RedirectResponse:
    return RedirectResponse("/ui/", status_code=307)


def _session_table(server: Server[Any]) -> dict[str, Any]:
    """The transport's table of open sessions: the one record of which are still open (a DELETE, the idle
    timeout and a crash end them there). It is private: the SDK has no public record or hook of a session's
    end on the low-level server (docs/decisions.md, "Team server session ends"). If an SDK release renames
    it, the server refuses to start rather than never freeing a caller's places."""
    table = getattr(server.session_manager, "_server_instances", None)
    if not isinstance(table, dict):
        raise RuntimeError("this mcp SDK has no session table the per-caller session cap can read")
    return table


def http_app(server: Server[Any], plan: ServePlan, *, bearer_token: str = "", ui: ASGIApp | None = None) -> Starlette:
    """Host/Origin guard outermost (every path, before authentication), then authentication, then the body
    buffer, then the SDK transport (whose own Host check is off: the guard covers every bind). `ui`, the ledger
    view, is mounted at /ui behind the same guard and authentication (in OAuth mode, its scope too)."""
    oauth: dict[str, Any] = {}
    routes: list[Any] = []
    if plan.auth == "oauth":
        settings = auth_settings(plan.settings)
        oauth = {"auth": settings, "token_verifier": JwtVerifier(plan.settings)}
        if ui is not None:
            ui = LedgerScopeGate(ui, str(build_resource_metadata_url(settings.resource_server_url)))
    if ui is not None:
        routes = [Route("/ui", _to_view, methods=["GET"]), Mount("/ui", app=ui)]
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        # Every answer as one JSON body, not an SSE stream per POST: no tool sends notifications or requests
        # within a call, so the stream carried only the response, at a task group, a memory stream and an
        # SSE encoder of event-loop work per call (docs/decisions.md, "Team server capacity").
        json_response=True,
        host=plan.host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        session_idle_timeout=plan.settings.session_idle_timeout_s,
        max_sessions=plan.settings.max_sessions,
        custom_starlette_routes=routes,
        **oauth,
    )
    # Innermost of the middleware, after the SDK's authentication, so the session limit knows the caller.
    settings = plan.settings
    sessions = CallerLimits(settings.sessions_per_minute, settings.session_burst, SESSION_OPENS_IN_FLIGHT)
    held = OpenSessions(settings.max_sessions_per_caller, _session_table(server).__contains__)
    limiter = Middleware(SessionOpenLimiter, limits=sessions, open_sessions=held, oauth=plan.auth == "oauth")
    app.user_middleware.append(limiter)
    app.add_middleware(CompleteBodyMiddleware)
    if plan.auth == "bearer":
        app.add_middleware(StaticBearerMiddleware, token=bearer_token)
    policy = HostPolicy(not plan.remote, settings.allowed_hosts, settings.allowed_origins)
    app.add_middleware(HostOriginGuard, policy=policy)
    return app

