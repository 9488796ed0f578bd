"""Support for the check_baseline, lookup_rules and --baseline tests: baseline B of docs/investigate.md §9.3,
calls of any operation through the two real front doors (in-process CLI, in-memory MCP client), and the
fixtures `door`, `workspace` and `clean_env` (import their `*_fixture` functions to use them)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from runners import run_cli

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.mcp_server import build_server
from harness.store import Store
from harness.surface import OPERATIONS

# Baseline B (docs/investigate.md §9.3), as an operator would write it in a --baseline file.
BASELINE_B: dict[str, Any] = {
    "schema_version": 1,
    "known_actors": ["baron", "ci-bot", "deploy-svc"],
    "known_users": {
        "baron": {"known_geos": ["GB", "US"], "known_ips": ["203.0.113.5"], "last_seen": "2026-04-09T12:00:00Z"},
        "ci-bot": {"known_geos": ["US"], "last_seen": "2026-04-10T00:00:00Z"},
        "quiet-user": {},
    },
    "frequency_tables": {
        "azure:container_restart:deploy-svc": 40,
        "azure:image_push:deploy-svc": 2,
        "azure:image_push:DEPLOY-SVC": 3,
        "time:02:deploy-svc": 10,
        "github:push:someone-else": 99,
        "azure:container_restart:deploy-svc-canary": 7,
        "azure:login:deploy-svc:3:night": 5,
        "azure:login": 11,
    },
    "actor_roles": {"deploy-svc": ["restarter", "deployer"]},
    "relationships": {
        "deploy-svc:arn:aws:s3:::logs": {"count": 4, "first_seen": "2026-03-01", "last_seen": "2026-04-01"},
        "admin-user:deploy-svc": {"count": 2},
        "deploy-svc-canary:x": {"count": 9},
        "ops:deploy-svc-old": {"count": 1},
    },
}


def store_baseline(workspace: Path, baseline: dict[str, Any]) -> None:
    """Append `baseline` as the newest `baseline` record of the workspace's store."""
    Store(workspace / "store").append_batch("baseline", [baseline])


def write_baseline_file(path: Path, baseline: dict[str, Any]) -> Path:
    path.write_text(json.dumps(baseline))
    return path


@dataclass
class Answer:
    """One call's answer as a front door gave it; `exit_code` is None on MCP."""

    text: str
    is_error: bool
    exit_code: int | None
    stderr: str = ""

    @property
    def document(self) -> Any:
        return json.loads(self.text)


def _flags(arguments: dict[str, Any]) -> list[str] | None:
    """Flags for string and object arguments; None when the arguments need --input (e.g. an unknown key)."""
    args: list[str] = []
    for key, value in arguments.items():
        if key != key.lower() or not isinstance(value, str | dict):
            return None
        args += [f"--{key.replace('_', '-')}", value if isinstance(value, str) else json.dumps(value)]
    return args


def cli(
    workspace: Path,
    operation: str,
    arguments: dict[str, Any],
    *,
    baseline: Path | None = None,
    rules: Path | None = None,
) -> Answer:
    """`harness --workspace W [--baseline F] [--rules R] OPERATION --flag value ...` in-process."""
    globals_ = ["--workspace", str(workspace)]
    if baseline is not None:
        globals_ += ["--baseline", str(baseline)]
    if rules is not None:
        globals_ += ["--rules", str(rules)]
    flags = _flags(arguments)
    args = flags if flags is not None else ["--input", json.dumps(arguments)]
    result = run_cli([*globals_, operation, *args])
    assert result.stdout.endswith("\n") and result.stdout.count("\n") == 1, result.stdout
    return Answer(result.stdout[:-1], result.exit_code != 0, result.exit_code, result.stderr)


def mcp(
    workspace: Path,
    operation: str,
    arguments: dict[str, Any],
    *,
    baseline: Path | None = None,
    rules: Path | None = None,
) -> Answer:
    """One tools/call over the SDK's in-memory client, with the context `harness serve` would build."""
    context = build_context(load_settings(Overrides(workspace=workspace, baseline=baseline, rules=rules)))

    async def run() -> Any:
        async with Client(build_server(OPERATIONS, context)) as client:
            return await client.call_tool(operation, arguments)

    try:
        answer = anyio.run(run)
    finally:
        context.close()
    (content,) = answer.content
    if not answer.is_error:
        assert answer.structured_content == json.loads(content.text)
    return Answer(content.text, answer.is_error, None)


DOORS = {"cli": cli, "mcp": mcp}


@pytest.fixture(name="door", params=["cli", "mcp"])
def door_fixture(request: pytest.FixtureRequest) -> Any:
    """Each test using it runs once per front door."""
    return DOORS[request.param]


@pytest.fixture(name="clean_env", autouse=True)
def clean_env_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    """No harness variable of the developer's shell reaches the calls."""
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_RULES_SHA256", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(name="workspace")
def workspace_fixture(tmp_path: Path) -> Path:
    """An empty workspace directory (no harness.toml, no store)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws
