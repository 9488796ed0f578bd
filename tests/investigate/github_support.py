"""Support for the github_actor tests: the fake GitHub's helpers and calls through the CLI and MCP front doors."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from runners import run_cli

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.mcp_server import build_server
from harness.surface import OPERATIONS
from tests.net.https_server import HttpsServer, Reply

JSON_HEADERS = [("Content-Type", "application/json; charset=utf-8")]


def json_reply(value: Any, status: int = 200) -> Reply:
    """A JSON answer as GitHub sends it."""
    return Reply(status, headers=JSON_HEADERS, body=json.dumps(value).encode("utf-8"))


@dataclass
class FakeGitHub:
    """A loopback GitHub API and a workspace whose harness.toml points at it."""

    server: HttpsServer
    workspace: Path

    def script(self, path: str, *replies: Reply) -> None:
        """Serve `replies` for the raw request path (percent-encoding as sent)."""
        self.server.script(path, *replies)

    def targets(self) -> list[str]:
        """Raw request targets received so far."""
        return self.server.targets()

    def configure(self, **github: str) -> None:
        """Rewrite the workspace's `[github]` section with these keys."""
        lines = ["[github]", *(f"{key} = {json.dumps(value)}" for key, value in github.items())]
        (self.workspace / "harness.toml").write_text("\n".join(lines) + "\n")


@dataclass
class Result:
    """One call's answer as a front door gave it; `exit_code` is None on MCP."""

    document: dict[str, Any]
    text: str
    is_error: bool
    exit_code: int | None
    stderr: str


Door = Callable[..., Result]


def call_cli(workspace: Path, arguments: dict[str, Any]) -> Result:
    """`harness --workspace W github_actor --login X` in-process."""
    args = ["--workspace", str(workspace), "github_actor"]
    if set(arguments) == {"login"}:
        args += ["--login", arguments["login"]]
    else:
        args += ["--input", json.dumps(arguments)]
    result = run_cli(args)
    return Result(result.json(), result.stdout.rstrip("\n"), result.exit_code != 0, result.exit_code, result.stderr)


def call_mcp(workspace: Path, arguments: dict[str, Any]) -> Result:
    """One tools/call over the SDK's in-memory client, with a context built as `harness serve` builds it."""
    context = build_context(load_settings(Overrides(workspace=workspace)))

    async def run() -> Any:
        async with Client(build_server(OPERATIONS, context)) as client:
            return await client.call_tool("github_actor", arguments)

    try:
        answer = anyio.run(run)
    finally:
        context.close()
    (content,) = answer.content
    document = json.loads(content.text)
    if not answer.is_error:
        assert answer.structured_content == document
    return Result(document, content.text, answer.is_error, None, "")


