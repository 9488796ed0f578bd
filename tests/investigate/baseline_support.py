"""Support for the check_baseline, lookup_rules and --baseline tests: baseline B of docs/investigate.md §9.3 and
the fixtures `workspace` and `clean_env` (import their `*_fixture` functions to use them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from store_backends import current, workspace_store

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
    store = workspace_store(workspace)
    try:
        store.append_batch("baseline", [baseline])
    finally:
        store.close()


def write_baseline_file(path: Path, baseline: dict[str, Any]) -> Path:
    path.write_text(json.dumps(baseline))
    return path


@pytest.fixture(name="clean_env", autouse=True)
def clean_env_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    """No harness variable of the developer's shell reaches the calls."""
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_RULES_SHA256", "HARNESS_LEDGER_URL", "HARNESS_STORE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(name="workspace")
def workspace_fixture(tmp_path: Path) -> Path:
    """An empty workspace directory (no store; no harness.toml, save the `[store] url` of a PostgreSQL backend)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    current().bind(ws)
    return ws
