"""The ASGI guard that refuses a foreign Host or Origin with 403 before anything else runs."""

from __future__ import annotations

import logging

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from harness.serve.origins import HostPolicy
from harness.serve.responses import send_json

log = logging.getLogger("harness.serve")


class HostOriginGuard:
    """Every HTTP request on every path passes `policy` or gets 403; the refusal is one warning line."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        # A repeated Host or Origin is ambiguous; the first value alone would be a guess.
        hosts, origins = headers.getlist("host"), headers.getlist("origin")
        refused = "Host" if len(hosts) != 1 else "Origin" if len(origins) > 1 else ""
        host, origin = (hosts or [None])[0], (origins or [None])[0]
        refused = refused or self.policy.refusal(host, origin)
        if refused:
            peer = scope.get("client") or ("", 0)
            value = host if refused == "Host" else origin
            log.warning("refused %s %s from %s: %s %r is not allowed on this bind",
                        scope["method"], scope["path"], peer[0], refused, value)
            await send_json(send, 403, {"error": f"forbidden: this server does not accept that {refused} header"})
            return
        await self.app(scope, receive, send)
