"""OAuth mode in front of the ledger view: the SDK's authentication middleware has read the access token; this gate
lets through only a token carrying the view's scope (`harness:ledger:read`, harness.serve.scopes)."""

from __future__ import annotations

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.types import ASGIApp, Receive, Scope, Send

from harness.serve.responses import send_json
from harness.serve.scopes import SCOPE_TOOLSETS, granted_toolsets

LEDGER_TOOLSET = "ledger"
LEDGER_SCOPE = next(scope for scope, toolset in SCOPE_TOOLSETS.items() if toolset == LEDGER_TOOLSET)


class LedgerScopeGate:
    """401 without a verified token, 403 for a token without the ledger scope (RFC 6750 error codes)."""

    def __init__(self, app: ASGIApp, resource_metadata_url: str) -> None:
        self.app = app
        self._metadata = resource_metadata_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        user = scope.get("user")
        if not isinstance(user, AuthenticatedUser):
            challenge = f'Bearer error="invalid_token", resource_metadata="{self._metadata}"'
            await send_json(send, 401, {"error": "a valid access token is required"},
                            ((b"www-authenticate", challenge.encode()),))
            return
        if LEDGER_TOOLSET not in granted_toolsets(user.access_token.scopes):
            challenge = f'Bearer error="insufficient_scope", scope="{LEDGER_SCOPE}", resource_metadata="{self._metadata}"'
            await send_json(send, 403, {"error": f"the ledger view needs the scope {LEDGER_SCOPE}"},
                            ((b"www-authenticate", challenge.encode()),))
            return
        await self.app(scope, receive, send)
