"""Ledger errors (docs/ledger.md §9); the dispatcher maps every LedgerError to `ledger_unavailable`."""

from __future__ import annotations


class LedgerError(Exception):
    """Base of every ledger failure."""


class LedgerBackendError(LedgerError):
    """The ledger cannot be reached or written: connect, lock or busy timeout, disk full, schema mismatch, read-only."""


class LedgerValueError(LedgerError, ValueError):
    """An event that breaks the boundary rules of docs/ledger.md §5; nothing is repaired."""


class LedgerIntegrityError(LedgerError):
    """An end without its start, a tombstoned conversation id, or a chain conflict that persisted after a retry."""
