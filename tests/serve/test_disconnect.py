"""A client that disconnects before its request body is complete is one debug line, nothing at warning or above."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.mcp_server import build_server
from harness.serve.app import http_app
from harness.serve.plan import ServePlan
from harness.serve.settings import ServeSettings

pytestmark = pytest.mark.anyio


async def test_a_disconnect_mid_body_is_one_debug_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from testops import REGISTRY

    server = build_server(REGISTRY, build_context(load_settings(Overrides(workspace=tmp_path))))
    app = http_app(server, ServePlan(ServeSettings(), ("investigate",), "127.0.0.1", 8765))
    messages = [{"type": "http.request", "body": b'{"jsonrpc": "2.0"', "more_body": True}, {"type": "http.disconnect"}]
    sent: list[dict] = []

    async def receive() -> dict:
        return messages.pop(0)

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/mcp", "raw_path": b"/mcp", "query_string": b"", "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8765"), (b"content-type", b"application/json"), (b"content-length", b"99")],
        "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 8765),
    }
    # Attached to the logger itself: the CLI's setup_logging stops `harness` records from propagating.
    logger = logging.getLogger("harness.serve")
    level, propagate = logger.level, logger.propagate
    logger.addHandler(caplog.handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        await app(scope, receive, send)
    finally:
        logger.removeHandler(caplog.handler)
        logger.setLevel(level)
        logger.propagate = propagate
    records = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert records == [("harness.serve", logging.DEBUG, "client 127.0.0.1:40000 disconnected during POST /mcp")]
    assert all(r.exc_info is None for r in caplog.records)
    assert sent == []
