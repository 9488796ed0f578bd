"""A stalled upstream holds only the open-world tools' own threads: local reads keep answering."""

from __future__ import annotations

import anyio
import pytest
from github_support import FakeGitHub
from mcp import Client

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.mcp_server import build_server
from harness.surface import OPERATIONS
from tests.net.https_server import Reply

pytestmark = pytest.mark.anyio

# More than anyio's default 40 worker threads: before the separate pool, these alone filled it.
STALLED_CALLS = 45


async def test_search_events_answers_while_github_actor_calls_are_stalled(fake_github: FakeGitHub) -> None:
    fake_github.script("/users/stalled", Reply(200, stall_s=60))
    context = build_context(load_settings(Overrides(workspace=fake_github.workspace)))
    finished_github: list[bool] = []
    try:
        async with Client(build_server(OPERATIONS, context)) as client, anyio.create_task_group() as group:

            async def stalled() -> None:
                await client.call_tool("github_actor", {"login": "stalled"})
                finished_github.append(True)

            for _ in range(STALLED_CALLS):
                group.start_soon(stalled)
            # Every stalled call has reached the upstream before the local read starts (8 run, the rest queue).
            with anyio.fail_after(20):
                while len(fake_github.targets()) < 8:
                    await anyio.sleep(0.05)
            result = await client.call_tool("search_events", {"actor": "nobody"})
            # The read answered while every github_actor call was still waiting on the stalled upstream
            # (their own deadline is 15 s away): it did not queue behind them.
            assert finished_github == []
            assert not result.is_error
            # Stopping the upstream ends the stalls, so the held threads come back before the client closes.
            fake_github.server.stop()
            group.cancel_scope.cancel()
    finally:
        fake_github.server.stop()
        context.close()
