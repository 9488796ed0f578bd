"""The small JSON responses the edge sends itself (refusals before the MCP transport runs)."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import Send


async def send_json(
    send: Send, status: int, document: dict[str, Any], headers: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    body = json.dumps(document, sort_keys=True).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
    })
    await send({"type": "http.response.body", "body": body})
