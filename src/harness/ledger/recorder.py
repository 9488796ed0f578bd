"""Dispatcher recording (docs/ledger.md §11): the start and end rows of every call, with the full result.

The dispatcher's types (CallRecord, Outcome) are read through the structural views below, so the ledger
package never imports the layers above it.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from harness import __version__
from harness.errors import LedgerUnavailable
from harness.ledger import ids
from harness.ledger.errors import LedgerError
from harness.ledger.model import LedgerEvent, LedgerRow
from harness.ledger.records import Clock
from harness.ledger.redaction_boundary import PREVIEW_CAP
from harness.ledger.settings import LedgerSettings
from harness.ledger.store import LedgerStore, open_store
from harness.text.redact import Redactor

log = logging.getLogger("harness.ledger")

INVALID_NAME = "_invalid_name"
CLIENT_FIELD_CAP = 64
# An OAuth sub or client_id is an opaque string; more than this is not an identifier worth keeping whole.
PRINCIPAL_CAP = 256
SCOPES_CAP = 32
REQUESTED_NAME_CAP = 256
MESSAGE_CAP = 1024
END_RETRY_DELAY_S = 0.05
_REQUESTED_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


class CallView(Protocol):
    """What the recorder reads of the dispatcher's CallContext."""

    @property
    def surface(self) -> str: ...
    @property
    def conversation_id(self) -> str: ...
    @property
    def conversation_source(self) -> str: ...
    @property
    def request_id(self) -> str: ...
    @property
    def tool_call_id(self) -> str: ...
    @property
    def transport(self) -> str: ...
    @property
    def client_name(self) -> str: ...
    @property
    def client_version(self) -> str: ...
    @property
    def client_tool_call_id(self) -> str: ...


class RecordView(Protocol):
    """What the recorder reads of the dispatcher's CallRecord."""

    @property
    def call(self) -> CallView: ...
    @property
    def operation(self) -> str: ...
    @property
    def known(self) -> bool: ...
    @property
    def arguments(self) -> str: ...
    @property
    def started_at(self) -> datetime.datetime: ...


class OutcomeView(Protocol):
    """What the recorder reads of the dispatcher's Outcome."""

    @property
    def text(self) -> str: ...
    @property
    def document(self) -> Mapping[str, Any]: ...
    @property
    def error_code(self) -> str: ...


@dataclasses.dataclass(frozen=True)
class CallIdentity:
    """The stored identifiers of one call (docs/ledger.md §3) and its start-row meta (docs/ledger.md §11.2)."""

    conversation_id: str
    request_id: str
    tool_call_id: str
    tool_name: str
    meta: dict[str, Any]


def caller_meta(call: Any, redactor: Redactor) -> dict[str, Any]:
    """The caller object of every row's meta: principal, auth method, OAuth client id and scopes, peer."""
    return {
        "principal": redactor.redact_for_ledger(call.principal, PRINCIPAL_CAP),
        "auth_method": call.auth_method,
        "client_id": redactor.redact_for_ledger(call.client_id, PRINCIPAL_CAP),
        "scopes": [redactor.redact_for_ledger(s, PRINCIPAL_CAP) for s in call.scopes[:SCOPES_CAP]],
        "peer": call.peer,
    }


def identify(record: RecordView, redactor: Redactor) -> CallIdentity:
    """Normalize the ids and the tool name of a call and build its start-row meta (pure)."""
    call = record.call
    conversation_id, hashed = ids.normalize_id_info(call.conversation_id, redactor.redact)
    source = call.conversation_source
    meta: dict[str, Any] = {
        "surface": call.surface,
        "harness_version": __version__,
        # A transport session id is stored only as its digest (docs/ledger.md §3), so it counts as hashed too.
        "conversation_source": source + "+hashed" if hashed or source == "session" else source,
    }
    if call.surface == "mcp":
        meta["transport"] = call.transport
    if call.client_name or call.client_version:
        meta["client"] = {
            "name": redactor.redact_for_ledger(call.client_name, CLIENT_FIELD_CAP),
            "version": redactor.redact_for_ledger(call.client_version, CLIENT_FIELD_CAP),
        }
    if call.client_tool_call_id:
        meta["client_tool_call_id"] = ids.normalize_id(call.client_tool_call_id, redactor.redact)
    meta["caller"] = caller_meta(call, redactor)
    tool_name = record.operation
    if not record.known and not (
        _REQUESTED_NAME.fullmatch(tool_name) is not None and redactor.redact(tool_name) == tool_name
    ):
        meta["requested_name"] = redactor.redact_for_ledger(tool_name, REQUESTED_NAME_CAP)
        tool_name = INVALID_NAME
    return CallIdentity(
        conversation_id=conversation_id,
        request_id=ids.normalize_id(call.request_id, redactor.redact),
        tool_call_id=ids.normalize_id(call.tool_call_id, redactor.redact),
        tool_name=tool_name,
        meta=meta,
    )


class LedgerRecorder:
    """The dispatcher's Recorder over an open LedgerStore: start row before the handler, end row after."""

    def __init__(
        self,
        store: LedgerStore,
        *,
        settings: LedgerSettings,
        redactor: Redactor,
        clock: Clock,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self._settings = settings
        self._redactor = redactor
        self._clock = clock
        self._sleep = sleep

    def begin(self, record: RecordView) -> LedgerRow:
        """Write the start row durably and return it; raise LedgerUnavailable when it cannot be written."""
        ident = identify(record, self._redactor)
        start = self._start_event(ident, record)
        try:
            reservation = self.store.reserve(start)
        except LedgerError as exc:
            raise LedgerUnavailable(self._message(exc)) from exc
        if not reservation.owned:
            raise LedgerUnavailable("the ledger already holds this call key: duplicate call key")
        return reservation.start

    def finish(
        self, record: RecordView, outcome: OutcomeView, duration_ms: int, exit_code: int | None
    ) -> LedgerRow | None:
        """Write the end row, retrying once after 50 ms, and return it; a failure leaves the call in flight, is
        logged, and returns None."""
        try:
            ident = identify(record, self._redactor)
            end = self._end_event(ident, record, outcome, self._clock(), duration_ms, exit_code)
        except Exception:  # noqa: BLE001 - the response stands whatever happens here
            log.exception("ledger: cannot build the end row of %s", _ids_text(record))
            return None
        for attempt in (1, 2):
            try:
                return self.store.insert(end).row
            except Exception as exc:  # noqa: BLE001 - the response stands whatever happens here
                if attempt == 2:
                    problem = self._message(exc)
                    log.error("ledger: end row not written, call left in flight (%s): %s", _ids_text(record), problem)
                    return None
            self._sleep(END_RETRY_DELAY_S)
        return None

    def refuse(self, record: RecordView, outcome: OutcomeView, exit_code: int | None) -> tuple[LedgerRow, ...]:
        """Write start and end of a call refused before its handler in one transaction and return both rows;
        failures are logged and return no rows."""
        try:
            ident = identify(record, self._redactor)
            start = self._start_event(ident, record)
            end = self._end_event(ident, record, outcome, record.started_at, 0, exit_code)
            return tuple(result.row for result in self.store.insert_many([start, end]))
        except LedgerError as exc:
            log.error("ledger: refused call not recorded (%s): %s", _ids_text(record), self._message(exc))
        except Exception:  # noqa: BLE001 - the original error is returned whatever happens here
            log.exception("ledger: refused call not recorded (%s)", _ids_text(record))
        return ()

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def _message(self, exc: Exception) -> str:
        return self._redactor.redact_line(str(exc), MESSAGE_CAP)

    def _start_event(self, ident: CallIdentity, record: RecordView) -> LedgerEvent:
        return LedgerEvent(
            conversation_id=ident.conversation_id,
            request_id=ident.request_id,
            tool_call_id=ident.tool_call_id,
            tool_name=ident.tool_name,
            event="start",
            started_at=record.started_at,
            arguments=record.arguments,
            meta=ident.meta,
        )

    def _end_event(
        self,
        ident: CallIdentity,
        record: RecordView,
        outcome: OutcomeView,
        ended_at: datetime.datetime,
        duration_ms: int,
        exit_code: int | None,
    ) -> LedgerEvent:
        response = outcome.text
        size = len(response.encode("utf-8", "surrogatepass"))
        # The store redacts, caps and keeps the full result with the end row (docs/ledger.md §11.3).
        sidecar = response if size > PREVIEW_CAP and self._settings.sidecars else None
        error = None
        if outcome.error_code:
            error = f"{outcome.error_code}: {outcome.document['error']['message']}"
        return LedgerEvent(
            conversation_id=ident.conversation_id,
            request_id=ident.request_id,
            tool_call_id=ident.tool_call_id,
            tool_name=ident.tool_name,
            event="end",
            started_at=record.started_at,
            ended_at=ended_at,
            duration_ms=max(0, duration_ms),
            status="error" if outcome.error_code else "ok",
            error=error,
            result_preview=response,
            result_bytes=size,
            exit_code=exit_code,
            meta={"caller": ident.meta["caller"]},
            sidecar=sidecar,
        )


class UnavailableRecorder:
    """Stands in when the ledger cannot be opened: every call is refused with ledger_unavailable before its
    handler, and calls refused earlier still get their original error (docs/ledger.md §11.1)."""

    def __init__(self, message: str) -> None:
        self.message = message

    def begin(self, record: RecordView) -> None:
        """Refuse the call."""
        raise LedgerUnavailable(self.message)

    def finish(self, record: RecordView, outcome: OutcomeView, duration_ms: int, exit_code: int | None) -> None:
        """Never reached: begin refused the call."""

    def refuse(self, record: RecordView, outcome: OutcomeView, exit_code: int | None) -> tuple[LedgerRow, ...]:
        """Log that the refused call could not be recorded."""
        log.error("ledger: refused call not recorded (%s): %s", _ids_text(record), self.message)
        return ()

    def close(self) -> None:
        """Nothing to release."""


def _ids_text(record: RecordView) -> str:
    call = record.call
    return (
        f"operation {record.operation}, conversation {call.conversation_id}, request {call.request_id},"
        f" tool call {call.tool_call_id}"
    )


def open_recorder(
    target: str,
    *,
    settings: LedgerSettings,
    redactor: Redactor,
    clock: Clock,
) -> LedgerRecorder:
    """Open the ledger for writing (a SQLite file is created and migrated) and a recorder over it.

    Raises LedgerUnavailable when the ledger cannot be opened or its schema is not the one this harness needs.
    """
    try:
        store = open_store(target, redactor=redactor, clock=clock, settings=settings, create=True)
    except LedgerError as exc:
        raise LedgerUnavailable(redactor.redact_line(str(exc), MESSAGE_CAP)) from exc
    return LedgerRecorder(store, settings=settings, redactor=redactor, clock=clock)
