"""Fixtures for the pull tests: a workspace whose harness.toml points at one loopback HTTPS server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from store_backends import StoreBackend

from tests.investigate.ops_support import make_workspace
from tests.net.https_server import HttpsServer
from tests.pull.pull_support import GITHUB_TOKEN, OKTA_TOKEN


@pytest.fixture(scope="session")
def pull_ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def server(pull_ca: trustme.CA) -> Iterator[HttpsServer]:
    with HttpsServer(pull_ca) as started:
        yield started


@pytest.fixture
def ws(tmp_path: Path, server: HttpsServer, monkeypatch: pytest.MonkeyPatch, store_backend: StoreBackend) -> Path:
    """A workspace trusting the fake's CA for both `[github]` and `[okta]`, with both tokens set, on each store
    backend in turn."""
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)
    monkeypatch.setenv("OKTA_API_TOKEN", OKTA_TOKEN)
    workspace = make_workspace(tmp_path)
    shutil.copy(server.ca_file, workspace / "fake-ca.pem")
    (workspace / "harness.toml").write_text(
        f'[github]\napi_url = "{server.origin}"\nca_file = "fake-ca.pem"\n\n[okta]\nca_file = "fake-ca.pem"\n'
        "\n[pull]\nmax_wait_s = 5\n"
    )
    store_backend.bind(workspace)
    return workspace
