"""The static bearer token mode: one shared token from HARNESS_SERVE_TOKEN, for simple setups."""

from __future__ import annotations

import hashlib
import hmac

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from harness.serve.responses import send_json

SCHEME = "bearer"
# The ASGI scope key telling the caller's identity (harness.serve.caller) that the static token matched.
AUTH_SCOPE_KEY = "harness.auth"


def bearer_credentials(header: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` value, the scheme in any case (RFC 6750 section 2.1,
    which takes the auth-scheme from RFC 7235: case-insensitive); None for any other shape."""
    scheme, sep, token = header.partition(" ")
    if not sep or scheme.lower() != SCHEME or not token or token != token.strip(" "):
        return None
    return token


def token_matches(given: str, expected: str) -> bool:
    """Constant-time comparison; digests first so not even the expected length is timed."""
    return hmac.compare_digest(hashlib.sha256(given.encode()).digest(), hashlib.sha256(expected.encode()).digest())


class StaticBearerMiddleware:
    """Requires `Authorization: Bearer <token>` with the configured token on every HTTP request."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = bearer_credentials(Headers(scope=scope).get("authorization", ""))
        if given is None or not token_matches(given, self._token):
            refusal = {"error": "a valid bearer token is required"}
            await send_json(send, 401, refusal, ((b"www-authenticate", b"Bearer"),))
            return
        scope[AUTH_SCOPE_KEY] = "bearer"
        await self.app(scope, receive, send)

