"""Fixtures for the surface tests: a workspace, and CLI and MCP runners over a test registry."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.surface import Registry


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(args: list[str], registry: Registry | None = None) -> CliResult:
    """Run `harness` in-process, capturing stdout, stderr and the exit status."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(args, registry=registry)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return CliResult(code, out.getvalue(), err.getvalue())


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


def python() -> str:
    return sys.executable
