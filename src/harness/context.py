"""The `ctx` every handler receives: settings, redactor, clock, and services built once on first use."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from harness.config import Settings, process_environment
from harness.telemetry.settings import header_values
from harness.text.redact import KnownSecrets, Redactor, build_redactor


def utc_now() -> datetime:
    """The wall clock, timezone-aware UTC."""
    return datetime.now(UTC)


def known_secrets(settings: Settings) -> KnownSecrets:
    """Secret values to redact everywhere: the environment scan plus the configured credentials."""
    known = KnownSecrets.from_environment(
        settings.environ,
        extra_names=settings.get("redaction", "secret_env"),
        excluded_names=settings.get("redaction", "not_secret_env"),
    )
    if settings.github_token:
        known.add(settings.github_token, "GITHUB_TOKEN")
    if settings.okta_token:
        known.add(settings.okta_token, "OKTA_API_TOKEN")
    if settings.serve_token:
        known.add(settings.serve_token, "HARNESS_SERVE_TOKEN")
    for value in header_values(settings.environ):
        known.add(value, "OTLP headers")
    if "://" in settings.ledger_target:
        dsn = urlsplit(settings.ledger_target)
        if dsn.password:
            known.add(settings.ledger_target, "ledger DSN")
            known.add(dsn.password, "ledger DSN password")
    return known


def environment_redactor() -> Redactor:
    """A redactor over the environment's secret values alone, for output written before settings exist."""
    return build_redactor(KnownSecrets.from_environment(process_environment()))


@dataclass
class Context:
    """Handler context: resolved settings, the redactor and clock, and lazily built services."""

    settings: Settings
    redactor: Redactor
    clock: Callable[[], datetime] = utc_now
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _services: dict[str, Any] = field(default_factory=dict, repr=False)

    def service(self, name: str, build: Callable[[], Any]) -> Any:
        """Build a shared service once (thread-safe); later calls return the same object."""
        with self._lock:
            if name not in self._services:
                self._services[name] = build()
            return self._services[name]

    def workspace_note(self) -> str:
        """The note every result carries while the calls answer from an empty fallback workspace, else ""."""
        if self.settings.workspace_source != "fallback":
            # Checked here first so that the usual call never imports the store modules just to ask.
            return ""
        from harness.workspace import fallback_note

        return fallback_note(self.settings)

    def close(self) -> None:
        """Close services that hold resources (HTTP connections, database handles)."""
        with self._lock:
            for service in self._services.values():
                closer = getattr(service, "close", None)
                if callable(closer):
                    closer()
            self._services.clear()


def build_context(settings: Settings, *, clock: Callable[[], datetime] = utc_now) -> Context:
    """The context for one CLI invocation or one server process."""
    return Context(settings=settings, redactor=build_redactor(known_secrets(settings), settings.redaction_rules),
                   clock=clock)
