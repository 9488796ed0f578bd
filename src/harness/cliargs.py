"""CLI flags generated from an input model, and the JSON-or-file reader for object arguments."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from harness import files
from harness.errors import InvalidInput
from harness.fields import ObjectInput
from harness.text import canonjson
from harness.text.sanitize import echo

DEFAULT_OBJECT_CAP = 1_048_576
Kind = Literal["str", "int", "bool", "str_list", "object"]


@dataclass(frozen=True)
class Flag:
    """One CLI flag derived from one input-model field."""

    field: str
    kind: Kind
    required: bool
    default: Any
    help: str
    cap: int = DEFAULT_OBJECT_CAP

    @property
    def option(self) -> str:
        return "--" + self.field.replace("_", "-")


def _kind(annotation: Any) -> Kind:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _kind(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _kind(inner[0]) if len(inner) == 1 else "object"
    if annotation is bool:
        return "bool"
    if annotation is int:
        return "int"
    if annotation is str or origin is typing.Literal:
        return "str"
    if origin in (list, tuple) and all(_kind(a) == "str" for a in typing.get_args(annotation) if a is not Ellipsis):
        return "str_list"
    return "object"


def flags_for(model: type[BaseModel]) -> list[Flag]:
    """The flags of an operation, in input-model order."""
    out = []
    for name, info in model.model_fields.items():
        out.append(_flag(name, info))
    return out


def _flag(name: str, info: FieldInfo) -> Flag:
    kind = _kind(info.annotation)
    required = info.is_required()
    default = None if required else info.get_default(call_default_factory=True)
    cap = next((m.max_bytes for m in info.metadata if isinstance(m, ObjectInput)), DEFAULT_OBJECT_CAP)
    text = info.description or ""
    if required:
        text = f"{text} [required]".strip()
    elif default is not PydanticUndefined:
        text = f"{text} [default: {canonjson.dumps(default)}]".strip()
    if kind == "object":
        text += " (a JSON value, or the path of a JSON file)"
    return Flag(field=name, kind=kind, required=required, default=default, help=text, cap=cap)


def convert(flag: Flag, value: Any) -> Any:
    """A click-parsed flag value as the JSON value the input model validates (strictly)."""
    if flag.kind == "int":
        text = str(value)
        try:
            if text.strip() != text or not text:
                raise ValueError
            return int(text, 10)
        except ValueError:
            raise InvalidInput(f"{flag.field}: expected an integer, got {echo(text)}") from None
    if flag.kind == "str_list":
        return list(value)
    if flag.kind == "object":
        return read_json_argument(flag.field, value, flag.cap)
    return value


def read_json_argument(name: str, value: str, cap: int, *, want_object: bool = False) -> Any:
    """A JSON value given inline (first non-blank character `{` or `[`) or as a file path.

    Files must be regular (not symlinks), are size-capped before reading and must be strict UTF-8.
    """
    stripped = value.lstrip()
    if stripped[:1] in ("{", "["):
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > cap:
            raise InvalidInput(f"{name}: JSON is {size} bytes, over the {cap}-byte cap")
        text = value
    else:
        text = _read_capped_file(name, value, cap)
    try:
        parsed = canonjson.loads_strict(text)
    except canonjson.StrictJSONError as exc:
        raise InvalidInput(f"{name}: {exc}") from None
    if want_object and not isinstance(parsed, dict):
        raise InvalidInput(f"{name}: expected a JSON object")
    return parsed


def _read_capped_file(name: str, value: str, cap: int) -> str:
    try:
        return files.read_text(value, cap)
    except files.FileRefused as exc:
        raise InvalidInput(f"{name}: {exc}") from None
