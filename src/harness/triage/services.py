"""Accessors for the shared services of the triage operations, each built once per process through ctx."""

from __future__ import annotations

from harness.aur.client import AurClient, UnusableClient, build_aur_client
from harness.context import Context
from harness.net import ClientConfigError

NOT_USABLE = "AUR client not usable"


def aur(ctx: Context) -> AurClient | UnusableClient:
    """The AUR client from `[aur]`, or why that section cannot give one (verify then fails closed)."""
    settings = ctx.settings
    if settings.aur_error:
        return UnusableClient(f"{NOT_USABLE}: {settings.aur_error}")
    try:
        client: AurClient = ctx.service("aur", lambda: _build_aur(ctx))
    except ClientConfigError as exc:
        return UnusableClient(f"{NOT_USABLE}: [aur] {exc.key} is invalid")
    return client


def _build_aur(ctx: Context) -> AurClient:
    settings = ctx.settings
    ca_file = settings.workspace_path(settings.get("aur", "ca_file"))
    return build_aur_client(
        settings.get("aur", "base_url"),
        str(ca_file) if ca_file else None,
        settings.get("aur", "min_interval_ms"),
        settings.get("aur", "backoff_base_ms"),
        settings.get("aur", "max_retries"),
        settings.get("aur", "retry_after_cap_s"),
    )
