"""`harness serve` as a real subprocess: stdio with the SDK ClientSession, streamable HTTP in both eras."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from procs import clean_env, free_port, harness_argv, wait_for_port

pytestmark = pytest.mark.anyio


def _cli_text(workspace: Path, name: str, arguments: dict) -> str:
    argv = harness_argv("--workspace", str(workspace), name, "--input", json.dumps(arguments), test_registry=True)
    return subprocess.run(argv, capture_output=True, text=True, env=clean_env()).stdout


async def test_stdio_session_lists_tools_and_matches_the_cli(tmp_path: Path) -> None:
    argv = harness_argv("--workspace", str(tmp_path), "serve", test_registry=True)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=clean_env())
    calls = [
        ("test_echo", {"required_name": "n", "text": "hi"}),
        ("test_fail", {"code": "refused"}),
        ("test_echo", {"bogus": 1}),
        ("nope", {}),
    ]
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.server_info.name == "triage-harness"
        tools = (await session.list_tools()).tools
        assert {t.name for t in tools} == {"test_echo", "test_fail", "test_big"}
        results = [await session.call_tool(name, args) for name, args in calls]
    for (name, args), result in zip(calls, results, strict=True):
        assert _cli_text(tmp_path, name, args) == result.content[0].text + "\n"
    assert results[0].structured_content == json.loads(results[0].content[0].text)
    assert [r.is_error for r in results] == [False, True, True, True]


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", f"127.0.0.1:{port}", test_registry=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp", tmp_path
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_http_both_eras(http_server: tuple[str, Path], mode: str) -> None:
    url, workspace = http_server
    async with Client(url, mode=mode, client_info=types.Implementation(name="e2e", version="1")) as client:
        expected_version = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert client.protocol_version == expected_version
        tools = (await client.list_tools()).tools
        result = await client.call_tool("test_echo", {"required_name": "n", "tags": ["x"]})
        error = await client.call_tool("test_fail", {"code": "not_found"})
    assert {t.name for t in tools} == {"test_echo", "test_fail", "test_big"}
    assert result.content[0].text + "\n" == _cli_text(workspace, "test_echo", {"required_name": "n", "tags": ["x"]})
    assert error.is_error and json.loads(error.content[0].text)["error"]["code"] == "not_found"


def test_http_refuses_a_non_loopback_bind_without_allow_remote(tmp_path: Path) -> None:
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", "0.0.0.0:9", test_registry=True)
    proc = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=30)
    assert proc.returncode == 5
    assert json.loads(proc.stdout)["error"]["code"] == "refused"
    with_flag = subprocess.run([*argv, "--allow-remote"], capture_output=True, text=True, env=clean_env(), timeout=30)
    assert with_flag.returncode == 5
    assert "HARNESS_SERVE_TOKEN" in json.loads(with_flag.stdout)["error"]["message"]


def test_remote_bind_requires_the_bearer_token(tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / "harness.toml").write_text(f'[serve]\nallowed_hosts = ["127.0.0.1:{port}"]\n')
    argv = harness_argv(
        "--workspace", str(tmp_path), "serve", "--http", f"0.0.0.0:{port}", "--allow-remote", test_registry=True
    )
    token = "serve-token-for-tests-0123456789"
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(HARNESS_SERVE_TOKEN=token)
    )
    try:
        wait_for_port(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
        headers = {"accept": "application/json, text/event-stream"}
        assert httpx2.post(url, json=body, headers=headers).status_code == 401
        wrong = httpx2.post(url, json=body, headers={**headers, "authorization": "Bearer nope"})
        assert wrong.status_code == 401
        ok = httpx2.post(url, json=body, headers={**headers, "authorization": f"Bearer {token}"})
        assert ok.status_code != 401
        # RFC 6750: the scheme is case-insensitive; the token and the single separator are not.
        for scheme in ("bearer", "BEARER", "bEaReR"):
            any_case = httpx2.post(url, json=body, headers={**headers, "authorization": f"{scheme} {token}"})
            assert any_case.status_code != 401, scheme
        for refused in (f"Basic {token}", f"Bearer{token}", f"Bearer  {token}", f"Bearer {token.upper()}",
                        f"Bearer {token}x", token, f"Bearer: {token}"):
            response = httpx2.post(url, json=body, headers={**headers, "authorization": refused})
            assert response.status_code == 401, refused
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert token not in err


GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CONFIGURED = "Zk3p9QxV7mN2rT8w"


def test_every_log_line_and_response_of_the_http_server_is_redacted(tmp_path: Path) -> None:
    """Token shapes and a configured secret in Host, Origin, path and a malformed body: the MCP SDK's and uvicorn's
    log records go through the redacting handler, and the transport's own error bodies through the filter."""
    port = free_port()
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", f"127.0.0.1:{port}", test_registry=True)
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(MYAPP_API_KEY=CONFIGURED)
    )
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port, proc)
        statuses = []
        for secret in (GHP, CONFIGURED):
            statuses.append(httpx2.post(f"{base}/mcp", json=ping, headers={**headers, "host": f"x-{secret}"}))
            statuses.append(httpx2.post(f"{base}/mcp", json=ping, headers={**headers, "origin": f"http://{secret}"}))
            statuses.append(httpx2.post(f"{base}/mcp/{secret}", json=ping, headers=headers))
            statuses.append(httpx2.get(f"{base}/{secret}?token={secret}"))
        echo = httpx2.post(f"{base}/mcp", json={**ping, "jsonrpc": CONFIGURED}, headers=headers)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert [r.status_code for r in statuses[:2]] == [403, 403]
    assert echo.status_code == 400 and "[REDACTED:known_secret]" in echo.text
    assert int(echo.headers["content-length"]) == len(echo.content)
    bodies = "".join(r.text for r in [*statuses, echo])
    for secret in (GHP, CONFIGURED):
        assert secret not in err and secret not in bodies
    assert "Host 'x-[REDACTED:" in err and "Origin 'http://[REDACTED:" in err

def _disconnect_mid_request(port: int, session_id: str = "") -> None:
    """Send a POST whose declared body is longer than what is sent, then close the connection."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"'
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body) + 40}\r\n"
    )
    if session_id:
        head += f"mcp-session-id: {session_id}\r\n"
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)


async def test_client_disconnects_leave_no_traceback_on_stderr(tmp_path: Path) -> None:
    port = free_port()
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", f"127.0.0.1:{port}", test_registry=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        wait_for_port(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        initialize = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}
            },
        }
        headers = {"accept": "application/json, text/event-stream"}
        session_id = httpx2.post(url, json=initialize, headers=headers).headers["mcp-session-id"]
        for _ in range(20):
            _disconnect_mid_request(port)
            _disconnect_mid_request(port, session_id)
        time.sleep(0.5)
        async with Client(url, mode="legacy") as client:
            result = await client.call_tool("test_echo", {"required_name": "n"})
        assert not result.is_error
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err
    assert "ClientDisconnect" not in err
    assert "Error handling POST request" not in err


async def test_http_callers_are_recorded_as_local_or_bearer(tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / "harness.toml").write_text(f'[serve]\nallowed_hosts = ["127.0.0.1:{port}"]\n')
    token = "serve-token-for-caller-tests-0123456789"
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", f"127.0.0.1:{port}", "--allow-remote",
                        test_registry=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env(HARNESS_SERVE_TOKEN=token))
    try:
        wait_for_port(port, proc)
        http = httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"})
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(streamable_http_client(url, http_client=http)) as client:
            await client.call_tool("test_echo", {"required_name": "b"}, meta={"harness/conversation_id": "by-bearer"})
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    show = harness_argv("--workspace", str(tmp_path), "ledger", "show", "by-bearer", test_registry=True)
    rows = json.loads(subprocess.run(show, capture_output=True, text=True, env=clean_env()).stdout)["rows"]
    callers = {(r["meta"]["caller"]["principal"], r["meta"]["caller"]["auth_method"]) for r in rows}
    assert callers == {("bearer", "bearer")}
    listed = harness_argv("--workspace", str(tmp_path), "ledger", "list", "--principal", "bearer", test_registry=True)
    calls = json.loads(subprocess.run(listed, capture_output=True, text=True, env=clean_env()).stdout)["calls"]
    assert [c["tool_name"] for c in calls] == ["test_echo"]
