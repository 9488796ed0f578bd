"""Opening a session (an `initialize` request) is limited per caller, by rate and by a hard count of open
sessions: HTTP 429 with Retry-After, before the transport creates a session."""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Callable

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from harness.serve.caller import caller_of, limit_key
from harness.serve.limits import CallerLimits, Refusal
from harness.serve.responses import send_json

log = logging.getLogger("harness.serve")

SESSION_HEADER = "mcp-session-id"

# Retry-After of a refusal for too many open sessions: a session ends on DELETE or when it idles out.
OPEN_SESSIONS_RETRY_S = 10


class OpenSessions:
    """The sessions each caller holds open, counted from the session id of each initialize answer; `live` says
    whether the transport still holds a session (it ends them on DELETE and on idle timeout). Only the event
    loop's thread uses it, and nothing awaits between `reserve` and the count it checks."""

    def __init__(self, cap: int, live: Callable[[str], bool]) -> None:
        self.cap = cap
        self._live = live
        self._held: dict[str, set[str]] = {}
        self._opening: dict[str, int] = {}

    def reserve(self, key: str) -> bool:
        """Count one opening for `key` if it is under the cap (then `opened` or `abandon` must follow)."""
        held = {sid for sid in self._held.get(key, ()) if self._live(sid)}
        if held:
            self._held[key] = held
        else:
            self._held.pop(key, None)
        if len(held) + self._opening.get(key, 0) >= self.cap:
            return False
        self._opening[key] = self._opening.get(key, 0) + 1
        return True

    def opened(self, key: str, session_id: str) -> None:
        """The reserved opening became `session_id` (counted from the answer's start, as the client may send
        its next request before the opening request's handler has returned)."""
        self._held.setdefault(key, set()).add(session_id)
        self.abandon(key)

    def abandon(self, key: str) -> None:
        left = self._opening.get(key, 0) - 1
        if left > 0:
            self._opening[key] = left
        else:
            self._opening.pop(key, None)


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

    def __init__(self, app: ASGIApp, limits: CallerLimits, open_sessions: OpenSessions, *, oauth: bool) -> None:
        self.app = app
        self.limits = limits
        self.open_sessions = open_sessions
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

        async def replay() -> Message:
            return messages.popleft() if messages else await receive()

        # Under OAuth an unauthenticated request is answered 401 further in; it must not use anyone's budget.
        if not _is_initialize(body) or (self.oauth and caller.auth_method != "oauth"):
            await self.app(scope, replay, send)
            return
        key = limit_key(caller.principal, caller.auth_method, caller.peer)
        refusal = self.limits.admit(key)
        if refusal is None:
            # Only the rate counts here; nothing stays in flight.
            self.limits.release(key)
            if not self.open_sessions.reserve(key):
                cap, wait = self.open_sessions.cap, OPEN_SESSIONS_RETRY_S
                refusal = Refusal(f"at most {cap} open sessions per caller; retry after {wait} s", wait)
        if refusal is not None:
            log.info("session refused for %s: %s", key, refusal.message)
            headers = ((b"retry-after", str(refusal.retry_after_s).encode()),)
            await send_json(send, 429, {"error": f"too many new sessions: {refusal.message}"}, headers)
            return

        reserved = True

        async def send_noting_session(message: Message) -> None:
            nonlocal reserved
            if message["type"] == "http.response.start" and reserved:
                session_id = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if session_id:
                    reserved = False
                    self.open_sessions.opened(key, session_id)
            await send(message)

        try:
            await self.app(scope, replay, send_noting_session)
        finally:
            if reserved:
                self.open_sessions.abandon(key)
