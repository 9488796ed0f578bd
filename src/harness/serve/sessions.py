"""Opening a session (an `initialize` request) is rate-limited per caller: HTTP 429 with Retry-After."""

from __future__ import annotations

import json
import logging
from collections import deque

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from harness.serve.caller import caller_of, limit_key
from harness.serve.limits import CallerLimits
from harness.serve.responses import send_json

log = logging.getLogger("harness.serve")

SESSION_HEADER = "mcp-session-id"


def _is_initialize(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"


class SessionOpenLimiter:
    """Runs after authentication (so the caller is known): an initialize beyond the caller's session rate is
    answered 429 before the transport creates a session. The body was already read whole by
    CompleteBodyMiddleware; it is read from the replay here and replayed again."""

    def __init__(self, app: ASGIApp, limits: CallerLimits, *, oauth: bool) -> None:
        self.app = app
        self.limits = limits
        self.oauth = oauth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or SESSION_HEADER in Headers(scope=scope):
            await self.app(scope, receive, send)
            return
        messages: deque[Message] = deque()
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            body += message.get("body", b"")
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        caller = caller_of(Request(scope))
        # Under OAuth an unauthenticated request is answered 401 further in; it must not use anyone's budget.
        if _is_initialize(body) and not (self.oauth and caller.auth_method != "oauth"):
            key = limit_key(caller.principal, caller.auth_method, caller.peer)
            refusal = self.limits.admit(key)
            if refusal is not None:
                log.info("session refused for %s: %s", key, refusal.message)
                headers = ((b"retry-after", str(refusal.retry_after_s).encode()),)
                await send_json(send, 429, {"error": f"too many new sessions: {refusal.message}"}, headers)
                return
            # Only the rate counts here; nothing stays in flight.
            self.limits.release(key)

        async def replay() -> Message:
            return messages.popleft() if messages else await receive()

        await self.app(scope, replay, send)
