"""Turn a pydantic ValidationError into the one-line `<field path>: <problem>` message of docs/surface.md."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import SplitResult, urlsplit

from pydantic import BaseModel, ValidationError

from harness.text.canonjson import json_type
from harness.text.sanitize import echo


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return echo(value)
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return json_type(value)
    return text if len(text) <= 64 else json_type(value)


def field_path(loc: tuple[int | str, ...]) -> str:
    """`("ids", 3)` -> `ids[3]`; `("finding_metadata", "k")` -> `finding_metadata.k`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "arguments"


def _problem(error: Any, model: type[BaseModel]) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    value = error.get("input")
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        allowed = ", ".join(model.model_fields)
        return f"unknown field; the accepted fields are {allowed}"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind in ("string_type", "string_unicode"):
        return f"expected a string, got {json_type(value)}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"expected an integer, got {_shown(value)}"
    if kind in ("bool_type", "bool_parsing"):
        return f"expected a boolean, got {_shown(value)}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected an object, got {json_type(value)}"
    if kind in ("list_type", "tuple_type"):
        return f"expected an array, got {json_type(value)}"
    if kind == "greater_than_equal":
        return f"must be at least {ctx['ge']}, got {_shown(value)}"
    if kind == "less_than_equal":
        return f"must be at most {ctx['le']}, got {_shown(value)}"
    if kind == "greater_than":
        return f"must be greater than {ctx['gt']}, got {_shown(value)}"
    if kind == "less_than":
        return f"must be less than {ctx['lt']}, got {_shown(value)}"
    if kind == "string_too_short":
        return "must not be empty" if ctx.get("min_length") == 1 else f"must be at least {ctx['min_length']} bytes"
    if kind == "string_too_long":
        size = len(value.encode("utf-8", "surrogatepass")) if isinstance(value, str) else "more"
        return f"must be at most {ctx['max_length']} bytes (UTF-8), got {size}"
    if kind == "too_long":
        return f"must have at most {ctx['max_length']} items, got {ctx.get('actual_length', 'more')}"
    if kind == "too_short":
        return f"must have at least {ctx['min_length']} items"
    if kind in ("literal_error", "enum"):
        return f"must be one of {ctx.get('expected', '')}, got {_shown(value)}"
    if kind == "string_pattern_mismatch":
        return f"does not match the pattern {ctx.get('pattern', '')}"
    return str(error["msg"])


def describe_validation_error(exc: ValidationError, model: type[BaseModel]) -> str:
    """The message for the first failing field in input-model order."""
    order = {name: i for i, name in enumerate(model.model_fields)}
    errors = exc.errors(include_url=False)

    def rank(item: tuple[int, Any]) -> tuple[int, int]:
        index, error = item
        head = error["loc"][0] if error["loc"] else ""
        return (order.get(head, len(order)) if isinstance(head, str) else len(order), index)

    _, first = min(enumerate(errors), key=rank)
    return f"{field_path(tuple(first['loc']))}: {_problem(first, model)}"


def _config_rank(error: Any, model: type[BaseModel]) -> tuple[int, int, int, int]:
    """harness.toml's first-failure order: unknown sections, then sections that are not tables, then section by
    section in file order, each with its unknown keys before its keys in order."""
    loc = error["loc"]
    sections = list(model.model_fields)
    section = loc[0] if loc else ""
    if section not in model.model_fields:
        return (0, 0, 0, 0)
    if len(loc) == 1:
        return (1, sections.index(section), 0, 0)
    keys = list(_section_model(model, section).model_fields)
    key = loc[1]
    if error["type"] == "extra_forbidden" or key not in keys:
        return (2, sections.index(section), 0, 0)
    return (2, sections.index(section), 1, keys.index(key))


def _section_model(model: type[BaseModel], section: str) -> type[BaseModel]:
    annotation = model.model_fields[section].annotation
    assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
    return annotation


def describe_config_error(errors: list[Any], model: type[BaseModel]) -> str:
    """The `[section] key: problem` message for the first failing key of a configuration file whose top-level
    model has one field per section (harness.config.HarnessConfig)."""
    first = min(errors, key=lambda error: _config_rank(error, model))
    loc = tuple(first["loc"])
    section = str(loc[0]) if loc else ""
    if len(loc) == 1:
        if first["type"] == "extra_forbidden":
            return f"[{section}]: unknown section; known sections are {', '.join(model.model_fields)}"
        return f"[{section}]: {_problem(first, model)}"
    section_model = _section_model(model, section)
    key = field_path(loc[1:])
    if first["type"] == "extra_forbidden" and len(loc) == 2:
        return f"[{section}] {key}: unknown key; known keys are {', '.join(section_model.model_fields)}"
    return f"[{section}] {key}: {_problem(first, section_model)}"


def configured_url(value: Any, *, schemes: tuple[str, ...], query: bool = False, userinfo_hint: str = "") -> SplitResult:
    """The parts of a URL given in configuration: one of `schemes`, a host, a valid port, never userinfo or a
    fragment (both end up in logs), a query only when allowed. Raises ValueError with the problem."""
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {json_type(value)}")
    parts = urlsplit(value)
    if parts.scheme not in schemes:
        raise ValueError(f"must be an {' or '.join(s + '://' for s in schemes)} URL, got {value!r}")
    if not parts.hostname:
        raise ValueError(f"must name a host, got {value!r}")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"must not carry userinfo{userinfo_hint}")
    if parts.fragment or value.endswith("#"):
        raise ValueError("must not carry a fragment" if query else "must not carry a query or fragment")
    if not query and (parts.query or value.endswith("?")):
        raise ValueError("must not carry a query or fragment")
    try:
        parts.port  # noqa: B018 - raises ValueError on an invalid port
    except ValueError as exc:
        raise ValueError(f"has an invalid port: {exc}") from None
    return parts
