"""The guarded HTTP client every outbound call goes through (docs/net.md)."""

from harness.net.client import REDIRECT_REFUSED, USER_AGENT, GuardedClient, RedirectMode, Response
from harness.net.errors import ClientConfigError, NetError, RequestRefused, TooLarge, Unavailable, UnavailableKind
from harness.net.instances import AUR_CALL_DEADLINE_S, aur_client_transport, github_client, okta_client
from harness.net.urls import build_path, build_query

__all__ = [
    "AUR_CALL_DEADLINE_S",
    "REDIRECT_REFUSED",
    "USER_AGENT",
    "ClientConfigError",
    "GuardedClient",
    "NetError",
    "RedirectMode",
    "RequestRefused",
    "Response",
    "TooLarge",
    "Unavailable",
    "UnavailableKind",
    "aur_client_transport",
    "build_path",
    "build_query",
    "github_client",
    "okta_client",
]
