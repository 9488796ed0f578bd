"""The span and metric attributes of one call (pure): the MCP semantic conventions plus the ledger's identifiers.

The names under `harness.` are this project's own (README "Tracing"). Nothing the caller sent is exported except
through the ledger rows, which hold the redacted, capped form (docs/ledger.md); call content only with `content`.
"""

from __future__ import annotations

from typing import Any

METHOD = "tools/call"
OPERATION = "execute_tool"
TOOL_ERROR = "tool_error"
# The name a call to an operation that does not exist is exported under: the requested name is the caller's text
# (the ledger keeps it, redacted) and would give the metric one series per made-up name.
UNKNOWN_TOOL = "_unknown_operation"
# The MCP semantic conventions' transports: stdio is a pipe, streamable HTTP runs over TCP.
NETWORK_TRANSPORT = {"stdio": "pipe", "http": "tcp"}

CONVERSATION_ID = "harness.conversation_id"
CHAIN_SEQ = "harness.chain_seq"
ROW_HASH = "harness.row_hash"
START_CHAIN_SEQ = "harness.start_chain_seq"
SURFACE = "harness.surface"
ERROR_CODE = "harness.error_code"
TOOL_CALL_ID = "harness.tool_call_id"
ARGUMENTS = "harness.arguments"
RESULT_PREVIEW = "harness.result_preview"
ERROR = "harness.error"


def tool_name(record: Any) -> str:
    """The exported `gen_ai.tool.name`: the operation, or UNKNOWN_TOOL for a name the registry does not hold."""
    return record.operation if record.known else UNKNOWN_TOOL


def span_name(tool: str) -> str:
    """`{mcp.method.name} {gen_ai.tool.name}`."""
    return f"{METHOD} {tool}"


def common_attributes(call: Any, tool: str, error_code: str) -> dict[str, Any]:
    """What both the span and the duration metric carry (low cardinality: no ids)."""
    attributes: dict[str, Any] = {
        "mcp.method.name": METHOD,
        "gen_ai.operation.name": OPERATION,
        "gen_ai.tool.name": tool,
        SURFACE: call.surface,
    }
    transport = NETWORK_TRANSPORT.get(call.transport) if call.surface == "mcp" else None
    if transport:
        attributes["network.transport"] = transport
        if call.transport == "http":
            attributes["network.protocol.name"] = "http"
    if call.protocol_version:
        attributes["mcp.protocol.version"] = call.protocol_version
    if error_code:
        attributes["error.type"] = TOOL_ERROR
    return attributes


def span_attributes(call: Any, tool: str, error_code: str, start: Any, end: Any, *, content: bool) -> dict[str, Any]:
    """Every attribute of a call's span. `start` and `end` are the ledger rows the call wrote (None when the ledger
    did not write one): the conversation id, chain position, row hash and content come from them alone."""
    attributes = common_attributes(call, tool, error_code)
    if call.surface == "mcp" and call.request_id:
        attributes["jsonrpc.request.id"] = call.request_id
    if call.session_digest:
        attributes["mcp.session.id"] = call.session_digest
    if error_code:
        attributes[ERROR_CODE] = error_code
    if start is not None:
        attributes[CONVERSATION_ID] = start.conversation_id
        attributes[TOOL_CALL_ID] = start.tool_call_id
        attributes[START_CHAIN_SEQ] = start.chain_seq
    if end is not None:
        attributes[CONVERSATION_ID] = end.conversation_id
        attributes[CHAIN_SEQ] = end.chain_seq
        attributes[ROW_HASH] = end.row_hash.hex()
    if content:
        if start is not None and start.arguments is not None:
            attributes[ARGUMENTS] = start.arguments
        if end is not None and end.result_preview is not None:
            attributes[RESULT_PREVIEW] = end.result_preview
        if end is not None and end.error is not None:
            attributes[ERROR] = end.error
    return attributes
