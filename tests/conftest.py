"""Shared test configuration: keep tests hermetic (no proxies, no user git config, no network)."""

from __future__ import annotations

import os

import pytest

# Tests must never depend on the developer's proxy or CA environment.
for _name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"):
    os.environ.pop(_name, None)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
