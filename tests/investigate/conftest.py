"""Fixtures for the investigate tests: a fake GitHub (loopback HTTPS, trustme CA)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from tests.investigate.github_support import FakeGitHub
from tests.net.https_server import HttpsServer


@pytest.fixture(scope="session")
def github_ca() -> trustme.CA:
    """The CA the fake GitHub's certificate comes from."""
    return trustme.CA()


@pytest.fixture
def fake_github(tmp_path: Path, github_ca: trustme.CA, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    """A started fake GitHub; the CA is copied into the workspace and named relatively, as an operator would."""
    for name in ("GITHUB_TOKEN", "HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with HttpsServer(github_ca) as server:
        shutil.copy(server.ca_file, workspace / "github-ca.pem")
        fake = FakeGitHub(server, workspace)
        fake.configure(api_url=server.origin, ca_file="github-ca.pem")
        yield fake

