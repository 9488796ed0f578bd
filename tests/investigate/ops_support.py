"""Support for the store-backed operation tests: workspaces with real stores, and calls through both front doors."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from runners import run_cli

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.mcp_server import build_server
from harness.store import Store
from harness.surface import OPERATIONS
from harness.text import canonjson

# Store V of docs/investigate.md §9.1, in append order.
STORE_V = [
    {
        "id": "e1",
        "source": "github",
        "type": "push",
        "actor": "baron",
        "timestamp": "2026-04-10T09:00:00Z",
        "payload": {"action": "push", "target": "contoso/api"},
    },
    {"id": "e2", "source": "github", "type": "push", "actor": "ci-bot", "timestamp": "2026-04-10T10:00:00Z"},
    {
        "id": "e3",
        "source": "azure",
        "type": "container_restart",
        "actor": "deploy-svc",
        "timestamp": "2026-04-10T11:00:00Z",
        "payload": {"metadata": {"maintenance_window": True}},
    },
    {"id": "e4", "source": "github", "type": "delete", "actor": "baron", "timestamp": "2026-04-10T12:00:00Z"},
    {
        "id": "cafe1234",
        "source": "aws",
        "type": "assume_role",
        "actor": "svc-role",
        "timestamp": "2026-04-10T13:00:00Z",
    },
]

# Store F of docs/investigate.md §9.2, in append order.
STORE_F = [
    {
        "id": "f1",
        "source": "detector:unusual-login",
        "severity": "high",
        "type": "unusual-login",
        "actor": "baron",
        "timestamp": "2026-04-10T09:00:00Z",
        "reason": "login from a new country",
        "evidence": {"event_id": "e1"},
    },
    {
        "id": "f2",
        "source": "detector:new-actor",
        "severity": "medium",
        "type": "new-actor",
        "actor": "ci-bot",
        "timestamp": "2026-04-10T10:00:00Z",
    },
    {
        "id": "f3",
        "source": "detector:unusual-login",
        "severity": "low",
        "type": "unusual-login",
        "actor": "baron",
        "timestamp": "2026-04-10T11:00:00Z",
    },
    {
        "id": "finding-cafe1234",
        "source": "detector:new-external-access",
        "severity": "high",
        "type": "new-external-access",
        "actor": "svc-role",
        "timestamp": "2026-04-10T12:00:00Z",
        "evidence": {"event_id": "cafe1234"},
    },
    {"id": "f5", "source": "config-drift", "severity": "low", "type": "config-drift", "actor": "ops"},
]


@dataclass
class Answer:
    """One call's answer, identical on both front doors."""

    document: dict[str, Any]
    text: str
    exit_code: int

    @property
    def is_error(self) -> bool:
        return self.exit_code != 0


def make_workspace(root: Path, events: Iterable[dict[str, Any]] = (), findings: Iterable[dict[str, Any]] = ()) -> Path:
    """An initialized empty workspace whose store holds `events` and `findings` (one batch each)."""
    workspace = root / "ws"
    assert run_cli(["--workspace", str(workspace), "init", "--empty"]).exit_code == 0
    store = Store(workspace / "store")
    for stream, records in (("events", list(events)), ("findings", list(findings))):
        if records:
            store.append_batch(stream, records)
    return workspace


def call_cli(workspace: Path, operation: str, arguments: dict[str, Any]) -> Answer:
    """`harness --workspace W <operation> --input <arguments>` in-process."""
    result = run_cli(["--workspace", str(workspace), operation, "--input", json.dumps(arguments)])
    assert result.stdout.endswith("\n") and result.stdout.count("\n") == 1
    return Answer(result.json(), result.stdout[:-1], result.exit_code)


async def mcp_texts(workspace: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, bool]]:
    """Each call over one in-memory MCP session, with a context built as `harness serve` builds it."""
    context = build_context(load_settings(Overrides(workspace=workspace)))
    out = []
    try:
        async with Client(build_server(OPERATIONS, context)) as client:
            for operation, arguments in calls:
                answer = await client.call_tool(operation, arguments)
                (content,) = answer.content
                if answer.is_error:
                    assert answer.structured_content is None
                else:
                    assert answer.structured_content == json.loads(content.text)
                out.append((content.text, answer.is_error))
    finally:
        context.close()
    return out


def call_mcp(workspace: Path, operation: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """One tools/call over the in-memory MCP client."""
    return anyio.run(mcp_texts, workspace, [(operation, arguments)])[0]


def call(workspace: Path, operation: str, arguments: dict[str, Any]) -> Answer:
    """The call through the CLI and through MCP; both must give the same bytes."""
    cli = call_cli(workspace, operation, arguments)
    text, is_error = call_mcp(workspace, operation, arguments)
    assert text == cli.text
    assert is_error == cli.is_error
    return cli


def dumps(document: Any) -> str:
    """The bytes a front door prints for `document` (without the CLI's newline)."""
    return canonjson.dumps(document)


def error(operation: str, code: str, message: str) -> dict[str, Any]:
    """The one error shape of docs/surface.md."""
    return {"error": {"code": code, "message": message, "operation": operation}}
