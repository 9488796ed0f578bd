"""The package's operations over a real `harness serve` stdio subprocess (SDK ClientSession, session era):
tools/list carries schemas and annotations, and each call's structured content equals the CLI's JSON."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from procs import clean_env, harness_argv

from harness.surface import OPERATIONS

pytestmark = pytest.mark.anyio

CALLS = [
    ("search_events", {"actor": "DEPLOY-SVC", "finding_family": "unusual-timing",
                       "finding_metadata": {"maintenance_window": "true"}, "since": "2026-04-10"}),
    ("search_events", {"actor": "nobody"}),
    ("search_events", {"ids": ["evt-"]}),
    ("search_findings", {"actor": "jdoe"}),
    ("check_baseline", {"entity": "deploy-svc", "event_type": "container_restart"}),
    ("check_baseline", {"entity": "contractor-bob"}),
    ("lookup_rules", {"finding_id": "finding-evt-0024-off-hours", "finding_family": "unusual-timing",
                      "maintenance_window": "true"}),
    ("get_raw_event", {"id": "FINDING-EVT-0021-admin-grant"}),
    ("get_raw_event", {"id": "missing-event"}),
    ("github_actor", {"login": "../admin"}),
    ("fp_agent_verify", {"verdict": {"schema_version": 1}}),
    ("repo_file", {"path": "src/trustsight/x.py"}),
]


def _cli(workspace: Path, name: str, arguments: dict) -> subprocess.CompletedProcess:
    argv = harness_argv("--workspace", str(workspace), name, "--input", json.dumps(arguments))
    return subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=60)


async def test_every_operation_over_stdio_matches_the_cli(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    init = subprocess.run(harness_argv("--workspace", str(workspace), "init"), capture_output=True, text=True,
                          env=clean_env(), timeout=60)
    assert init.returncode == 0, init.stderr
    argv = harness_argv("--workspace", str(workspace), "serve")
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=clean_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        results = [await session.call_tool(name, arguments) for name, arguments in CALLS]

    assert list(tools) == OPERATIONS.names()
    for op in OPERATIONS:
        tool = tools[op.name]
        assert tool.input_schema["type"] == "object" and tool.output_schema["type"] == "object"
        assert tool.annotations.read_only_hint is op.read_only and tool.annotations.destructive_hint is False
        assert tool.annotations.open_world_hint is op.open_world
    for (name, arguments), result in zip(CALLS, results, strict=True):
        cli = _cli(workspace, name, arguments)
        (content,) = result.content
        assert cli.stdout == content.text + "\n", name
        if result.is_error:
            assert result.structured_content is None and cli.returncode != 0
        else:
            assert result.structured_content == json.loads(cli.stdout) and cli.returncode == 0
    assert {r.is_error for r in results} == {True, False}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_operation_over_http_matches_the_cli(tmp_path: Path, mode: str) -> None:
    from mcp import Client
    from procs import free_port, wait_for_port

    workspace = tmp_path / "ws"
    subprocess.run(harness_argv("--workspace", str(workspace), "init"), check=True, capture_output=True,
                   env=clean_env(), timeout=60)
    port = free_port()
    server = subprocess.Popen(harness_argv("--workspace", str(workspace), "serve", "--http", f"127.0.0.1:{port}"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        wait_for_port(port, server)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            results = [await client.call_tool(name, arguments) for name, arguments in CALLS]
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert list(tools) == OPERATIONS.names()
    assert all(tools[op.name].output_schema is not None for op in OPERATIONS)
    for (name, arguments), result in zip(CALLS, results, strict=True):
        assert _cli(workspace, name, arguments).stdout == result.content[0].text + "\n", name
        if not result.is_error:
            assert result.structured_content == json.loads(result.content[0].text)
