"""A stalled upstream holds only its own tool's capacity: with every thread and every in-flight place of
github_actor taken by calls waiting on a loopback listener that never answers the TLS handshake, a search_events
of the same caller still runs, and a further github_actor call is refused for its own lane only."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from runners import run_cli

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.mcp_server import build_server
from harness.serve.limits import CallerLimits
from harness.surface import OPERATIONS

STALLED = 2  # github_actor threads and in-flight places per caller, all taken by the stall

EVENT = {"id": "e-1", "source": "okta", "type": "login", "actor": "alice", "timestamp": "2025-01-01T00:00:00Z"}


class Stalled:
    """Accepts connections and never sends a byte; `accepted` is set once `count` connections are held."""

    def __init__(self, count: int) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.accepted = threading.Event()
        self._count = count
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)
            if len(self.held) >= self._count:
                self.accepted.set()

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def stalled() -> Iterator[Stalled]:
    upstream = Stalled(STALLED)
    yield upstream
    upstream.close()


@pytest.fixture
def workspace(tmp_path: Path, stalled: Stalled) -> Path:
    workspace = tmp_path / "W"
    assert run_cli(["--workspace", str(workspace), "init", "--empty"]).exit_code == 0
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps(EVENT) + "\n")
    assert run_cli(["--workspace", str(workspace), "ingest", "events", str(events)]).exit_code == 0
    (workspace / "harness.toml").write_text(f'[github]\napi_url = "https://127.0.0.1:{stalled.port}"\n')
    return workspace


async def _beside_the_stall(workspace: Path, stalled: Stalled) -> tuple[dict, str]:
    context = build_context(load_settings(Overrides(workspace=workspace)))
    limits = CallerLimits(60_000, 1_000, STALLED)
    server = build_server(OPERATIONS, context, transport="http", open_world_threads=STALLED, limits=limits)
    try:
        async with Client(server) as client, anyio.create_task_group() as tg:
            for n in range(STALLED):
                tg.start_soon(client.call_tool, "github_actor", {"login": f"stalled-{n}"})
            # Every github_actor thread is now inside a handshake that will not finish before its deadline.
            await anyio.to_thread.run_sync(stalled.accepted.wait)
            refused = await client.call_tool("github_actor", {"login": "one-more"})
            search = await client.call_tool("search_events", {"actor": "alice"})
            tg.cancel_scope.cancel()
    finally:
        context.close()
    assert refused.is_error
    assert not search.is_error, search.content[0].text
    return search.structured_content or {}, json.loads(refused.content[0].text)["error"]["message"]


def test_search_events_runs_while_github_actor_capacity_is_all_stalled(workspace: Path, stalled: Stalled) -> None:
    document, refusal = anyio.run(_beside_the_stall, workspace, stalled)
    assert [event["id"] for event in document["events"]] == ["e-1"]
    assert refusal == f"too many calls of github_actor in flight for this caller (at most {STALLED}); retry after 1 s"
    assert len(stalled.held) == STALLED  # the refused call never reached the upstream
