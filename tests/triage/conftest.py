"""Fixtures for the triage tests: the fake AUR of docs/triage.md §16.1, its workspace, and fp_agent_verify through both doors."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
import trustme
from mcp import Client
from runners import run_cli

from harness.config import Overrides, load_settings
from harness.context import Context, build_context
from harness.mcp_server import build_server
from harness.surface import OPERATIONS
from tests.net.https_server import HttpsServer
from tests.triage.fake_aur import FakeAur


@pytest.fixture(scope="session")
def aur_ca() -> trustme.CA:
    """The CA the fake AUR's certificate comes from."""
    return trustme.CA()


@pytest.fixture
def fake_aur(tmp_path: Path, aur_ca: trustme.CA, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAur]:
    """A started fake AUR (no packages yet) and a workspace whose harness.toml points at it (CA copied in)."""
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with HttpsServer(aur_ca) as server:
        shutil.copy(server.ca_file, workspace / "aur-ca.pem")
        yield FakeAur(server, tmp_path / "aur", workspace)


@dataclass
class Answer:
    """One fp_agent_verify call as a front door answered it; `exit_code` is None on MCP."""

    document: dict[str, Any]
    text: str
    is_error: bool
    exit_code: int | None


Door = Callable[..., Answer]


def call_cli(workspace: Path, verdict: dict[str, Any] | str, **_: Any) -> Answer:
    """`harness --workspace W fp_agent_verify --verdict FILE` in-process; a str verdict is written verbatim."""
    path = workspace / "verdict.json"
    path.write_text(verdict if isinstance(verdict, str) else json.dumps(verdict, indent=2))
    result = run_cli(["--workspace", str(workspace), "fp_agent_verify", "--verdict", str(path)])
    return Answer(result.json(), result.stdout.rstrip("\n"), result.exit_code != 0, result.exit_code)


def call_mcp(workspace: Path, verdict: Any, *, prepare: Callable[[Context], None] | None = None) -> Answer:
    """One tools/call over the SDK's in-memory client; `prepare` may register services on the context first."""
    context = build_context(load_settings(Overrides(workspace=workspace)))
    if prepare is not None:
        prepare(context)

    async def run() -> Any:
        async with Client(build_server(OPERATIONS, context)) as client:
            return await client.call_tool("fp_agent_verify", {"verdict": verdict})

    try:
        answer = anyio.run(run)
    finally:
        context.close()
    (content,) = answer.content
    document = json.loads(content.text)
    if not answer.is_error:
        assert answer.structured_content == document
    return Answer(document, content.text, answer.is_error, None)


@pytest.fixture(params=["cli", "mcp"])
def door(request: pytest.FixtureRequest) -> Door:
    """Each test using it runs once per front door."""
    return call_cli if request.param == "cli" else call_mcp


@pytest.fixture
def both_doors() -> Callable[[Path, dict[str, Any]], Answer]:
    """Call through the CLI and MCP, assert byte parity, and return the CLI answer."""

    def call(workspace: Path, verdict: dict[str, Any]) -> Answer:
        cli = call_cli(workspace, verdict)
        mcp = call_mcp(workspace, verdict)
        assert cli.text == mcp.text
        assert cli.is_error == mcp.is_error
        return cli

    return call
