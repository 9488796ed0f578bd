"""Host and Origin checks on every bind of a real `harness serve --http`: 403 for initialize, tools calls,
GET and DELETE when either header is foreign; loopback names only on loopback binds, the configured lists
on a remote bind (a second loopback address under --allow-remote stands in for one)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest
from procs import clean_env, free_port, harness_argv, wait_for_port

TOKEN = "serve-token-for-origin-tests-0123456789"
ACCEPT = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}},
}
CALL = {
    "jsonrpc": "2.0", "id": 2, "method": "tools/call",
    "params": {"name": "test_echo", "arguments": {"required_name": "n"}},
}


@dataclass
class Served:
    url: str
    good_host: str
    good_origin: str
    extra: dict[str, str] = field(default_factory=dict)

    def headers(self, host: str, origin: str | None = None, session: str = "") -> dict[str, str]:
        headers = {**ACCEPT, **self.extra, "host": host}
        if origin is not None:
            headers["origin"] = origin
        if session:
            headers["mcp-session-id"] = session
        return headers

    def open_session(self) -> str:
        reply = httpx2.post(self.url, json=INITIALIZE, headers=self.headers(self.good_host, self.good_origin))
        assert reply.status_code == 200, reply.text
        session = reply.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        reply = httpx2.post(self.url, json=note, headers=self.headers(self.good_host, session=session))
        assert reply.status_code == 202
        return session


def _serve(workspace: Path, bind: str, connect: str, port: int, *extra: str, env: dict[str, str] | None = None):
    argv = harness_argv("--workspace", str(workspace), "serve", "--http", f"{bind}:{port}", *extra, test_registry=True)
    env = clean_env(**(env or {}))
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wait_for_port(port, proc, host=connect)
    return proc


LOOPBACK_BINDS = [
    ("127.0.0.1", "127.0.0.1"),
    ("127.0.0.2", "127.0.0.2"),
    ("::1", "::1"),
    ("0:0:0:0:0:0:0:1", "::1"),
    ("localhost", "127.0.0.1"),
]


@pytest.fixture(params=[*LOOPBACK_BINDS, ("remote", "127.0.0.2")], ids=lambda p: p[0])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    bind, connect = request.param
    port = free_port()
    shown = f"[{connect}]" if ":" in connect else connect
    if bind == "remote":
        (tmp_path / "harness.toml").write_text(
            f'[serve]\nallowed_hosts = ["harness.test:{port}", "127.0.0.2:{port}"]\n'
            'allowed_origins = ["https://agents.test"]\n'
        )
        proc = _serve(tmp_path, "127.0.0.2", connect, port, "--allow-remote", env={"HARNESS_SERVE_TOKEN": TOKEN})
        served = Served(f"http://{shown}:{port}/mcp", f"harness.test:{port}", "https://agents.test",
                        {"authorization": f"Bearer {TOKEN}"})
    else:
        proc = _serve(tmp_path, bind, connect, port)
        served = Served(f"http://{shown}:{port}/mcp", f"{shown}:{port}", f"http://localhost:{port}")
    try:
        yield served
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err


FOREIGN_HOSTS = ["evil.test", "evil.test:80", "127.0.0.1.evil.test", "localhost.evil.test", "", "[::2]"]
FOREIGN_ORIGINS = ["http://evil.test", "https://evil.test:443", "null", "http://127.0.0.1.evil.test", "file://"]


def test_foreign_host_or_origin_is_403_for_every_method(served: Served) -> None:
    session = served.open_session()
    requests = [
        ("POST", INITIALIZE, ""),
        ("POST", CALL, session),
        ("GET", None, session),
        ("DELETE", None, session),
    ]
    bad_pairs = [(host, served.good_origin) for host in FOREIGN_HOSTS]
    bad_pairs += [(served.good_host, origin) for origin in FOREIGN_ORIGINS]
    for method, body, sid in requests:
        for host, origin in bad_pairs:
            reply = httpx2.request(
                method, served.url, json=body, headers=served.headers(host, origin, sid), timeout=5
            )
            assert reply.status_code == 403, (method, host, origin, reply.status_code)
            assert reply.json()["error"].startswith("forbidden")
    # The refused DELETE did not end the session: a tool call with allowed headers still works on it.
    reply = httpx2.post(served.url, json=CALL, headers=served.headers(served.good_host, served.good_origin, session))
    assert reply.status_code == 200 and '"text"' in reply.text
    # No Origin at all is what agents and CLIs send: accepted.
    reply = httpx2.post(served.url, json=CALL, headers=served.headers(served.good_host, None, session))
    assert reply.status_code == 200


def test_loopback_binds_accept_every_loopback_spelling(tmp_path: Path) -> None:
    port = free_port()
    # 20 sessions from one address: more than the default burst of new sessions.
    (tmp_path / "harness.toml").write_text("[serve]\nsession_burst = 100\n")
    proc = _serve(tmp_path, "127.0.0.2", "127.0.0.2", port)
    try:
        url = f"http://127.0.0.2:{port}/mcp"
        for host in (f"127.0.0.2:{port}", f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "LOCALHOST"):
            for origin in (None, "http://127.0.0.1:3000", "https://localhost", "http://[::1]:8080"):
                headers = {**ACCEPT, "host": host, **({"origin": origin} if origin else {})}
                reply = httpx2.post(url, json=INITIALIZE, headers=headers)
                assert reply.status_code == 200, (host, origin, reply.text)
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_remote_bind_refuses_loopback_names_it_was_not_given(tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / "harness.toml").write_text(f'[serve]\nallowed_hosts = ["harness.test:{port}"]\n')
    proc = _serve(tmp_path, "127.0.0.2", "127.0.0.2", port, "--allow-remote", env={"HARNESS_SERVE_TOKEN": TOKEN})
    try:
        url = f"http://127.0.0.2:{port}/mcp"
        auth = {"authorization": f"Bearer {TOKEN}"}
        for host in (f"127.0.0.2:{port}", f"localhost:{port}", f"harness.test:{port + 1}"):
            assert httpx2.post(url, json=INITIALIZE, headers={**ACCEPT, **auth, "host": host}).status_code == 403
        # Host is checked before the token: a foreign Host without a token is 403, not 401.
        assert httpx2.post(url, json=INITIALIZE, headers={**ACCEPT, "host": "evil.test"}).status_code == 403
        assert httpx2.post(url, json=INITIALIZE, headers={**ACCEPT, "host": f"harness.test:{port}"}).status_code == 401
        ok = httpx2.post(url, json=INITIALIZE, headers={**ACCEPT, **auth, "host": f"HARNESS.test:{port}"})
        assert ok.status_code == 200
        # An empty allowed_origins refuses every Origin a browser could send.
        with_origin = {**ACCEPT, **auth, "host": f"harness.test:{port}", "origin": "https://harness.test"}
        assert httpx2.post(url, json=INITIALIZE, headers=with_origin).status_code == 403
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_allow_remote_refuses_to_start_without_allowed_hosts(tmp_path: Path) -> None:
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", "127.0.0.2:9", "--allow-remote",
                        test_registry=True)
    proc = subprocess.run(argv, capture_output=True, text=True, env=clean_env(HARNESS_SERVE_TOKEN=TOKEN), timeout=30)
    assert proc.returncode == 5
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "refused" and "[serve] allowed_hosts" in error["message"]


def _check(workspace: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    argv = harness_argv("--workspace", str(workspace), "serve", "--check", *args, test_registry=True)
    proc = subprocess.run(argv, capture_output=True, text=True, env=clean_env(**(env or {})), timeout=30)
    return proc.returncode, json.loads(proc.stdout)


def test_serve_check_prints_the_effective_configuration(tmp_path: Path) -> None:
    code, loopback = _check(tmp_path, "--http", "127.0.0.1:8765", "--toolsets", "investigate")
    assert code == 0 and loopback["ok"] is True and loopback["problems"] == []
    assert loopback["serve"] == {
        "transport": "http",
        "bind": {"host": "127.0.0.1", "port": 8765, "remote": False, "url": "http://127.0.0.1:8765/mcp"},
        "allowed_hosts": ["(loopback names only)"],
        "allowed_origins": ["(loopback origins only)"],
        "auth": {"mode": "none", "bearer_token_set": False, "issuer": "", "audience": "", "jwks_url": "",
                 "leeway_s": 0},
        "limits": {"session_idle_timeout_s": 300, "max_sessions": 1000, "open_world_threads": 8,
                   "rate_per_minute": 600, "burst": 60, "max_concurrent_calls": 8,
                   "sessions_per_minute": 30, "session_burst": 10, "max_sessions_per_caller": 20},
        "toolsets": ["investigate"],
    }
    (tmp_path / "harness.toml").write_text('[serve]\nallowed_hosts = ["harness.test"]\n')
    code, remote = _check(tmp_path, "--http", "0.0.0.0:8765", "--allow-remote", env={"HARNESS_SERVE_TOKEN": TOKEN})
    assert code == 0 and remote["serve"]["bind"]["remote"] is True
    assert remote["serve"]["allowed_hosts"] == ["harness.test"]
    assert remote["serve"]["auth"]["mode"] == "bearer" and remote["serve"]["auth"]["bearer_token_set"] is True


def test_serve_check_exits_non_zero_on_an_unsafe_configuration(tmp_path: Path) -> None:
    code, report = _check(tmp_path, "--http", "0.0.0.0:8765")
    assert code == 5 and report["ok"] is False
    assert report["problems"] == [
        "refusing to bind 0.0.0.0: a non-loopback address needs --allow-remote",
        "a remote bind needs [serve] allowed_hosts: the Host values its clients use",
        '--allow-remote needs a bearer token in HARNESS_SERVE_TOKEN (or [serve] auth = "oauth")',
    ]
    code, report = _check(tmp_path, "--http", "127.0.0.2:8765", "--allow-remote", env={"HARNESS_SERVE_TOKEN": TOKEN})
    assert code == 5
    assert report["problems"] == ["a remote bind needs [serve] allowed_hosts: the Host values its clients use"]
    # A configuration error is invalid_input naming the key, as for every command.
    (tmp_path / "harness.toml").write_text('[serve]\nauth = "none"\n')
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--check", test_registry=True)
    proc = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=30)
    assert proc.returncode == 2 and "[serve] auth" in json.loads(proc.stdout)["error"]["message"]


def test_idle_sessions_close_and_the_session_cap_answers_503(tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / "harness.toml").write_text("[serve]\nsession_idle_timeout_s = 10\nmax_sessions = 2\n")
    proc = _serve(tmp_path, "127.0.0.1", "127.0.0.1", port)
    try:
        served = Served(f"http://127.0.0.1:{port}/mcp", f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")
        first, _second = served.open_session(), served.open_session()
        full = httpx2.post(served.url, json=INITIALIZE, headers=served.headers(served.good_host))
        assert full.status_code == 503
        time.sleep(11)
        expired = httpx2.post(served.url, json=CALL, headers=served.headers(served.good_host, session=first))
        assert expired.status_code == 404
        # The idle sessions are gone, so there is room again.
        served.open_session()
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


@pytest.mark.anyio
async def test_a_caller_over_its_rate_gets_a_tool_error_with_a_retry_hint(tmp_path: Path) -> None:
    from mcp import Client

    port = free_port()
    (tmp_path / "harness.toml").write_text("[serve]\nrate_per_minute = 1\nburst = 2\n")
    proc = _serve(tmp_path, "127.0.0.1", "127.0.0.1", port)
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client:
            results = [await client.call_tool("test_echo", {"required_name": "r"}) for _ in range(3)]
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert [r.is_error for r in results] == [False, False, True]
    error = json.loads(results[2].content[0].text)["error"]
    assert error["code"] == "refused" and error["message"].endswith("retry after 60 s")
    argv = harness_argv("--workspace", str(tmp_path), "ledger", "list", test_registry=True)
    listed = json.loads(subprocess.run(argv, capture_output=True, text=True, env=clean_env()).stdout)["calls"]
    assert len(listed) == 2  # the refused call is a log line, not a row
