"""Support for the store-backed operation tests: stores V and F, and workspaces holding real stores."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from runners import run_cli
from store_backends import current, workspace_store

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


def make_workspace(root: Path, events: Iterable[dict[str, Any]] = (), findings: Iterable[dict[str, Any]] = ()) -> Path:
    """An initialized empty workspace whose store (of the running test's backend) holds `events` and `findings`
    (one batch each)."""
    workspace = root / "ws"
    assert run_cli(["--workspace", str(workspace), "init", "--empty"]).exit_code == 0
    current().bind(workspace)
    store = workspace_store(workspace)
    try:
        for stream, records in (("events", list(events)), ("findings", list(findings))):
            if records:
                store.append_batch(stream, records)
    finally:
        store.close()
    return workspace


def dumps(document: Any) -> str:
    """The bytes a front door prints for `document` (without the CLI's newline)."""
    return canonjson.dumps(document)


def error(operation: str, code: str, message: str) -> dict[str, Any]:
    """The one error shape of docs/surface.md."""
    return {"error": {"code": code, "message": message, "operation": operation}}
