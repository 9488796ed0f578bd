"""What an agent reads about one tool in tools/list: its description and its input and output schemas."""

from __future__ import annotations

import json

from harness.schemas import input_schema, output_schema
from harness.surface import OPERATIONS


def listed_text(name: str) -> str:
    """The tool's description followed by its schemas as JSON text (field descriptions, bounds, defaults)."""
    op = OPERATIONS.get(name)
    assert op is not None, name
    schemas = [json.dumps(schema, ensure_ascii=False) for schema in (input_schema(op), output_schema(op))]
    return "\n".join([op.impl.description, *schemas])
