"""Support for the github_actor tests: the fake GitHub's helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
