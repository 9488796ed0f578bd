"""Test-only operations, registered in a test registry (never in the package's): they let the
surface tests produce every error code and every flag kind before real operations exist."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness import errors
from harness.fields import BoundedStr
from harness.surface import OPERATIONS, Implementation, Operation, Registry


class EchoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: BoundedStr(64) = Field("", description="Text to echo back.")
    count: int = Field(1, ge=0, le=10, description="How many times.")
    loud: bool = Field(False, description="Upper-case the text.")
    tags: list[BoundedStr(16)] = Field(default_factory=list, max_length=4, description="Tags echoed in order.")
    meta: dict[str, str] = Field(default_factory=dict, description="String map echoed back.")
    required_name: BoundedStr(32, min_bytes=1) = Field(description="A required field.")


class EchoOutput(BaseModel):
    text: str
    count: int
    loud: bool
    tags: list[str]
    meta: dict[str, str]
    name: str
    notes: str


def echo(args: EchoInput, ctx: Any) -> EchoOutput:
    text = (args.text.upper() if args.loud else args.text) * args.count
    return EchoOutput(
        text=text, count=args.count, loud=args.loud, tags=args.tags, meta=args.meta, name=args.required_name,
        notes="" if text else "nothing to echo",
    )


class FailInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: Literal["invalid_input", "not_found", "refused", "upstream_unavailable", "internal_error"] = Field(
        description="Which failure to raise."
    )
    message: BoundedStr(256) = Field("it failed", description="The message.")


class FailOutput(BaseModel):
    never: str


_RAISE = {
    "invalid_input": errors.InvalidInput,
    "not_found": errors.NotFound,
    "refused": errors.Refused,
    "upstream_unavailable": errors.UpstreamUnavailable,
}


def fail(args: FailInput, ctx: Any) -> FailOutput:
    if args.code == "internal_error":
        raise RuntimeError("a bug with a secret-looking detail")
    raise _RAISE[args.code](args.message)


class BigInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    size: int = Field(4096, ge=0, le=4_000_000, description="Bytes of payload.")
    text: BoundedStr(8192) = Field("", description="Text echoed before the padding.")


class BigOutput(BaseModel):
    payload: str


def big(args: BigInput, ctx: Any) -> BigOutput:
    return BigOutput(payload=args.text + "x" * args.size)


class CrashInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: int = Field(70, ge=1, le=125, description="Exit status of the process.")


def crash(args: CrashInput, ctx: Any) -> FailOutput:
    # Ends the process inside the handler: the start row is on record, the end never comes.
    os._exit(args.status)


def operations() -> list[Operation]:
    return [
        Operation("test_echo", "Echo (test)", "investigate",
                  implementation=Implementation(EchoInput, EchoOutput, "Echo the input back (test only).", echo)),
        Operation("test_fail", "Fail (test)", "triage",
                  implementation=Implementation(FailInput, FailOutput, "Raise the requested error (test only).", fail)),
        Operation("test_big", "Big (test)", "investigate",
                  implementation=Implementation(BigInput, BigOutput, "Return a big payload (test only).", big)),
    ]


def crash_operation() -> Operation:
    """A handler that kills its process (ledger tests run it in a subprocess); never in REGISTRY."""
    return Operation("test_crash", "Crash (test)", "investigate",
                     implementation=Implementation(CrashInput, FailOutput, "Exit the process (test only).", crash))


REGISTRY = Registry(operations())
CRASH_REGISTRY = Registry([*operations(), crash_operation()])
# The package's operations and the test ones behind one front door (the no-secret-at-rest test needs both).
FULL_REGISTRY = Registry([*OPERATIONS, *operations()])
