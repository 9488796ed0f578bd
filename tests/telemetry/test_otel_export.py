"""Every call, over MCP (stdio and streamable HTTP, real SDK clients against `harness serve`) and the CLI, arrives at
a loopback OTLP/HTTP receiver as one span with the MCP semantic-convention attributes and the ledger's identifiers,
plus the `mcp.server.operation.duration` histogram (README "Tracing")."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from otlp_receiver import Receiver, Span, otlp_receiver

from harness.context import utc_now
from harness.ledger.settings import LedgerSettings
from harness.ledger.store import open_store
from harness.text.redact import KnownSecrets, build_redactor

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from procs import clean_env, free_port, harness_argv, wait_for_port  # noqa: E402

pytestmark = pytest.mark.anyio

SERVER_KIND = 2  # opentelemetry.proto.trace.v1.Span.SPAN_KIND_SERVER
STATUS_ERROR = 2
# A valid W3C traceparent the client "continues": version 00, a trace id, a parent span id, sampled.
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
TRACESTATE = "vendor=opaque-value"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as received:
        yield received


def telemetry_env(receiver: Receiver, **extra: str) -> dict[str, str]:
    """The subprocess environment: the endpoint, and short SDK intervals so exports arrive within the test."""
    return clean_env(
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
        OTEL_BSP_SCHEDULE_DELAY="100",
        OTEL_METRIC_EXPORT_INTERVAL="200",
        **extra,
    )


def ledger_rows(workspace: Path) -> list:
    store = open_store(
        str(workspace / "ledger.sqlite3"),
        redactor=build_redactor(KnownSecrets()),
        clock=utc_now,
        settings=LedgerSettings(),
        create=False,
    )
    try:
        return list(store.iter_rows())
    finally:
        store.close()


def row_of(rows: list, span: Span, event: str):
    (row,) = [r for r in rows if r.tool_call_id == span.attributes["harness.tool_call_id"] and r.event == event]
    return row


def assert_ledger_ids(span: Span, rows: list) -> None:
    """The span carries the ledger's conversation id, the end row's chain_seq and row_hash, the start's chain_seq."""
    end, start = row_of(rows, span, "end"), row_of(rows, span, "start")
    assert span.attributes["harness.conversation_id"] == end.conversation_id
    assert span.attributes["harness.chain_seq"] == end.chain_seq
    assert span.attributes["harness.row_hash"] == end.row_hash.hex()
    assert span.attributes["harness.start_chain_seq"] == start.chain_seq


async def test_stdio_ok_error_and_continued_traceparent(tmp_path: Path, receiver: Receiver) -> None:
    argv = harness_argv("--workspace", str(tmp_path), "serve", test_registry=True)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=telemetry_env(receiver))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        ok = await session.call_tool("test_echo", {"required_name": "n", "text": "hi"})
        error = await session.call_tool("test_fail", {"code": "not_found"})
        continued = await session.call_tool(
            "test_echo", {"required_name": "t"}, meta={"traceparent": TRACEPARENT, "tracestate": TRACESTATE}
        )
        receiver.wait_for(lambda r: len(r.spans) >= 3 and any(p.metric for p in r.points))
    assert not ok.is_error and error.is_error and not continued.is_error
    rows = ledger_rows(tmp_path)

    echo_spans = receiver.spans_named("tools/call test_echo")
    assert len(echo_spans) == 2
    plain = next(s for s in echo_spans if s.trace_id != TRACE_ID)
    traced = next(s for s in echo_spans if s.trace_id == TRACE_ID)
    (failed,) = receiver.spans_named("tools/call test_fail")

    assert plain.kind == SERVER_KIND
    assert plain.parent_span_id == ""
    expected = {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "test_echo",
        "network.transport": "pipe",
        "harness.surface": "mcp",
        "jsonrpc.request.id": plain.attributes["jsonrpc.request.id"],
    }
    assert {k: plain.attributes[k] for k in expected} == expected
    assert plain.attributes["jsonrpc.request.id"].isdigit()
    assert plain.attributes["mcp.protocol.version"]
    assert "error.type" not in plain.attributes and plain.status_code != STATUS_ERROR
    assert "mcp.session.id" not in plain.attributes  # stdio has no transport session
    assert plain.resource["service.name"] == "triage-harness"
    assert_ledger_ids(plain, rows)

    assert failed.attributes["error.type"] == "tool_error"
    assert failed.attributes["harness.error_code"] == "not_found"
    assert failed.attributes["gen_ai.tool.name"] == "test_fail"
    assert failed.status_code == STATUS_ERROR and failed.status_message == "not_found"
    assert_ledger_ids(failed, rows)
    # One stdio process is one ledger conversation, so the three spans share its id.
    assert failed.attributes["harness.conversation_id"] == plain.attributes["harness.conversation_id"]

    assert traced.parent_span_id == PARENT_ID
    assert traced.trace_state == TRACESTATE
    assert_ledger_ids(traced, rows)

    receiver.wait_for(lambda r: _points(r, "test_echo") and _points(r, "test_fail"))
    (echo_point,) = _points(receiver, "test_echo")[-1:]
    assert echo_point.unit == "s" and echo_point.count == 2 and echo_point.total >= 0
    assert echo_point.attributes["mcp.method.name"] == "tools/call"
    assert echo_point.attributes["network.transport"] == "pipe"
    assert "error.type" not in echo_point.attributes
    assert _points(receiver, "test_fail")[-1].attributes["error.type"] == "tool_error"
    # No per-call identifier in a metric's attributes (one series per tool, not per call).
    assert not {"jsonrpc.request.id", "harness.conversation_id", "harness.row_hash"} & set(echo_point.attributes)


def _points(receiver: Receiver, tool: str) -> list:
    return [
        p for p in receiver.points
        if p.metric == "mcp.server.operation.duration" and p.attributes.get("gen_ai.tool.name") == tool
    ]


@pytest.fixture
def http_server(tmp_path: Path, receiver: Receiver) -> Iterator[str]:
    port = free_port()
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", f"127.0.0.1:{port}", test_registry=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=telemetry_env(receiver))
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


async def test_streamable_http_carries_the_session_digest(tmp_path: Path, receiver: Receiver, http_server: str) -> None:
    info = types.Implementation(name="otel-test", version="1")
    async with Client(http_server, mode="legacy", client_info=info) as client:
        result = await client.call_tool(
            "test_echo", {"required_name": "n"}, meta={"traceparent": TRACEPARENT}
        )
    assert not result.is_error
    receiver.wait_for(lambda r: bool(r.spans_named("tools/call test_echo")))
    (span,) = receiver.spans_named("tools/call test_echo")
    assert span.attributes["network.transport"] == "tcp"
    assert span.attributes["network.protocol.name"] == "http"
    # The session id is a bearer value: only its digest leaves the process, the one the ledger stores.
    session = span.attributes["mcp.session.id"]
    assert session.startswith("sid-") and len(session) == 36
    assert span.attributes["harness.conversation_id"] == session
    assert span.trace_id == TRACE_ID and span.parent_span_id == PARENT_ID
    assert_ledger_ids(span, ledger_rows(tmp_path))


def test_cli_call_is_flushed_before_exit(tmp_path: Path, receiver: Receiver) -> None:
    argv = harness_argv("--workspace", str(tmp_path), "--conversation", "conv-cli", "test_echo",
                        "--required-name", "n", test_registry=True)
    proc = subprocess.run(argv, capture_output=True, text=True, env=telemetry_env(receiver), timeout=60)
    assert proc.returncode == 0, proc.stderr
    # The process has exited: whatever arrived was exported before it did.
    spans = receiver.spans_named("tools/call test_echo")
    assert len(spans) == 1, receiver.spans
    span = spans[0]
    assert span.attributes["harness.surface"] == "cli"
    assert span.attributes["mcp.method.name"] == "tools/call"
    assert span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert span.attributes["gen_ai.tool.name"] == "test_echo"
    assert span.attributes["harness.conversation_id"] == "conv-cli"
    assert not {"network.transport", "jsonrpc.request.id", "mcp.session.id"} & set(span.attributes)
    assert_ledger_ids(span, ledger_rows(tmp_path))
    assert _points(receiver, "test_echo")[0].attributes["harness.surface"] == "cli"


def test_cli_unknown_operation_and_invalid_input_are_spans_without_the_callers_text(
    tmp_path: Path, receiver: Receiver
) -> None:
    marker = "name-" + secrets.token_hex(8)
    env = telemetry_env(receiver)
    unknown = subprocess.run(harness_argv("--workspace", str(tmp_path), f"op_{marker.replace('-', '_')}",
                                          test_registry=True), capture_output=True, text=True, env=env, timeout=60)
    invalid = subprocess.run(harness_argv("--workspace", str(tmp_path), "test_echo", "--input",
                                          json.dumps({"required_name": marker, "count": 99}), test_registry=True),
                             capture_output=True, text=True, env=env, timeout=60)
    assert unknown.returncode == 2 and invalid.returncode == 2
    (refused,) = receiver.spans_named("tools/call _unknown_operation")
    assert refused.attributes["harness.error_code"] == "unknown_operation"
    (bad,) = receiver.spans_named("tools/call test_echo")
    assert bad.attributes["harness.error_code"] == "invalid_input"
    assert bad.attributes["error.type"] == "tool_error"
    assert_ledger_ids(bad, ledger_rows(tmp_path))
    assert marker.encode() not in receiver.raw()
    assert marker.replace("-", "_").encode() not in receiver.raw()


def _content_call(tmp_path: Path, receiver: Receiver, content: bool) -> tuple[str, str]:
    """One CLI call whose arguments and result hold a plain marker and a secret (an env token's value)."""
    (tmp_path / "harness.toml").write_text(f"[telemetry]\ncontent = {'true' if content else 'false'}\n")
    marker, secret = "marker-" + secrets.token_hex(6), secrets.token_hex(16)
    argv = harness_argv("--workspace", str(tmp_path), "test_echo", "--required-name", "n",
                        "--text", f"{marker} {secret}", test_registry=True)
    env = telemetry_env(receiver, OTEL_TEST_ACCESS_TOKEN=secret)
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert marker in proc.stdout
    return marker, secret


def test_content_off_exports_no_argument_or_result_text(tmp_path: Path, receiver: Receiver) -> None:
    marker, secret = _content_call(tmp_path, receiver, content=False)
    (span,) = receiver.spans_named("tools/call test_echo")
    assert not {"harness.arguments", "harness.result_preview", "harness.error"} & set(span.attributes)
    raw = receiver.raw()
    assert raw and marker.encode() not in raw and secret.encode() not in raw


def test_content_on_exports_only_the_ledgers_redacted_text(tmp_path: Path, receiver: Receiver) -> None:
    marker, secret = _content_call(tmp_path, receiver, content=True)
    (span,) = receiver.spans_named("tools/call test_echo")
    rows = ledger_rows(tmp_path)
    assert span.attributes["harness.arguments"] == row_of(rows, span, "start").arguments
    assert span.attributes["harness.result_preview"] == row_of(rows, span, "end").result_preview
    assert marker in span.attributes["harness.arguments"] and marker in span.attributes["harness.result_preview"]
    assert secret.encode() not in receiver.raw()


def test_an_unreachable_or_refusing_collector_never_touches_the_call(tmp_path: Path) -> None:
    baseline = subprocess.run(harness_argv("--workspace", str(tmp_path), "test_echo", "--required-name", "n",
                                           test_registry=True), capture_output=True, text=True, env=clean_env(),
                              timeout=60)
    with otlp_receiver(status=503) as refusing:
        refusing_url = refusing.url
        for endpoint in (f"http://127.0.0.1:{free_port()}", refusing_url):
            proc = subprocess.run(
                harness_argv("--workspace", str(tmp_path), "test_echo", "--required-name", "n", test_registry=True),
                capture_output=True, text=True, env={**clean_env(), "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint},
                timeout=60,
            )
            assert proc.returncode == 0
            assert proc.stdout == baseline.stdout
            # Logged once, whatever the SDK's retries and both signals make of it.
            assert proc.stderr.count("export problems are logged once") == 1, proc.stderr
        assert refusing.bodies  # it was tried
    assert os.path.exists(tmp_path / "ledger.sqlite3")


def test_a_call_refused_for_an_unavailable_ledger_is_a_span_without_ledger_ids(
    tmp_path: Path, receiver: Receiver
) -> None:
    not_a_ledger = tmp_path / "ledger-is-a-directory"
    not_a_ledger.mkdir()
    argv = harness_argv("--workspace", str(tmp_path), "--ledger", str(not_a_ledger), "test_echo",
                        "--required-name", "n", test_registry=True)
    proc = subprocess.run(argv, capture_output=True, text=True, env=telemetry_env(receiver), timeout=60)
    assert proc.returncode == 3 and json.loads(proc.stdout)["error"]["code"] == "ledger_unavailable"
    (span,) = receiver.spans_named("tools/call test_echo")
    assert span.attributes["harness.error_code"] == "ledger_unavailable"
    assert span.attributes["error.type"] == "tool_error"
    assert not [k for k in span.attributes if k in ("harness.conversation_id", "harness.chain_seq", "harness.row_hash")]
