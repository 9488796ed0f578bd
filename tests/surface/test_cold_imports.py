"""A cold CLI read imports only what it needs (issue 11 goal 5, docs/decisions.md): checked on a real
`harness` process by the modules loaded when it exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# What a read of the store never uses: the HTTP stack and TLS, the ingest adapters, pull, tracing, the
# review UI and its templates, the MCP server, the triage and AUR code, the PostgreSQL driver.
HEAVY = (
    "httpx",
    "httpx2",
    "ssl",
    "jinja2",
    "opentelemetry",
    "mcp",
    "psycopg",
    "harness.adapters",
    "harness.pull",
    "harness.ui",
    "harness.net.client",
    "harness.mcp_server",
    "harness.triage",
    "harness.aur",
)


def _env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("HARNESS_")}


# Registered before the CLI is imported, so it runs last at exit and sees every module the call loaded.
# (`-X importtime` cannot be used: its report goes to stderr, which the CLI filters for secrets mid-run.)
_PROBE = (
    "import atexit, json, sys\n"
    "out = sys.argv.pop(1)\n"
    "atexit.register(lambda: open(out, 'w').write(json.dumps(sorted(sys.modules))))\n"
    "from harness.cli import main\n"
    "main()\n"
)


def _harness(workspace: Path, *args: str) -> tuple[str, set[str]]:
    """Run `harness --workspace W ARGS` cold; its stdout and the modules loaded by its exit."""
    report = workspace.parent / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(report), "--workspace", str(workspace), *args],
        capture_output=True, text=True, env=_env(), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, set(json.loads(report.read_text()))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if any(name == top or name.startswith(top + ".") for top in HEAVY))


@pytest.fixture(scope="module")
def sample_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workspace = tmp_path_factory.mktemp("cold") / "ws"
    _harness(workspace, "init")
    return workspace


def test_cold_search_events_imports_nothing_heavy(sample_workspace: Path) -> None:
    out, modules = _harness(sample_workspace, "search_events", "--actor", "deploy-svc", "--limit", "2")
    document = json.loads(out)
    assert document["total"] > 2 and [event["actor"] for event in document["events"]] == ["deploy-svc"] * 2
    assert "harness.investigate.search_events" in modules
    assert _heavy(modules) == []


def test_cold_check_baseline_imports_nothing_heavy(sample_workspace: Path) -> None:
    out, modules = _harness(sample_workspace, "check_baseline", "--entity", "deploy-svc")
    assert json.loads(out)["known"] is True
    assert "harness.investigate.check_baseline" in modules
    assert _heavy(modules) == []


def test_the_check_sees_adapters_where_ingest_needs_them(sample_workspace: Path) -> None:
    # The same probe on a command that does use the adapters registry: the names are listed when it loads.
    _, modules = _harness(sample_workspace, "ingest", "events", "--help")
    assert "harness.adapters.registry" in _heavy(modules)
