"""A strict TypeScript MCP client (the official TypeScript SDK) against `harness serve` over stdio: it accepts
every tool's schemas, validates success results against their outputSchema, and sees errors as isError results
without structuredContent, with text byte-identical to the CLI's (docs/surface.md "Errors")."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from procs import clean_env, harness_argv

from harness.surface import OPERATIONS

HERE = Path(__file__).resolve().parent / "ts_client"
ROOT = HERE.parent.parent.parent
CALLS = [
    ["search_events", {"actor": "DEPLOY-SVC", "since": "2026-04-10"}],
    ["search_findings", {"actor": "jdoe"}],
    ["check_baseline", {"entity": "contractor-bob"}],
    ["lookup_rules", {"finding_id": "f-1", "finding_family": "unusual-timing", "maintenance_window": "true"}],
    ["get_raw_event", {"id": "evt-0021"}],
    ["search_events", {"limit": 0}],
    ["github_actor", {"login": "a b"}],
    ["repo_file", {"path": "src/trustsight/x.py"}],
    ["no_such_tool", {}],
]


@pytest.fixture(scope="module")
def ts_client() -> Path:
    """The client with its locked dependencies, installed once under .venv (npm ci)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not installed")
    target = ROOT / ".venv" / "ts-client"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json", "client.mjs"):
        shutil.copyfile(HERE / name, target / name)
    if not (target / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target,
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            pytest.skip(f"npm could not install the TypeScript SDK: {done.stderr.strip()[-300:]}")
    return target


def test_typescript_client_accepts_schemas_results_and_errors(ts_client: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    subprocess.run(harness_argv("--workspace", str(workspace), "init"), check=True, capture_output=True,
                   env=clean_env(), timeout=60)
    serve = harness_argv("--workspace", str(workspace), "serve")
    proc = subprocess.run(["node", str(ts_client / "client.mjs"), *serve], input=json.dumps(CALLS),
                          capture_output=True, text=True, env=clean_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [tool["name"] for tool in report["tools"]] == OPERATIONS.names()
    assert all(tool["hasOutputSchema"] for tool in report["tools"])
    # Every tool reads, except resolve_finding, which appends its proposal to the resolutions stream.
    assert {tool["name"] for tool in report["tools"] if not tool["annotations"]["readOnlyHint"]} == {
        op.name for op in OPERATIONS if not op.read_only
    }
    for (name, arguments), result in zip(CALLS, report["results"], strict=True):
        cli = subprocess.run(harness_argv("--workspace", str(workspace), name, "--input", json.dumps(arguments)),
                             capture_output=True, text=True, env=clean_env(), timeout=60)
        assert cli.stdout == result["text"] + "\n", name
        if result["isError"]:
            assert result["structured"] is None and cli.returncode != 0
        else:
            assert result["structured"] == json.loads(result["text"]) and cli.returncode == 0
    assert [r["isError"] for r in report["results"]] == [False] * 5 + [True] * 4
