"""Client disconnects before a request body is complete: one debug line, never the SDK's error path."""

from __future__ import annotations

import logging
from collections import deque

import anyio
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from harness.serve.connections import BODY_TIMEOUT_S
from harness.serve.responses import send_json

log = logging.getLogger("harness.serve")


class CompleteBodyMiddleware:
    """Reads the whole request body before the app runs, so a client that goes away mid-body is a closed
    connection to log at debug level and forget, not a ClientDisconnect traceback from the transport.

    A body larger than the transport's own cap is handed on as it is, for the transport to refuse with 413;
    a body not complete BODY_TIMEOUT_S after the request head is answered 408.
    """

    def __init__(self, app: ASGIApp, max_body_size: int = DEFAULT_MAX_REQUEST_BODY_SIZE) -> None:
        self.app = app
        self.max_body_size = max_body_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        buffered: deque[Message] = deque()
        size = 0
        peer = scope.get("client") or ("", 0)
        with anyio.move_on_after(BODY_TIMEOUT_S) as deadline:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    log.debug("client %s:%s disconnected during %s %s", peer[0], peer[1], scope["method"], scope["path"])
                    return
                buffered.append(message)
                size += len(message.get("body", b""))
                if not message.get("more_body", False) or size > self.max_body_size:
                    break
        if deadline.cancelled_caught:
            log.info("client %s:%s sent no whole body in %s s", peer[0], peer[1], BODY_TIMEOUT_S)
            await send_json(send, 408, {"error": f"request body not complete within {BODY_TIMEOUT_S} s"},
                            ((b"connection", b"close"),))
            return

        async def replay() -> Message:
            return buffered.popleft() if buffered else await receive()

        await self.app(scope, replay, send)
