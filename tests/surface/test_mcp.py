"""The MCP front door over the SDK's in-memory client in both protocol eras."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.dispatch import CallRecord, NullRecorder, Outcome
from harness.errors import LedgerUnavailable
from harness.mcp_server import build_server

pytestmark = pytest.mark.anyio

MODES = ["2026-07-28", "legacy"]


@pytest.fixture
def context(workspace: Path):
    return build_context(load_settings(Overrides(workspace=workspace)))


class SpyRecorder(NullRecorder):
    """Keeps what the dispatcher hands to the ledger seam."""

    def __init__(self) -> None:
        self.records: list[tuple[str, CallRecord, Outcome | None]] = []

    def begin(self, record: CallRecord) -> None:
        self.records.append(("begin", record, None))

    def finish(self, record: CallRecord, outcome: Outcome, duration_ms: int, exit_code: int | None) -> None:
        self.records.append(("finish", record, outcome))

    def refuse(self, record: CallRecord, outcome: Outcome, exit_code: int | None) -> None:
        self.records.append(("refuse", record, outcome))


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_has_schemas_and_annotations(context, mode: str) -> None:
    from testops import REGISTRY

    async with Client(build_server(REGISTRY, context), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == set(REGISTRY.names())
    echo = tools["test_echo"]
    assert echo.input_schema["additionalProperties"] is False
    assert echo.input_schema["required"] == ["required_name"]
    assert echo.output_schema is not None and "text" in echo.output_schema["properties"]
    assert echo.annotations.read_only_hint is True
    assert echo.annotations.destructive_hint is False
    assert echo.annotations.open_world_hint is False
    assert echo.description == "Echo the input back (test only)."


@pytest.mark.parametrize("mode", MODES)
async def test_success_has_text_and_equal_structured_content(context, mode: str) -> None:
    from testops import REGISTRY

    async with Client(build_server(REGISTRY, context), mode=mode) as client:
        result = await client.call_tool("test_echo", {"required_name": "n", "text": "hi"})
    assert result.is_error is False
    (content,) = result.content
    assert content.text == '{"count":1,"loud":false,"meta":{},"name":"n","notes":"","tags":[],"text":"hi"}'
    assert result.structured_content == json.loads(content.text)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [
        ("test_fail", {"code": "not_found"}, "not_found"),
        ("test_fail", {"code": "refused"}, "refused"),
        ("test_fail", {"code": "upstream_unavailable"}, "upstream_unavailable"),
        ("test_fail", {"code": "internal_error"}, "internal_error"),
        ("test_echo", {"required_name": "n", "count": "1"}, "invalid_input"),
        ("test_echo", {"required_name": "n", "unknown": 1}, "invalid_input"),
        ("no_such_tool", {}, "unknown_operation"),
    ],
)
async def test_errors_are_tool_errors_without_structured_content(context, mode, name, arguments, code) -> None:
    from testops import REGISTRY

    async with Client(build_server(REGISTRY, context), mode=mode) as client:
        result = await client.call_tool(name, arguments)
    assert result.is_error is True
    assert result.structured_content is None
    (content,) = result.content
    assert json.loads(content.text)["error"]["code"] == code


async def test_ledger_unavailable_refuses_before_the_handler(context) -> None:
    from testops import REGISTRY

    class Broken(NullRecorder):
        def begin(self, record: CallRecord) -> None:
            raise LedgerUnavailable("ledger is locked")

    async with Client(build_server(REGISTRY, context, recorder=Broken())) as client:
        result = await client.call_tool("test_fail", {"code": "refused"})
    assert result.is_error is True
    assert json.loads(result.content[0].text) == {
        "error": {"code": "ledger_unavailable", "message": "ledger is locked", "operation": "test_fail"}
    }


async def test_toolset_subset_lists_and_allows_only_its_tools(context) -> None:
    from testops import REGISTRY

    subset = REGISTRY.subset(["investigate"])
    async with Client(build_server(subset, context)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        refused = await client.call_tool("test_fail", {"code": "refused"})
    assert names == {"test_echo", "test_big"}
    assert json.loads(refused.content[0].text)["error"]["code"] == "unknown_operation"


async def test_call_context_conversation_rules(context) -> None:
    from testops import REGISTRY

    spy = SpyRecorder()
    server = build_server(REGISTRY, context, recorder=spy, transport="stdio")
    async with Client(server, client_info=types.Implementation(name="agent-x", version="9")) as client:
        await client.call_tool("test_echo", {"required_name": "a"}, meta={"harness/conversation_id": "conv-7"})
        await client.call_tool("test_echo", {"required_name": "b"})
        await client.call_tool("test_echo", {"required_name": "c"})
    begins = [record for kind, record, _ in spy.records if kind == "begin"]
    first, second, third = (record.call for record in begins)
    assert (first.conversation_id, first.conversation_source) == ("conv-7", "meta")
    assert second.conversation_source == "process"
    assert second.conversation_id == third.conversation_id != "conv-7"
    assert first.surface == "mcp" and first.transport == "stdio"
    assert first.client_name == "agent-x" and first.client_version == "9"
    assert len({c.tool_call_id for c in (first, second, third)}) == 3
    assert begins[0].arguments == '{"required_name":"a"}'


async def test_refused_calls_reach_the_recorder(context) -> None:
    from testops import REGISTRY

    spy = SpyRecorder()
    async with Client(build_server(REGISTRY, context, recorder=spy)) as client:
        await client.call_tool("nope", {})
        await client.call_tool("test_echo", {"bad": 1})
    kinds = [kind for kind, _, _ in spy.records]
    assert kinds == ["refuse", "refuse"]
    outcomes: list[Any] = [outcome.error_code for _, _, outcome in spy.records]
    assert outcomes == ["unknown_operation", "invalid_input"]


@pytest.mark.parametrize("mode", MODES)
async def test_no_result_or_error_echoes_a_configured_secret(workspace: Path, monkeypatch, mode: str) -> None:
    from testops import FULL_REGISTRY

    secret = "Zk3p9QxV7mN2rT8w"
    monkeypatch.setenv("MYAPP_API_KEY", secret)
    context = build_context(load_settings(Overrides(workspace=workspace)))
    calls = [
        ("search_events", {"since": secret}),
        ("search_events", {"limit": secret}),
        (secret, {"x": secret}),
        ("test_fail", {"code": "refused", "message": secret}),
        ("test_echo", {"required_name": "n", "text": secret, "meta": {secret: secret}}),
    ]
    async with Client(build_server(FULL_REGISTRY, context), mode=mode) as client:
        results = [await client.call_tool(name, arguments) for name, arguments in calls]
    for result in results:
        dumped = result.model_dump_json()
        assert secret not in dumped
        assert "[REDACTED:known_secret]" in dumped
    assert [r.is_error for r in results] == [True, True, True, True, False]
    assert results[4].structured_content["meta"] == {"[REDACTED:known_secret]": "[REDACTED:known_secret]"}
