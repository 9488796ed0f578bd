"""The MCP side of the test agents (docs/eval.md): the official SDK client over streamable HTTP with the bearer
token `harness eval run` hands the agent in its environment."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

CLIENT = types.Implementation(name="harness-eval-agent", version="1")


@asynccontextmanager
async def connect() -> AsyncIterator[Client]:
    """A session with the scenario's server (HARNESS_EVAL_URL, HARNESS_EVAL_TOKEN)."""
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {os.environ['HARNESS_EVAL_TOKEN']}"})
    async with http, Client(streamable_http_client(os.environ["HARNESS_EVAL_URL"], http_client=http),
                            client_info=CLIENT) as client:
        yield client


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """One tools/call: whether it was an error, and the JSON document of its text."""
    answer = await client.call_tool(name, arguments)
    (content,) = answer.content
    return bool(answer.is_error), json.loads(content.text)
