"""The `[serve]` keys as one validated value (pure: config.py checks them at load, the edge reads them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.serve.origins import check_allowed_host, check_allowed_origin
from harness.validation import configured_url

AUTH_MODES = ("bearer", "oauth")

# Clock skew tolerated on exp and nbf of an access token (docs/decisions.md, "Team server").
TOKEN_LEEWAY_S = 30


def check_hosts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected an array of strings")
    return tuple(check_allowed_host(v) for v in value)


def check_origins(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected an array of strings")
    return tuple(check_allowed_origin(v) for v in value)


def check_auth(value: Any) -> str:
    if value not in AUTH_MODES:
        raise ValueError(f"must be one of {', '.join(repr(m) for m in AUTH_MODES)}, got {value!r}")
    return str(value)


def check_url(value: Any, *, schemes: tuple[str, ...]) -> str:
    """Empty, or an absolute URL of `schemes` with a host and no userinfo or fragment."""
    if isinstance(value, str) and not value:
        return ""
    configured_url(value, schemes=schemes, query=True)
    return value


@dataclass(frozen=True)
class ServeSettings:
    """The validated `[serve]` section."""

    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    auth: str = "bearer"
    issuer: str = ""
    audience: str = ""
    jwks_url: str = ""
    ca_file: str = ""
    session_idle_timeout_s: int = 300
    max_sessions: int = 1000
    rate_per_minute: int = 600
    burst: int = 60
    max_concurrent_calls: int = 8
    sessions_per_minute: int = 30
    session_burst: int = 10
    max_sessions_per_caller: int = 20

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> ServeSettings:
        """From checked key values; raises ValueError naming `[serve] key` when the keys disagree."""
        settings = cls(**values)
        if settings.auth == "oauth":
            for key in ("issuer", "audience"):
                if not getattr(settings, key):
                    raise ValueError(f'[serve] {key}: required when auth = "oauth"')
        return settings
