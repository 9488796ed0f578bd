"""Hard per-caller limits of a real `harness serve --http`: open sessions per peer address (loopback without
auth), refused with 429 before a session exists, and connections that send nothing closed."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from procs import clean_env, free_port, harness_argv, wait_for_port

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}},
}
ACCEPT = {"accept": "application/json, text/event-stream"}


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen]]:
    port = free_port()
    (tmp_path / "harness.toml").write_text("[serve]\nmax_sessions_per_caller = 3\nsession_burst = 50\n")
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", f"127.0.0.1:{port}", test_registry=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        wait_for_port(port, proc)
        yield port, proc
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def _from(address: str) -> httpx2.Client:
    return httpx2.Client(transport=httpx2.HTTPTransport(local_address=address))


async def test_open_sessions_are_capped_per_peer_and_others_keep_working(capped: tuple[int, subprocess.Popen]) -> None:
    port, _ = capped
    url = f"http://127.0.0.1:{port}/mcp"
    with _from("127.0.0.1") as flooder:
        answers = [flooder.post(url, json=INITIALIZE, headers=ACCEPT) for _ in range(8)]
        assert [a.status_code for a in answers] == [200] * 3 + [429] * 5, [a.text for a in answers]
        refused = answers[-1]
        assert refused.headers["retry-after"] == "10"
        assert refused.json()["error"].startswith("too many new sessions: at most 3 open sessions per caller")
        # Another address is another caller: it opens a session and calls a tool through the SDK client.
        http = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(local_address="127.0.0.2"))
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            result = await client.call_tool("test_echo", {"required_name": "still here"})
        assert not result.is_error
        # A session ended by DELETE frees its place.
        session = answers[0].headers["mcp-session-id"]
        ended = flooder.delete(url, headers={**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"})
        assert ended.status_code == 200
        assert flooder.post(url, json=INITIALIZE, headers=ACCEPT).status_code == 200
        assert flooder.post(url, json=INITIALIZE, headers=ACCEPT).status_code == 429


@pytest.fixture
def idling(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    (tmp_path / "harness.toml").write_text(
        "[serve]\nmax_sessions_per_caller = 2\nsession_burst = 100\nsession_idle_timeout_s = 10\n"
    )
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", f"127.0.0.1:{port}", test_registry=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        wait_for_port(port, proc)
        yield port
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


@pytest.mark.slow
def test_a_session_that_idles_out_frees_its_place(idling: int) -> None:
    url = f"http://127.0.0.1:{idling}/mcp"
    with httpx2.Client() as http:
        held = [http.post(url, json=INITIALIZE, headers=ACCEPT) for _ in range(2)]
        assert [a.status_code for a in held] == [200, 200]
        assert http.post(url, json=INITIALIZE, headers=ACCEPT).status_code == 429
        # Nothing is sent on the held sessions: the transport ends them after session_idle_timeout_s (10 s).
        deadline = time.monotonic() + 40
        while (answer := http.post(url, json=INITIALIZE, headers=ACCEPT)).status_code == 429:
            assert time.monotonic() < deadline, "no place was freed by the idle timeout"
            time.sleep(1)
        assert answer.status_code == 200
        ended = {**ACCEPT, "mcp-session-id": held[0].headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        assert http.delete(url, headers=ended).status_code == 404  # ended by the idle timeout, not by us


def _closed_after(sock: socket.socket, trickle: bytes = b"") -> float:
    """Seconds until the server closes `sock` (sending one byte of `trickle` a second meanwhile)."""
    start = time.monotonic()
    sock.settimeout(1.0)
    for byte in [trickle[i:i + 1] for i in range(len(trickle))] or [b""] * 30:
        if byte:
            try:
                sock.sendall(byte)
            except OSError:
                return time.monotonic() - start
        try:
            if sock.recv(4096) == b"":
                return time.monotonic() - start
        except TimeoutError:
            continue
        except OSError:
            return time.monotonic() - start
    return float("inf")


def test_silent_trickling_and_slow_body_connections_are_closed(capped: tuple[int, subprocess.Popen]) -> None:
    port, _ = capped
    silent = socket.create_connection(("127.0.0.1", port))
    assert 9 <= _closed_after(silent) <= 13  # HEADER_TIMEOUT_S = 10
    trickling = socket.create_connection(("127.0.0.1", port))
    assert 9 <= _closed_after(trickling, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 40) <= 13
    with socket.create_connection(("127.0.0.1", port)) as slow_body:
        slow_body.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 100\r\n\r\n{\"jsonrpc\"")
        slow_body.settimeout(15)
        start = time.monotonic()
        answer = slow_body.recv(4096)
        assert 9 <= time.monotonic() - start <= 13  # BODY_TIMEOUT_S = 10
        while chunk := slow_body.recv(4096):  # the head and the body may arrive apart; the server then closes
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408 ") and b"request body not complete within 10 s" in answer
