"""Helpers of the ledger wiring tests (dispatcher, operator commands, end to end): workspaces with a ledger,
reading its rows back, the expected values of one recorded call, and PostgreSQL ledgers with real roles."""

from __future__ import annotations

import dataclasses
import datetime
import json
import threading
from pathlib import Path
from typing import Any

from pgsupport import PgServer

from harness import __version__
from harness.config import Overrides, load_settings
from harness.context import Context, build_context, utc_now
from harness.ledger import commands
from harness.ledger.model import LedgerRow
from harness.ledger.recorder import LedgerRecorder, open_recorder
from harness.ledger.redaction_boundary import ARGUMENTS_CAP, PREVIEW_CAP
from harness.ledger.settings import LedgerSettings
from harness.ledger.store import LedgerStore, open_store
from harness.text.redact import KnownSecrets, Redactor, build_redactor

T0 = datetime.datetime(2026, 3, 4, 5, 6, 7, 123456, tzinfo=datetime.UTC)
PLAIN_REDACTOR = build_redactor(KnownSecrets())


class FakeClock:
    """A deterministic clock: each reading is one millisecond after the previous one."""

    def __init__(self, start: datetime.datetime = T0) -> None:
        self.now = start
        self.readings: list[datetime.datetime] = []
        self._lock = threading.Lock()

    def __call__(self) -> datetime.datetime:
        with self._lock:
            self.now += datetime.timedelta(milliseconds=1)
            self.readings.append(self.now)
            return self.now


def write_config(workspace: Path, **ledger: Any) -> None:
    """Write harness.toml with a [ledger] section holding `ledger` (strings, integers, booleans)."""
    workspace.mkdir(parents=True, exist_ok=True)
    lines = ["[ledger]"]
    for key, value in ledger.items():
        # JSON's string, integer and boolean literals are also TOML's.
        lines.append(f"{key} = {json.dumps(value)}")
    (workspace / "harness.toml").write_text("\n".join(lines) + "\n")


def context_for(workspace: Path, *, ledger: str | None = None, clock: Any = utc_now) -> Context:
    """The handler context the front doors would build for this workspace."""
    return build_context(load_settings(Overrides(workspace=workspace, ledger=ledger)), clock=clock)


def recorder_for(ctx: Context) -> LedgerRecorder:
    """A recorder over the context's configured ledger (as `harness serve` opens it)."""
    settings = ctx.settings
    return open_recorder(
        settings.ledger_target,
        settings=settings.ledger,
        redactor=ctx.redactor,
        clock=ctx.clock,
    )


def reader(target: str | Path) -> LedgerStore:
    """A read-only store over a ledger (never creates one)."""
    return open_store(str(target), redactor=PLAIN_REDACTOR, clock=utc_now, settings=LedgerSettings(), create=False)


def all_rows(target: str | Path) -> list[LedgerRow]:
    """Every row, by (conversation_id, chain_seq)."""
    store = reader(target)
    try:
        return list(store.iter_rows())
    finally:
        store.close()


def conversation_rows(target: str | Path, conversation_id: str) -> list[LedgerRow]:
    """One conversation's rows in chain order."""
    store = reader(target)
    try:
        return store.list_by_conversation(conversation_id)
    finally:
        store.close()


# The caller meta of a CLI, stdio or in-memory call: the local user.
LOCAL_CALLER = {"principal": "local", "auth_method": "local", "client_id": "", "scopes": [], "peer": ""}


@dataclasses.dataclass(frozen=True)
class Expected:
    """What one call must have left in the ledger (docs/ledger.md §11.1, docs/ledger.md §11.2)."""

    tool_name: str
    arguments: str
    text: str
    surface: str
    exit_code: int | None
    conversation_source: str
    refused: bool = False
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)
    caller: dict[str, Any] = dataclasses.field(default_factory=lambda: dict(LOCAL_CALLER))


def check_pair(rows: list[LedgerRow], expected: Expected, redactor: Redactor) -> tuple[LedgerRow, LedgerRow]:
    """Assert that `rows` are exactly one start and its end carrying the expected values; returns them."""
    assert [r.event for r in rows] == ["start", "end"], [r.event for r in rows]
    start, end = rows
    assert start.key[:3] == end.key[:3]
    assert start.tool_name == end.tool_name == expected.tool_name
    assert start.seq == end.seq
    assert end.chain_seq == start.chain_seq + 1 and end.prev_hash == start.row_hash

    assert start.arguments == redactor.redact_for_ledger(expected.arguments, ARGUMENTS_CAP)
    assert start.args_bytes == len(expected.arguments.encode("utf-8"))
    assert start.ts == start.started_at and start.ended_at is None and start.status is None
    meta = {
        "surface": expected.surface,
        "harness_version": __version__,
        "conversation_source": expected.conversation_source,
        **expected.meta,
        "caller": expected.caller,
    }
    assert start.meta_object == meta

    size = len(expected.text.encode("utf-8"))
    document = json.loads(expected.text)
    error = document.get("error") if isinstance(document.get("error"), dict) and len(document) == 1 else None
    assert end.status == ("error" if error else "ok")
    assert end.error == (
        None if error is None else redactor.redact_for_ledger(f"{error['code']}: {error['message']}", 2048)
    )
    assert end.result_preview == redactor.redact_for_ledger(expected.text, PREVIEW_CAP)
    assert end.preview_bytes == end.result_bytes == size
    assert end.result_truncated == (size > PREVIEW_CAP)
    assert end.exit_code == expected.exit_code
    assert end.arguments is None
    assert end.started_at == start.started_at
    assert end.ts == end.ended_at and end.ended_at >= start.started_at
    if expected.refused:
        assert end.ended_at == start.started_at and end.duration_ms == 0
    assert end.duration_ms is not None and end.duration_ms >= 0
    if size <= PREVIEW_CAP:
        assert end.meta_object == {"caller": expected.caller} and end.result_sidecar_path is None
    return start, end


@dataclasses.dataclass(frozen=True)
class PgLedgerDb:
    """A migrated PostgreSQL ledger database: the app login's DSN, a superuser DSN to it, and the role names."""

    dbname: str
    dsn: str
    admin_dsn: str
    owner_role: str
    app_role: str
    login_role: str


def make_pg_ledger(server: PgServer, prefix: str = "harness_wire") -> PgLedgerDb:
    """A fresh database migrated with `harness ledger migrate --admin-dsn` semantics and an app login."""
    owner = server.reserve_role_name("harness_ledger_owner_w")
    app = server.reserve_role_name("harness_ledger_app_w")
    login = server.create_role("harness_ledger_login_w", login=True)
    dbname = server.create_database(prefix)
    commands.migrate(
        server.dsn_for(dbname, login),
        clock=utc_now,
        settings=LedgerSettings(),
        redactor=PLAIN_REDACTOR,
        admin_dsn=server.dsn_for(dbname),
        owner_role=owner,
        app_role=app,
        grant_app_to=[login],
    )
    return PgLedgerDb(dbname, server.dsn_for(dbname, login), server.dsn_for(dbname), owner, app, login)


def dispatch_worker(workspace: str, ledger: str, worker: int, calls: int) -> list[str]:
    """One spawned process of the dispatcher concurrency test: `calls` dispatches (ok, error and invalid_input
    mixed) into 3 shared conversations and 1 private one; returns each call's error code ("" for success)."""
    from testops import REGISTRY

    from harness.dispatch import CallContext, dispatch
    from harness.ledger.ids import uuid7

    ctx = context_for(Path(workspace), ledger=ledger)
    recorder = recorder_for(ctx)
    kinds = [("test_echo", {"required_name": "n"}), ("test_fail", {"code": "not_found"}), ("test_echo", {})]
    codes = []
    try:
        for n in range(calls):
            conversation = f"shared-{n % 3}" if n % 4 else f"private-{worker}"
            call = CallContext(
                surface="cli",
                conversation_id=conversation,
                conversation_source="flag",
                request_id=str(uuid7()),
                tool_call_id=str(uuid7()),
            )
            name, arguments = kinds[n % 3]
            outcome = dispatch(REGISTRY, name, arguments, call, ctx, recorder=recorder, clock=ctx.clock)
            codes.append(outcome.error_code)
    finally:
        recorder.close()
    return codes
