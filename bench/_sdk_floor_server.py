"""The MCP SDK's own floor for a tool call (issue 11 goal 1): a bare low-level SDK server over stdio with one tool
that answers a fixed result, with the schemas and the result a real harness server gave for that tool.

It does what every SDK tool call costs and nothing the harness adds (no dispatch, no ledger, no redaction): the
request is parsed and validated against the input schema, the handler hops to a worker thread as the harness's
does, and the result goes out as text plus structured content that the client validates against the output
schema. Run by bench/investigate_bench.py as `python bench/_sdk_floor_server.py SPEC.json`, where SPEC holds
{"tool", "input_schema", "output_schema", "result"}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def build(spec: dict[str, Any]) -> Server[Any]:
    name, result = spec["tool"], spec["result"]
    text = json.dumps(result, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    tool = types.Tool(name=name, input_schema=spec["input_schema"], output_schema=spec["output_schema"])

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        await anyio.to_thread.run_sync(lambda: None)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=result)

    return Server("sdk-floor", version="1", on_list_tools=list_tools, on_call_tool=call_tool,
                  get_tool_input_schema={name: spec["input_schema"]}.get)


async def serve(spec: dict[str, Any]) -> None:
    server = build(spec)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve, json.loads(Path(sys.argv[1]).read_text()))
