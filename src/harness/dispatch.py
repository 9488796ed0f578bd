"""The one call path of every operation: parse -> validate -> ledger start -> run -> ledger end -> serialize."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from harness.errors import EXIT_CODES, HarnessError, InvalidInput, LedgerUnavailable
from harness.surface import Registry
from harness.text import canonjson
from harness.text.sanitize import echo, sanitize_field
from harness.validation import describe_validation_error

log = logging.getLogger("harness.dispatch")


@dataclass(frozen=True)
class CallContext:
    """Who is calling and how: the identifiers the ledger records (docs/ledger.md §3, docs/ledger.md §11.2)."""

    surface: Literal["cli", "mcp"]
    conversation_id: str
    conversation_source: str
    request_id: str
    tool_call_id: str
    transport: str = ""
    client_name: str = ""
    client_version: str = ""
    client_tool_call_id: str = ""
    # Who called (docs/decisions.md, "Team server"): the token's sub, "bearer" or "local", and how it was known.
    principal: str = "local"
    auth_method: str = "local"
    client_id: str = ""
    scopes: tuple[str, ...] = ()
    peer: str = ""
    # Telemetry only (docs/decisions.md, "OpenTelemetry export"): the caller's W3C trace context from
    # params._meta, the negotiated protocol version, and the digest of the transport session id.
    trace_parent: str = ""
    trace_state: str = ""
    protocol_version: str = ""
    session_digest: str = ""


@dataclass(frozen=True)
class ArgumentError:
    """Arguments the front door could not turn into an object (malformed JSON, oversize file, bad flag).

    `raw` is what the caller supplied, recorded as given.
    """

    raw: str
    error: InvalidInput


@dataclass(frozen=True)
class Outcome:
    """The serialized result of one call, identical on both surfaces."""

    text: str
    document: dict[str, Any]
    error_code: str = ""

    @property
    def is_error(self) -> bool:
        return bool(self.error_code)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.error_code] if self.error_code else 0


@dataclass
class CallRecord:
    """What the recorder sees of one call; `arguments` is canonical JSON, or raw text that never parsed."""

    call: CallContext
    operation: str
    known: bool
    arguments: str
    started_at: datetime
    started_ns: int = field(default_factory=time.perf_counter_ns)


class WrittenRow(Protocol):
    """What a recorder's caller may read of a ledger row it wrote (harness.ledger.model.LedgerRow): telemetry
    exports these stored, redacted values and never the call's own."""

    @property
    def conversation_id(self) -> str: ...
    @property
    def tool_call_id(self) -> str: ...
    @property
    def chain_seq(self) -> int: ...
    @property
    def row_hash(self) -> bytes: ...
    @property
    def arguments(self) -> str | None: ...
    @property
    def result_preview(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...


class Recorder(Protocol):
    """The ledger seam: a start row before the handler, an end row after. Each method returns the rows it wrote
    (none when it wrote nothing); the dispatcher ignores them, a wrapping recorder (telemetry) reads them."""

    def begin(self, record: CallRecord) -> WrittenRow | None:
        """Write the start row durably; raise LedgerUnavailable if it cannot be written."""

    def finish(self, record: CallRecord, outcome: Outcome, duration_ms: int, exit_code: int | None) -> WrittenRow | None:
        """Write the end row; never raise (a failure is logged, the response stands)."""

    def refuse(self, record: CallRecord, outcome: Outcome, exit_code: int | None) -> tuple[WrittenRow, ...]:
        """Write start and end of a call refused before its handler; never raise."""


class NullRecorder:
    """Records nothing (benchmarks' baseline and tests of the bare surface)."""

    def begin(self, record: CallRecord) -> WrittenRow | None:
        return None

    def finish(self, record: CallRecord, outcome: Outcome, duration_ms: int, exit_code: int | None) -> WrittenRow | None:
        return None

    def refuse(self, record: CallRecord, outcome: Outcome, exit_code: int | None) -> tuple[WrittenRow, ...]:
        return ()


def serialize(document: Mapping[str, Any]) -> str:
    """The response bytes both front doors emit (compact, sorted keys, no trailing newline)."""
    return canonjson.dumps(document)


def error_outcome(code: str, message: str, operation: str) -> Outcome:
    """The one error shape of docs/surface.md."""
    document = {"error": {"code": code, "message": message, "operation": operation}}
    return Outcome(text=serialize(document), document=document, error_code=code)


# Deeper argument trees are refused before anything walks them recursively (JSON encoding,
# pydantic validation); no operation input legitimately nests this deep.
MAX_ARGUMENT_DEPTH = 64


def _screen(raw: Mapping[str, Any] | ArgumentError) -> Mapping[str, Any] | ArgumentError:
    if isinstance(raw, ArgumentError) or canonjson.depth(dict(raw)) <= MAX_ARGUMENT_DEPTH:
        return raw
    message = f"arguments: nesting is deeper than {MAX_ARGUMENT_DEPTH} levels"
    return ArgumentError(raw=f"<{message}>", error=InvalidInput(message))


def _arguments_text(raw: Mapping[str, Any] | ArgumentError) -> str:
    if isinstance(raw, ArgumentError):
        return raw.raw
    try:
        return canonjson.dumps(dict(raw))
    except (TypeError, ValueError):
        return repr(raw)


def _surface_exit(call: CallContext, outcome: Outcome) -> int | None:
    return outcome.exit_code if call.surface == "cli" else None


def dispatch(
    registry: Registry,
    name: str,
    raw: Mapping[str, Any] | ArgumentError,
    call: CallContext,
    ctx: Any,
    *,
    recorder: Recorder | None = None,
    clock: Any = None,
    denied: str = "",
) -> Outcome:
    """Run one operation call end to end and return its serialized outcome.

    Validation is strict on both surfaces: the CLI converts flag strings to their field types
    before calling, so the same arguments are accepted or refused alike over CLI and MCP.
    `denied` (the front door's access decision, e.g. a missing OAuth scope) refuses a known
    operation before its arguments are validated, recorded like any refused call.
    """
    recorder = recorder or NullRecorder()
    now = clock or (lambda: datetime.now(UTC))
    raw = _screen(raw)
    op = registry.get(name)
    record = CallRecord(
        call=call,
        operation=name,
        known=op is not None,
        arguments=_arguments_text(raw),
        started_at=now(),
    )
    if op is None:
        outcome = error_outcome("unknown_operation", f"unknown operation {echo(name)}", sanitize_field(name))
        recorder.refuse(record, outcome, _surface_exit(call, outcome))
        return outcome

    if denied:
        outcome = error_outcome("refused", denied, name)
        recorder.refuse(record, outcome, _surface_exit(call, outcome))
        return outcome

    try:
        if isinstance(raw, ArgumentError):
            raise raw.error
        arguments = _validate(op.impl.input_model, raw)
    except InvalidInput as exc:
        outcome = error_outcome(exc.code, exc.message, name)
        recorder.refuse(record, outcome, _surface_exit(call, outcome))
        return outcome

    handler, output_model = op.impl.handler, op.impl.output_model

    def run() -> dict[str, Any]:
        result = handler(arguments, ctx)
        if not isinstance(result, output_model):
            raise TypeError(f"{name} returned {type(result).__name__}, expected {output_model.__name__}")
        return _with_workspace_note(result.model_dump(mode="json", by_alias=True), output_model, ctx)

    return _recorded(record, run, recorder)


def _with_workspace_note(document: dict[str, Any], output_model: type[Any], ctx: Any) -> dict[str, Any]:
    """Append the context's workspace note to the result's `notes`, in the operation's own separator.

    One place for every operation: a result answered from an empty fallback workspace always says so.
    """
    note_of = getattr(ctx, "workspace_note", None)
    note = note_of() if callable(note_of) else ""
    notes = document.get("notes")
    if not note or not isinstance(notes, str):
        return document
    separator = getattr(output_model, "NOTES_SEPARATOR", " ")
    return {**document, "notes": f"{notes}{separator}{note}" if notes else note}


def run_operator(
    tool_name: str,
    arguments: Mapping[str, Any],
    call: CallContext,
    run: Callable[[], dict[str, Any]],
    *,
    recorder: Recorder | None = None,
    clock: Any = None,
) -> Outcome:
    """Run an operator command (`cli.init`, `cli.ingest_events`, ...) through the same recording path."""
    now = clock or (lambda: datetime.now(UTC))
    record = CallRecord(
        call=call, operation=tool_name, known=True, arguments=_arguments_text(arguments), started_at=now()
    )
    return _recorded(record, run, recorder or NullRecorder())


def _recorded(record: CallRecord, run: Callable[[], dict[str, Any]], recorder: Recorder) -> Outcome:
    # Configured secrets are removed where output leaves the process (harness.outputs for the CLI, the MCP
    # server's boundary), not here: every message, not only these, passes there.
    name = record.operation
    try:
        recorder.begin(record)
    except LedgerUnavailable as exc:
        call = record.call
        log.error(
            "ledger unavailable, call %s refused (conversation %s, request %s, tool call %s): %s",
            name, call.conversation_id, call.request_id, call.tool_call_id, exc.message,
        )
        return error_outcome(exc.code, exc.message, name)

    started = time.perf_counter_ns()
    try:
        document = run()
        outcome = Outcome(text=serialize(document), document=document)
    except HarnessError as exc:
        outcome = error_outcome(exc.code, exc.message, name)
    except Exception as exc:  # noqa: BLE001 - the contract: anything unexpected is internal_error
        log.exception("internal error in %s", name)
        outcome = error_outcome(
            "internal_error", f"unexpected {type(exc).__name__} in {name}; details are in the server log", name
        )
    duration_ms = (time.perf_counter_ns() - started) // 1_000_000
    recorder.finish(record, outcome, duration_ms, _surface_exit(record.call, outcome))
    return outcome


def _validate(model: type[BaseModel], raw: Mapping[str, Any]) -> BaseModel:
    try:
        return model.model_validate(dict(raw), strict=True)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(exc, model)) from None
