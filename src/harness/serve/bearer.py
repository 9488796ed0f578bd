"""The static bearer token mode: one shared token from HARNESS_SERVE_TOKEN, for simple setups."""

from __future__ import annotations

import hashlib
import hmac

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from harness.serve import browser
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
    """Requires `Authorization: Bearer <token>` with the configured token on every HTTP request; under /ui/ the
    ledger view's cookie (harness.serve.browser) is accepted too, and a browser without either is sent to sign in."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        given = bearer_credentials(headers.get("authorization", ""))
        if given is not None and token_matches(given, self._token):
            scope[AUTH_SCOPE_KEY] = "bearer"
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if given is None and browser.is_ui_path(path):
            if browser.cookie_matches(headers, self._token):
                scope[AUTH_SCOPE_KEY] = "bearer"
                await self.app(scope, receive, send)
            elif path == browser.LOGIN_PATH and scope["method"] == "POST":
                await browser.sign_in(scope, receive, send, self._token)
            elif path in browser.PUBLIC_PATHS and scope["method"] == "GET":
                await self.app(scope, receive, send)
            else:
                await browser.refuse(scope, send)
            return
        refusal = {"error": "a valid bearer token is required"}
        await send_json(send, 401, refusal, ((b"www-authenticate", b"Bearer"),))

