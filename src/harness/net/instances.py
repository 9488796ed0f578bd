"""The two service instances of docs/net.md's Instances table, built from settings values (config.py reads them)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from harness.net.aur_ranges import AUR_RANGES
from harness.net.client import USER_AGENT, GuardedClient
from harness.net.errors import ClientConfigError

GITHUB_BODY_CAP = 4 * 1024 * 1024
AUR_BODY_CAP = 1024 * 1024
AUR_MAX_REDIRECTS = 3
AUR_BACKOFF_CAP_S = 15.0
AUR_CALL_DEADLINE_S = 180.0



def aur_jitter(_delay_s: float) -> float:
    """docs/triage.md §5: 0..250 ms of jitter whatever the backoff delay."""
    return random.uniform(0, 0.25)


def github_client(
    api_url: str,
    ca_file: str | None,
    token: str | None,
    *,
    connect_timeout_s: float = 5,
    read_timeout_s: float = 15,
    deadline_s: float = 15,
    monotonic: Callable[[], float] = time.monotonic,
) -> GuardedClient:
    """The github_actor instance (docs/investigate.md §9.6): no retries, redirects never followed, 4 MiB."""
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
    }
    if token and token.strip():
        headers["Authorization"] = f"Bearer {token.strip()}"
    return _one_shot(
        "api_url",
        api_url,
        ca_file,
        headers,
        connect_timeout_s=connect_timeout_s,
        read_timeout_s=read_timeout_s,
        deadline_s=deadline_s,
        monotonic=monotonic,
    )


def okta_client(
    base_url: str,
    ca_file: str | None,
    token: str,
    *,
    connect_timeout_s: float = 5,
    read_timeout_s: float = 30,
    deadline_s: float = 60,
) -> GuardedClient:
    """The Okta System Log instance (docs/decisions.md, "Live pulls"): SSWS token, no retries, never redirects,
    4 MiB; rate limits and resumption are the pull's job, so every status comes back as a Response."""
    return _one_shot(
        "base_url",
        base_url,
        ca_file,
        {"User-Agent": USER_AGENT, "Accept": "application/json", "Authorization": f"SSWS {token.strip()}"},
        connect_timeout_s=connect_timeout_s,
        read_timeout_s=read_timeout_s,
        deadline_s=deadline_s,
    )


def aur_client_transport(
    base_url: str,
    ca_file: str | None,
    min_interval_ms: int,
    backoff_base_ms: int,
    max_retries: int,
    retry_after_cap_s: float,
    *,
    redirect_allowed: Callable[[str], bool] | None = None,
    connect_timeout_s: float = 10,
    read_timeout_s: float = 30,
    deadline_s: float = 60,
    jitter_s: Callable[[float], float] = aur_jitter,
    clock: Callable[[], float] = time.time,
    monotonic: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> GuardedClient:
    """The AUR instance (docs/triage.md §5): retries with a 15 s backoff cap, at most 3 allowlisted redirects, 1 MiB.

    `redirect_allowed` narrows redirect targets further (the two AUR URL forms); the per-verify 180 s budget
    (AUR_CALL_DEADLINE_S) is passed by the caller as `get(..., deadline_at=...)`. A ClientConfigError names
    the `[aur]` key at fault (`base_url`, `ca_file`, ...).
    """
    values = {
        "min_interval_ms": min_interval_ms,
        "backoff_base_ms": backoff_base_ms,
        "max_retries": max_retries,
        "retry_after_cap_s": retry_after_cap_s,
    }
    for key, (low, high) in AUR_RANGES.items():
        value = values[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
            raise ClientConfigError(key, f"must be between {low:,} and {high:,}")
    if isinstance(base_url, str) and urlsplit(base_url).path not in ("", "/"):
        raise ClientConfigError("base_url", "must have no path other than /")
    client = _build(
        "base_url",
        origin=base_url,
        ca_file=ca_file,
        connect_timeout_s=connect_timeout_s,
        read_timeout_s=read_timeout_s,
        deadline_s=deadline_s,
        max_body_bytes=AUR_BODY_CAP,
        max_retries=max_retries,
        backoff_base_ms=backoff_base_ms,
        backoff_cap_s=AUR_BACKOFF_CAP_S,
        retry_after_cap_s=retry_after_cap_s,
        min_interval_ms=min_interval_ms,
        follow_redirects="allowlisted",
        max_redirects=AUR_MAX_REDIRECTS,
        redirect_allowed=redirect_allowed,
        headers={"User-Agent": USER_AGENT, "Cache-Control": "no-cache"},
        jitter_s=jitter_s,
        clock=clock,
        monotonic=monotonic,
        sleep=sleep,
    )
    return client


def _one_shot(
    origin_key: str,
    origin: str,
    ca_file: str | None,
    headers: Mapping[str, str],
    *,
    connect_timeout_s: float,
    read_timeout_s: float,
    deadline_s: float,
    monotonic: Callable[[], float] = time.monotonic,
) -> GuardedClient:
    """The policy GitHub and Okta share: one request per call (no retries), redirects never followed, 4 MiB."""
    return _build(
        origin_key,
        origin=origin,
        ca_file=ca_file,
        connect_timeout_s=connect_timeout_s,
        read_timeout_s=read_timeout_s,
        deadline_s=deadline_s,
        max_body_bytes=GITHUB_BODY_CAP,
        max_retries=0,
        follow_redirects="never",
        headers=headers,
        monotonic=monotonic,
    )


def _build(origin_key: str, **settings: Any) -> GuardedClient:
    """A GuardedClient whose construction errors name the configuration key (`origin` becomes `origin_key`)."""
    try:
        return GuardedClient(**settings)
    except ClientConfigError as exc:
        raise ClientConfigError(origin_key if exc.key == "origin" else exc.key, exc.problem) from None
