"""Fixtures for the surface tests: a workspace and a CLI runner over the test registry."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from runners import CliResult, run_cli

from harness.surface import Registry


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def cli(workspace: Path) -> Callable[..., CliResult]:
    from testops import REGISTRY

    def invoke(*args: str, registry: Registry | None = REGISTRY) -> CliResult:
        return run_cli(["--workspace", str(workspace), *args], registry)

    return invoke


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_RULES_SHA256", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)
