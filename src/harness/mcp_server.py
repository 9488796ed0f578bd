"""The MCP front door: a low-level MCP server whose tools are the registry's operations."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from harness import __version__
from harness.dispatch import CallContext, Outcome, Recorder, dispatch, error_outcome
from harness.ledger.ids import session_conversation_id, uuid7
from harness.schemas import input_schema, output_schema
from harness.serve.caller import caller_of, limit_key
from harness.serve.limits import LOCAL_LANE, CallerLimits
from harness.serve.plan import OPEN_WORLD_THREADS, ServePlan
from harness.serve.scopes import scope_refusal
from harness.surface import Registry

log = logging.getLogger("harness.mcp")

CONVERSATION_META = "harness/conversation_id"
TOOL_CALL_META = "harness/tool_call_id"
CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
SESSION_HEADER = "mcp-session-id"
# W3C trace context carried in params._meta (the MCP semantic conventions' context propagation).
TRACEPARENT_META = "traceparent"
TRACESTATE_META = "tracestate"
TRACEPARENT_CAP = 128
TRACESTATE_CAP = 512
SDK_TRACING_MIDDLEWARE = "OpenTelemetryMiddleware"

INSTRUCTIONS = (
    "triage-harness tools. Every tool returns one JSON object; errors come back as a tool error whose text is "
    '{"error": {"code", "message", "operation"}}. Pass _meta["harness/conversation_id"] to group your calls '
    "into one ledger conversation."
)


def tool_list(registry: Registry) -> list[types.Tool]:
    """The tools/list entries of a registry: schemas, annotations and descriptions from surface.py."""
    tools = []
    for op in registry:
        tools.append(
            types.Tool(
                name=op.name,
                title=op.title,
                description=op.impl.description,
                input_schema=input_schema(op),
                output_schema=output_schema(op),
                annotations=types.ToolAnnotations(
                    title=op.title,
                    read_only_hint=op.read_only,
                    destructive_hint=op.destructive,
                    idempotent_hint=op.idempotent,
                    open_world_hint=op.open_world,
                ),
            )
        )
    return tools


def call_result(outcome: Outcome) -> types.CallToolResult:
    """Success: text plus structured content. Error: isError with the error JSON as the only content."""
    content = [types.TextContent(type="text", text=outcome.text)]
    if outcome.is_error:
        return types.CallToolResult(content=content, is_error=True)
    return types.CallToolResult(content=content, structured_content=outcome.document)


def _client_info(ctx: Any, meta: Mapping[str, Any]) -> tuple[str, str]:
    params = ctx.session.client_params
    if params is not None and params.client_info is not None:
        return params.client_info.name or "", params.client_info.version or ""
    info = meta.get(CLIENT_INFO_META)
    if isinstance(info, Mapping):
        return str(info.get("name", "")), str(info.get("version", ""))
    return "", ""


class CallContextFactory:
    """Derives the ledger identifiers of each MCP call (docs/surface.md: conversation id rules)."""

    def __init__(self, transport: str) -> None:
        self.transport = transport
        # stdio: one conversation per server process.
        self.process_conversation = str(uuid7())

    def __call__(self, ctx: Any) -> CallContext:
        meta: Mapping[str, Any] = ctx.meta or {}
        name, version = _client_info(ctx, meta)
        supplied = meta.get(CONVERSATION_META)
        session_id = ""
        if ctx.request is not None and hasattr(ctx.request, "headers"):
            session_id = ctx.request.headers.get(SESSION_HEADER, "")
        if isinstance(supplied, str | int) and not isinstance(supplied, bool) and str(supplied):
            conversation, source = str(supplied), "meta"
        elif self.transport == "stdio":
            conversation, source = self.process_conversation, "process"
        elif session_id:
            # The session id is a bearer value: only its digest is ever stored.
            conversation, source = session_conversation_id(session_id), "session"
        else:
            conversation, source = str(uuid7()), "generated"
        client_call = meta.get(TOOL_CALL_META)
        caller = caller_of(ctx.request)
        protocol = getattr(ctx, "protocol_version", None)
        return CallContext(
            surface="mcp",
            transport=self.transport,
            conversation_id=conversation,
            conversation_source=source,
            request_id="" if ctx.request_id is None else str(ctx.request_id),
            tool_call_id=str(uuid7()),
            client_name=name,
            client_version=version,
            client_tool_call_id=str(client_call) if isinstance(client_call, str | int) else "",
            principal=caller.principal,
            auth_method=caller.auth_method,
            client_id=caller.client_id,
            scopes=caller.scopes,
            peer=caller.peer,
            trace_parent=_meta_text(meta, TRACEPARENT_META, TRACEPARENT_CAP),
            trace_state=_meta_text(meta, TRACESTATE_META, TRACESTATE_CAP),
            protocol_version=protocol if isinstance(protocol, str) else "",
            session_digest=session_conversation_id(session_id) if session_id else "",
        )


def _meta_text(meta: Mapping[str, Any], key: str, cap: int) -> str:
    """A W3C trace-context value from _meta: a string within its size, else nothing (the propagator checks the
    format)."""
    value = meta.get(key)
    return value if isinstance(value, str) and len(value) <= cap else ""


def build_server(
    registry: Registry,
    context: Any,
    *,
    recorder: Recorder | None = None,
    transport: str = "stdio",
    open_world_threads: int = OPEN_WORLD_THREADS,
    limits: CallerLimits | None = None,
) -> Server[Any]:
    """An MCP server exposing `registry`; every call goes through `dispatch` on a worker thread.

    Each open-world tool (github_actor, fp_agent_verify: one upstream each) runs on a bounded set of
    `open_world_threads` threads of its own, and counts against the caller's concurrency limit in a lane of its
    own, so a stalled upstream holds neither the threads nor the places local reads (or the other upstream) use.
    """
    tools = tool_list(registry)
    call_context = CallContextFactory(transport)
    limiters: dict[str, anyio.CapacityLimiter] = {}

    def limiter_for(lane: str) -> anyio.CapacityLimiter | None:
        if lane == LOCAL_LANE:
            return None  # anyio's default limiter
        # Created on first use: a CapacityLimiter belongs to the running event loop.
        if lane not in limiters:
            limiters[lane] = anyio.CapacityLimiter(open_world_threads)
        return limiters[lane]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        call = call_context(ctx)
        arguments = params.arguments or {}
        op = registry.get(params.name)
        denied = ""
        if call.auth_method == "oauth" and op is not None:
            denied = scope_refusal(op.name, op.toolset, call.scopes)
        # Unauthenticated loopback callers share the principal "local": they are told apart by address.
        key = limit_key(call.principal, call.auth_method, call.peer)
        lane = op.name if op is not None and op.open_world else LOCAL_LANE
        if limits is not None:
            refusal = limits.admit(key, lane)
            if refusal is not None:
                # Not a ledger row: under a flood the ledger would grow with the flood (docs/decisions.md).
                log.info("call to %s by %s refused: %s", params.name, key, refusal.message)
                return call_result(error_outcome("refused", refusal.message, params.name))
        try:
            outcome = await anyio.to_thread.run_sync(
                lambda: dispatch(
                    registry, params.name, arguments, call, context, recorder=recorder, clock=context.clock,
                    denied=denied,
                ),
                limiter=limiter_for(lane),
            )
        finally:
            if limits is not None:
                limits.release(key, lane)
        return call_result(outcome)

    schemas = {op.name: input_schema(op) for op in registry}
    server = Server(
        "triage-harness",
        version=__version__,
        title="triage-harness",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # The harness exports its own span per tool call, with the ledger's ids (README "Tracing"): the SDK's default
    # OpenTelemetry middleware would add a second one whenever a global tracer provider is set, so it is dropped.
    server.middleware[:] = [m for m in server.middleware if type(m).__name__ != SDK_TRACING_MIDDLEWARE]
    server.middleware.append(KnownSecretMiddleware(context.redactor))
    return server


class KnownSecretMiddleware:
    """The MCP boundary of the known-secret filter: every result and every error of every request, on every
    transport, has each string (keys included) passed through `Redactor.redact_known`; structure is untouched."""

    def __init__(self, redactor: Any) -> None:
        self._redactor = redactor

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        redact = self._redactor
        try:
            result = await call_next(ctx)
        except ValidationError:
            raise  # the SDK answers INVALID_PARAMS without any of the input
        except MCPError as exc:
            raise MCPError(exc.code, redact.redact_known(exc.message), redact.redact_known_tree(exc.data)) from None
        except Exception as exc:  # noqa: BLE001 - the SDK would send str(exc) as is
            log.exception("MCP request %s failed", getattr(ctx, "method", ""))
            raise MCPError(types.INTERNAL_ERROR, redact.redact_known(f"{type(exc).__name__}: {exc}")) from None
        if isinstance(result, BaseModel):
            result = _dumped(result)
        return redact.redact_known_tree(result) if isinstance(result, dict) else result


def _dumped(result: BaseModel) -> dict[str, Any]:
    """The result as the SDK would send it. A tool result's structured content is the document dispatch built,
    plain JSON already: it is kept as it is, since dumping it through pydantic copies every node (a tenth of a
    2,000-event result's time, docs/decisions.md)."""
    if not isinstance(result, types.CallToolResult) or result.structured_content is None:
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    rest = result.model_dump(by_alias=True, mode="json", exclude_none=True, exclude={"structured_content"})
    return {"content": rest.pop("content"), "structuredContent": result.structured_content, **rest}


class KnownSecretBodies:
    """The HTTP edge of the known-secret filter: every response body the transport writes itself (its own JSON-RPC
    errors, which can echo a request) passes `Redactor.redact_known_bytes`. A whole body has its Content-Length
    recomputed; a streamed body (SSE) is filtered event by event, each event being one send."""

    def __init__(self, app: Any, redactor: Any) -> None:
        self._app = app
        self._redactor = redactor

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        held: dict[str, Any] = {}

        async def filtered(message: Any) -> None:
            if message["type"] == "http.response.start":
                held["start"] = message
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body = self._redactor.redact_known_bytes(bytes(message.get("body", b"")))
            start = held.pop("start", None)
            if start is not None:
                headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                if not message.get("more_body", False):
                    headers.append((b"content-length", str(len(body)).encode("ascii")))
                await send({**start, "headers": headers})
            await send({**message, "body": body})

        await self._app(scope, receive, filtered)


async def serve_stdio(server: Server[Any]) -> None:
    """Serve over stdin/stdout until the client closes the pipe."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(
    server: Server[Any], plan: ServePlan, *, redactor: Any, bearer_token: str = "", ui: Any = None
) -> None:
    """Serve streamable HTTP at plan.url until interrupted, every response body through the known-secret filter;
    uvicorn logs through the root logger's redacting handler (no log_config of its own)."""
    import uvicorn

    from harness.serve.app import http_app
    from harness.serve.connections import KEEP_ALIVE_S, HeaderDeadlineProtocol

    app = KnownSecretBodies(http_app(server, plan, bearer_token=bearer_token, ui=ui), redactor)
    uvicorn.run(app, host=plan.host, port=plan.port, log_level="warning", log_config=None,
                http=HeaderDeadlineProtocol, timeout_keep_alive=KEEP_ALIVE_S)
