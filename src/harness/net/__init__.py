"""The guarded HTTP client every outbound call goes through (docs/net.md).

The names below load their module on first use, so importing a pure submodule (aur_ranges, urls, errors)
does not load the HTTP stack and ssl for a call that never makes a request (docs/decisions.md, issue 11).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.net.client import REDIRECT_REFUSED, USER_AGENT, GuardedClient, RedirectMode, Response
    from harness.net.errors import ClientConfigError, NetError, RequestRefused, TooLarge, Unavailable, UnavailableKind
    from harness.net.instances import AUR_CALL_DEADLINE_S, aur_client_transport, github_client, okta_client
    from harness.net.urls import build_path, build_query

_HOMES = {
    "harness.net.client": ("REDIRECT_REFUSED", "USER_AGENT", "GuardedClient", "RedirectMode", "Response"),
    "harness.net.errors": (
        "ClientConfigError", "NetError", "RequestRefused", "TooLarge", "Unavailable", "UnavailableKind",
    ),
    "harness.net.instances": ("AUR_CALL_DEADLINE_S", "aur_client_transport", "github_client", "okta_client"),
    "harness.net.urls": ("build_path", "build_query"),
}  # fmt: skip
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

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


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.net' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
