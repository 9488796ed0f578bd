"""The ledger view of a real `harness serve --http` in bearer mode (a browser signs in once and holds a cookie that
opens the view and nothing else), and `harness ui` serving the view alone on loopback."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from procs import clean_env, free_port, harness_argv, wait_for_port

TOKEN = "serve-token-for-ui-tests-0123456789abcdef"


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    # A browser's form posts carry the view's own origin, which a remote bind accepts only when listed.
    (tmp_path / "harness.toml").write_text(
        f'[serve]\nallowed_hosts = ["127.0.0.2:{port}"]\nallowed_origins = ["http://127.0.0.2:{port}"]\n'
    )
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", f"127.0.0.2:{port}", "--allow-remote",
                        test_registry=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env(HARNESS_SERVE_TOKEN=TOKEN))
    try:
        wait_for_port(port, proc, host="127.0.0.2")
        yield f"http://127.0.0.2:{port}"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err and TOKEN not in err


def test_a_browser_signs_in_once_and_the_cookie_opens_only_the_view(remote: str) -> None:
    with httpx2.Client(base_url=remote) as client:
        reply = client.get("/ui/")
        assert reply.status_code == 303 and reply.headers["location"] == "/ui/login"
        form = client.get("/ui/login")
        assert form.status_code == 200 and 'action="/ui/login"' in form.text
        assert client.get("/ui/static/ui.css").status_code == 200
        origin = {"origin": remote}
        wrong = client.post("/ui/login", data={"token": "not-the-token"}, headers=origin)
        assert wrong.status_code == 303 and wrong.headers["location"] == "/ui/login?failed=1"
        assert "set-cookie" not in wrong.headers
        foreign = client.post("/ui/login", data={"token": TOKEN}, headers={"origin": "https://evil.test"})
        assert foreign.status_code == 403 and "set-cookie" not in foreign.headers
        right = client.post("/ui/login", data={"token": TOKEN}, headers=origin)
        assert right.status_code == 303 and right.headers["location"] == "/ui/"
        cookie = right.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/ui/" in cookie
        assert TOKEN not in cookie
        value = cookie.split(";", 1)[0].split("=", 1)[1]
        client.cookies.clear()  # each request below says exactly which credential it carries
        jar = {"cookie": f"harness_ui={value}"}
        page = client.get("/ui/", headers=jar)
        assert page.status_code == 200 and "<h1>Conversations</h1>" in page.text
        # The cookie is not a bearer credential for MCP, nor for a wrong value.
        assert client.post("/mcp", json={}, headers=jar).status_code == 401
        assert client.get("/ui/", headers={"cookie": "harness_ui=" + "0" * 64}).status_code == 303
        assert client.get("/ui/", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert client.get("/ui/", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert client.post("/ui/verify", headers=origin).status_code == 401


def test_harness_ui_serves_the_view_on_loopback_only(tmp_path: Path) -> None:
    env = clean_env()
    init = subprocess.run(harness_argv("--workspace", str(tmp_path), "init"), capture_output=True, text=True, env=env)
    assert init.returncode == 0, init.stderr
    refused = subprocess.run(harness_argv("--workspace", str(tmp_path), "ui", "--http", "0.0.0.0:8766"),
                             capture_output=True, text=True, env=env)
    assert refused.returncode == 5 and "loopback only" in refused.stdout + refused.stderr
    port = free_port()
    proc = subprocess.Popen(harness_argv("--workspace", str(tmp_path), "ui", "--http", f"127.0.0.1:{port}"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_for_port(port, proc)
        page = httpx2.get(f"http://127.0.0.1:{port}/ui/")
        assert page.status_code == 200 and page.text.count('class="conversation"') == 1  # init's own call
        assert httpx2.get(f"http://127.0.0.1:{port}/mcp").status_code == 404
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert f"ledger view at http://127.0.0.1:{port}/ui/" in err
