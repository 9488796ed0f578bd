"""JSON Schemas published for each operation (MCP inputSchema/outputSchema and `harness schema`)."""

from __future__ import annotations

from functools import cache
from typing import Any

from harness.surface import Operation


@cache
def _schemas(op: Operation) -> tuple[dict[str, Any], dict[str, Any]]:
    impl = op.impl
    return (
        impl.input_model.model_json_schema(mode="validation"),
        impl.output_model.model_json_schema(mode="serialization"),
    )


def input_schema(op: Operation) -> dict[str, Any]:
    """The operation's input JSON Schema (object root, additionalProperties false)."""
    return _schemas(op)[0]


def output_schema(op: Operation) -> dict[str, Any]:
    """The JSON Schema of the operation's success shape."""
    return _schemas(op)[1]
