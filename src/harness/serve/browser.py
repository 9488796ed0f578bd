"""How a browser presents the static bearer token to the ledger view (docs/decisions.md, "Ledger web view"): a
one-time sign-in at /ui/login exchanges the token for an HttpOnly, SameSite=Strict cookie scoped to /ui/, whose value
is an HMAC of the token, so it opens the view and nothing else (MCP still needs the Authorization header)."""

from __future__ import annotations

import hashlib
import hmac
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from harness.serve.responses import send_json

UI_PREFIX = "/ui/"
LOGIN_PATH = UI_PREFIX + "login"
# The style sheet is the one thing the sign-in page needs before the cookie exists.
PUBLIC_PATHS = frozenset({LOGIN_PATH, UI_PREFIX + "static/ui.css", UI_PREFIX + "static/icon.svg"})
COOKIE_NAME = "harness_ui"
_COOKIE_CONTEXT = b"triage-harness ledger view cookie v1"
LOGIN_BODY_MAX = 4096


def cookie_value(token: str) -> str:
    """The cookie a valid sign-in sets: derived from the token, so it changes when the token does."""
    return hmac.new(token.encode("utf-8"), _COOKIE_CONTEXT, hashlib.sha256).hexdigest()


def cookie_matches(headers: Headers, token: str) -> bool:
    """True when the request carries the view cookie for `token` (compared in constant time)."""
    jar: SimpleCookie = SimpleCookie()
    for header in headers.getlist("cookie"):
        try:
            jar.load(header)
        except Exception:  # noqa: BLE001 - http.cookies raises CookieError and others on junk
            return False
    morsel = jar.get(COOKIE_NAME)
    return morsel is not None and hmac.compare_digest(morsel.value.encode(), cookie_value(token).encode())


def is_ui_path(path: str) -> bool:
    return path.startswith(UI_PREFIX) or path == UI_PREFIX.rstrip("/")


async def _redirect(send: Send, location: str, cookie: str = "") -> None:
    headers = [(b"location", location.encode("ascii")), (b"content-length", b"0"), (b"cache-control", b"no-store")]
    if cookie:
        headers.append((b"set-cookie", cookie.encode("ascii")))
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def refuse(scope: Scope, send: Send) -> None:
    """A view request without credentials: a browser's GET goes to the sign-in form, anything else gets 401."""
    if scope["method"] == "GET":
        await _redirect(send, LOGIN_PATH)
        return
    await send_json(send, 401, {"error": "a valid bearer token is required"}, ((b"www-authenticate", b"Bearer"),))


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    body = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            return body


async def sign_in(scope: Scope, receive: Receive, send: Send, token: str) -> None:
    """POST /ui/login: a form carrying the token; a match sets the cookie and goes to the view, else back to the
    form. The Host/Origin guard has already refused a cross-site form."""
    body = await _read_body(receive, LOGIN_BODY_MAX)
    if body is None:
        await send_json(send, 413, {"error": f"the sign-in form is larger than {LOGIN_BODY_MAX} bytes"})
        return
    given = parse_qs(body.decode("utf-8", errors="replace")).get("token", [""])[0]
    from harness.serve.bearer import token_matches

    if not given or not token_matches(given, token):
        await _redirect(send, LOGIN_PATH + "?failed=1")
        return
    secure = "; Secure" if scope.get("scheme") == "https" else ""
    cookie = f"{COOKIE_NAME}={cookie_value(token)}; Path={UI_PREFIX}; HttpOnly; SameSite=Strict{secure}"
    await _redirect(send, UI_PREFIX, cookie)
