"""Shared test configuration: keep tests hermetic (no proxies, no user git config, no network)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from doors import DOORS, Door
from hypothesis import settings
from store_backends import enter_test, released_after, store_backend  # noqa: F401  (the store backend parameter, tests/store_backends.py)

# Tests must never depend on the developer's proxy or CA environment.
for _name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"):
    os.environ.pop(_name, None)

# Property tests check behaviour, not speed: on a loaded two-core machine a per-example deadline fails correct code
# at random, so none applies unless a test sets its own.
settings.register_profile("harness", deadline=None)
settings.load_profile("harness")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    enter_test(item)


@pytest.fixture(scope="module", autouse=True)
def _module_stores() -> Iterator[None]:
    """PostgreSQL stores a module's fixtures bound are reused after it (tests/store_backends.py)."""
    with released_after():
        yield


@pytest.fixture(autouse=True)
def _test_stores() -> Iterator[None]:
    """PostgreSQL stores a test bound are reused after it (tests/store_backends.py)."""
    with released_after():
        yield


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=sorted(DOORS))
def door(request: pytest.FixtureRequest) -> Door:
    """Each test using it runs once per front door (tests/doors.py)."""
    return DOORS[request.param]
