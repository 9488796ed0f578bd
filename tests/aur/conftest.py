"""Fixtures for the AUR and triage tests: the fake AUR of docs/triage.md §16.1 and its workspace."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from tests.aur.fake_aur import FakeAur
from tests.net.https_server import HttpsServer


@pytest.fixture(scope="session")
def aur_ca() -> trustme.CA:
    """The CA the fake AUR's certificate comes from."""
    return trustme.CA()


@pytest.fixture
def fake_aur(tmp_path: Path, aur_ca: trustme.CA, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAur]:
    """A started fake AUR (no packages yet) and a workspace whose harness.toml points at it (CA copied in)."""
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with HttpsServer(aur_ca) as server:
        shutil.copy(server.ca_file, workspace / "aur-ca.pem")
        yield FakeAur(server, tmp_path / "aur", workspace)
