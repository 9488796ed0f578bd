"""Who is calling over HTTP: the principal the edge authenticated, read from the request's ASGI scope."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

from harness.serve.bearer import AUTH_SCOPE_KEY


@dataclass(frozen=True)
class Caller:
    """principal: the token's sub under OAuth, "bearer" for the static token, "local" otherwise."""

    principal: str
    auth_method: str
    client_id: str = ""
    scopes: tuple[str, ...] = ()
    peer: str = ""


# stdio and the CLI: the process was started by the local user.
LOCAL = Caller(principal="local", auth_method="local")


def limit_key(principal: str, auth_method: str, peer: str) -> str:
    """Whose limits a call counts against: the authenticated principal, else the peer's address (unauthenticated
    loopback callers all share the principal "local")."""
    if auth_method in ("oauth", "bearer"):
        return principal
    return f"{principal}@{peer.rpartition(':')[0]}"


def caller_of(request: Any) -> Caller:
    """The caller of one HTTP request (LOCAL when `request` is not an HTTP request, as on stdio)."""
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict):
        return LOCAL
    client = scope.get("client")
    peer = f"{client[0]}:{client[1]}" if client else ""
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser):
        token = user.access_token
        return Caller(token.subject or token.client_id, "oauth", token.client_id, tuple(token.scopes), peer)
    if scope.get(AUTH_SCOPE_KEY) == "bearer":
        return Caller("bearer", "bearer", peer=peer)
    return Caller("local", "none", peer=peer)
