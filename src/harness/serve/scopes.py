"""OAuth scopes and the toolsets they open (data, not code paths)."""

from __future__ import annotations

from collections.abc import Iterable

SCOPE_TOOLSETS: dict[str, str] = {
    "harness:investigate": "investigate",
    "harness:triage": "triage",
    # The ledger view of the audit issue; no operation is in this toolset yet.
    "harness:ledger:read": "ledger",
}


def granted_toolsets(scopes: Iterable[str]) -> frozenset[str]:
    """The toolsets a token's scopes open; unknown scopes open nothing."""
    return frozenset(SCOPE_TOOLSETS[s] for s in scopes if s in SCOPE_TOOLSETS)


def scope_refusal(operation: str, toolset: str, scopes: Iterable[str]) -> str:
    """Empty when the scopes allow the operation, else the refusal message naming the scope it needs."""
    if toolset in granted_toolsets(scopes):
        return ""
    needed = [scope for scope, opened in SCOPE_TOOLSETS.items() if opened == toolset]
    return f"{operation} needs the scope {' or '.join(needed) or '(none opens it)'}, which the access token lacks"
