"""Outcomes of the guarded client other than a Response, and its construction error."""

from __future__ import annotations

from typing import Literal

from harness import errors

UnavailableKind = Literal["connect", "tls", "read", "protocol", "deadline", "status", "retry_after"]


class ClientConfigError(ValueError):
    """A constructor argument is unusable; `key` names the argument."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


class NetError(errors.HarnessError):
    """Base of every request outcome that is not a Response; `url` never carries a query."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"GET {url}: {reason}")
        self.url = url
        self.reason = reason


class RequestRefused(NetError, errors.Refused):
    """The URL (or a redirect target) is outside the allowed origin and prefix; nothing was sent to it."""


class TooLarge(NetError, errors.UpstreamUnavailable):
    """The body exceeded the cap; it is never returned truncated."""

    def __init__(self, url: str, limit: int) -> None:
        super().__init__(url, f"response larger than {limit:,} bytes")
        self.limit = limit


class Unavailable(NetError, errors.UpstreamUnavailable):
    """No usable answer: transport or TLS failure, deadline passed, retries ended.

    `kind` classifies the failure; `status` is the last HTTP status when retries ended on one.
    """

    def __init__(self, url: str, reason: str, *, kind: UnavailableKind, status: int | None = None) -> None:
        super().__init__(url, reason)
        self.kind: UnavailableKind = kind
        self.status = status
