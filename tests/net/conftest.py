"""Fixtures for tests of the guarded client: a trustme CA, a loopback HTTPS server (https_server.py), clients."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import trustme

from harness.net import GuardedClient
from tests.net.https_server import HttpsServer
from tests.net.sleeps import SleepRecorder


@pytest.fixture(scope="session")
def tls_ca() -> trustme.CA:
    """The CA the test servers' certificates come from; clients trust it through `server.ca_file`."""
    return trustme.CA()


@pytest.fixture
def https_server(tls_ca: trustme.CA) -> Iterator[HttpsServer]:
    """A started HttpsServer on 127.0.0.1 (certificate for 127.0.0.1 and localhost), stopped after the test."""
    with HttpsServer(tls_ca) as server:
        yield server


@pytest.fixture
def sleeps() -> SleepRecorder:
    """The recording sleep that `make_client` injects by default."""
    return SleepRecorder()


@pytest.fixture
def make_client(https_server: HttpsServer, sleeps: SleepRecorder) -> Iterator[Callable[..., GuardedClient]]:
    """Build GuardedClients for `https_server` with small timeouts, no jitter and the recording sleep."""
    clients: list[GuardedClient] = []

    def build(**overrides: Any) -> GuardedClient:
        settings: dict[str, Any] = {
            "origin": https_server.origin,
            "ca_file": https_server.ca_file,
            "connect_timeout_s": 2,
            "read_timeout_s": 2,
            "deadline_s": 5,
            "max_body_bytes": 1024,
            "jitter_s": lambda delay: 0.0,
            "sleep": sleeps,
        }
        settings.update(overrides)
        client = GuardedClient(**settings)
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.close()
