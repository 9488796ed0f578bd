"""Typed harness errors: each maps to one error code of docs/surface.md and one CLI exit status."""

from __future__ import annotations

from typing import ClassVar

EXIT_CODES: dict[str, int] = {
    "invalid_input": 2,
    "not_found": 1,
    "refused": 5,
    "upstream_unavailable": 3,
    "ledger_unavailable": 3,
    "internal_error": 1,
    "unknown_operation": 2,
}


class HarnessError(Exception):
    """An expected failure of an operation; `code` is the surface error code."""

    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.code]


class InvalidInput(HarnessError):
    code = "invalid_input"


class NotFound(HarnessError):
    code = "not_found"


class Refused(HarnessError):
    code = "refused"


class UpstreamUnavailable(HarnessError):
    code = "upstream_unavailable"


class LedgerUnavailable(HarnessError):
    """The ledger_unavailable answer of a call, its message already redacted; the recorder raises it when the
    backend fails (harness.ledger.errors.LedgerBackendError and the other LedgerErrors)."""

    code = "ledger_unavailable"


class UnknownOperation(HarnessError):
    code = "unknown_operation"


class InternalError(HarnessError):
    code = "internal_error"
