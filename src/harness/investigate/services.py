"""Accessors for the shared services of the investigate operations, each built once per process through ctx."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.config import CONFIG_NAME, ConfigError
from harness.context import Context
from harness.store import load_baseline_file
from harness.store.backend import EventStore, open_event_store

if TYPE_CHECKING:
    from harness.net import GuardedClient


def github(ctx: Context) -> GuardedClient:
    """The GitHub instance of the guarded client (docs/net.md), from `[github] api_url`, `ca_file` and GITHUB_TOKEN."""
    return ctx.service("github", lambda: _build_github(ctx))


def _build_github(ctx: Context) -> GuardedClient:
    # Imported here: only github_actor needs the HTTP stack, and every other call skips loading it.
    from harness.net import ClientConfigError, instances

    settings = ctx.settings
    ca_file = settings.workspace_path(settings.get("github", "ca_file"))
    try:
        return instances.github_client(
            settings.get("github", "api_url"),
            str(ca_file) if ca_file else None,
            settings.github_token or None,
        )
    except ClientConfigError as exc:
        # The only fixed header built from outside input is the bearer token; its value is never echoed.
        if exc.key == "headers":
            raise ConfigError("GITHUB_TOKEN: must be printable ASCII, since it is sent as a header") from None
        raise ConfigError(f"{settings.workspace / CONFIG_NAME}: [github] {exc.key}: {exc.problem}") from None


def store(ctx: Context) -> EventStore:
    """The workspace's store (or `--store`): the git store with its read index at `[store] index_path` or beside
    it, or the PostgreSQL store of `[store] url` / HARNESS_STORE_URL (store/backend.py)."""
    return ctx.service("store", lambda: open_event_store(ctx.settings, ctx.redactor.redact))


def preload(ctx: Context) -> None:
    """Load what must be valid before any call: a bad `--baseline` file is invalid_input for every CLI call."""
    if ctx.settings.baseline_path is not None:
        load_baseline_file(ctx.settings.baseline_path)
