"""The Okta instance of the guarded client, built once per process through ctx (GitHub's is investigate's)."""

from __future__ import annotations

from harness.config import CONFIG_NAME, ConfigError
from harness.context import Context
from harness.errors import InvalidInput
from harness.net import ClientConfigError, GuardedClient, okta_client
from harness.pull.sources import okta_domain


def okta(ctx: Context, domain: str) -> GuardedClient:
    """`https://<domain>` with `[okta] ca_file` and OKTA_API_TOKEN (required: the System Log has no anonymous read)."""
    return ctx.service(f"okta:{okta_domain(domain)}", lambda: _build_okta(ctx, okta_domain(domain)))


def _build_okta(ctx: Context, domain: str) -> GuardedClient:
    settings = ctx.settings
    if not settings.okta_token:
        raise InvalidInput("OKTA_API_TOKEN: must be set to an Okta API token to pull the System Log")
    ca_file = settings.workspace_path(settings.get("okta", "ca_file"))
    try:
        return okta_client(f"https://{domain}", str(ca_file) if ca_file else None, settings.okta_token)
    except ClientConfigError as exc:
        if exc.key == "headers":
            raise ConfigError("OKTA_API_TOKEN: must be printable ASCII, since it is sent as a header") from None
        if exc.key == "base_url":
            raise InvalidInput(f"--domain: {exc.problem}") from None
        raise ConfigError(f"{settings.workspace / CONFIG_NAME}: [okta] {exc.key}: {exc.problem}") from None
