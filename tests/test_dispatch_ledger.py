"""The dispatcher records every call (docs/ledger.md §11, docs/ledger.md §14 "Dispatcher"): exactly one start and one end with the
docs/ledger.md §11.2 values over the CLI and the in-memory MCP client, for every outcome; ledger_unavailable refuses the call
before its handler; sidecars; a crash leaves the call in flight."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shlex
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import psycopg
import pytest
from mcp import Client
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)
from pydantic import BaseModel, ConfigDict, Field
from recording_support import (
    LOCAL_CALLER,
    Expected,
    FakeClock,
    all_rows,
    check_pair,
    context_for,
    conversation_rows,
    make_pg_ledger,
    recorder_for,
    write_config,
)
from runners import CliResult, run_cli
from testops import operations

from harness.dispatch import CallContext, dispatch
from harness.errors import EXIT_CODES
from harness.ledger.ids import ID_RE, session_conversation_id
from harness.ledger.model import LedgerRow
from harness.ledger.recorder import LedgerRecorder
from harness.ledger.sidecars import sidecar_relpath
from harness.logs import setup_logging
from harness.mcp_server import build_server
from harness.surface import OPERATIONS, Implementation, Operation, Registry
from harness.text import canonjson
from tests.surface.surface_corpus import PACKAGE_CORPUS, prepare_workspace

TESTS_DIR = Path(__file__).resolve().parent
GITHUB_LIKE = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2  # assembled here; a github_token shape (rule 37)
CRASH_LAUNCHER = (
    "import sys; sys.path.insert(0, {tests!r}); from testops import CRASH_REGISTRY; "
    "from harness.cli import main; main(sys.argv[1:], registry=CRASH_REGISTRY)"
)
CLIENT = types.Implementation(name="wire-client", version="1.2.3")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_LEDGER_URL", "HARNESS_RULES_SHA256"):
        monkeypatch.delenv(name, raising=False)


# A spy operation: it counts its calls and can take the SQLite ledger's write lock and keep it.
class SpyInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hold_lock: bool = Field(False, description="Take the ledger's write lock and keep it.")


class SpyOutput(BaseModel):
    calls: int


class Spy:
    def __init__(self) -> None:
        self.calls = 0
        self.held: list[sqlite3.Connection] = []

    def handle(self, args: SpyInput, ctx: Any) -> SpyOutput:
        self.calls += 1
        if args.hold_lock:
            self.held.append(hold_write_lock(Path(ctx.settings.ledger_target)))
        return SpyOutput(calls=self.calls)

    def release(self) -> None:
        for conn in self.held:
            conn.rollback()
            conn.close()
        self.held.clear()

    def registry(self) -> Registry:
        spy_op = Operation(
            "test_spy",
            "Spy (test)",
            "investigate",
            implementation=Implementation(SpyInput, SpyOutput, "Count calls (test only).", self.handle),
        )
        return Registry([*operations(), spy_op])


@pytest.fixture
def spy() -> Iterator[Spy]:
    found = Spy()
    yield found
    found.release()


def hold_write_lock(path: Path) -> sqlite3.Connection:
    """Another connection holding the SQLite write lock (what a stuck writer looks like)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def cli(workspace: Path, *args: str, registry: Registry | None = None) -> CliResult:
    return run_cli(["--workspace", str(workspace), *args], registry)


def ledger_path(workspace: Path) -> Path:
    return workspace / "ledger.sqlite3"


def text_of(result: CliResult) -> str:
    assert result.stdout.endswith("\n")
    return result.stdout[:-1]


# -- every operation of the package registry, through both front doors


def package_workspace(tmp_path: Path) -> tuple[Path, list[tuple[str, dict[str, Any]]]]:
    """The parity corpus workspace plus a watcher checkout, and the corpus calls plus repo_file reads of it
    (a file and a missing one), so that every error code the package can produce offline is recorded."""
    workspace = prepare_workspace(tmp_path)
    source = workspace / "watcher" / "src" / "trustsight"
    source.mkdir(parents=True)
    (source / "rules.py").write_text("RULES = []\n")
    with (workspace / "harness.toml").open("a") as config:
        config.write('\n[triage]\nwatcher_repo = "watcher"\n')
    extra = [("repo_file", {"path": "src/trustsight/rules.py"}), ("repo_file", {"path": "src/trustsight/gone.py"})]
    return workspace, [*PACKAGE_CORPUS, *extra]


def test_every_package_operation_over_the_cli_writes_one_pair_per_call(tmp_path: Path) -> None:
    workspace, calls = package_workspace(tmp_path)
    redactor = context_for(workspace).redactor
    codes: dict[str, set[str]] = {}
    for n, (name, arguments) in enumerate(calls):
        conversation = f"cli-corpus-{n}"
        args_text = canonjson.dumps(arguments)
        result = cli(workspace, "--conversation", conversation, name, "--input", args_text)
        expected = Expected(name, args_text, text_of(result), "cli", result.exit_code, "flag")
        check_pair(conversation_rows(ledger_path(workspace), conversation), expected, redactor)
        codes.setdefault(name, set()).add(json.loads(result.stdout).get("error", {}).get("code", "ok"))
    assert set(codes) == set(OPERATIONS.names())
    assert set().union(*codes.values()) >= {"ok", "invalid_input", "not_found", "refused"}


@pytest.mark.anyio
async def test_every_package_operation_over_mcp_writes_one_pair_per_call(tmp_path: Path) -> None:
    workspace, calls = package_workspace(tmp_path)
    ctx = context_for(workspace)
    recorder = recorder_for(ctx)
    meta = {"transport": "stdio", "client": {"name": CLIENT.name, "version": CLIENT.version}}
    try:
        async with Client(build_server(OPERATIONS, ctx, recorder=recorder), client_info=CLIENT) as client:
            for n, (name, arguments) in enumerate(calls):
                conversation = f"mcp-corpus-{n}"
                result = await client.call_tool(name, arguments, meta={"harness/conversation_id": conversation})
                expected = Expected(
                    name, canonjson.dumps(arguments), result.content[0].text, "mcp", None, "meta", meta=meta
                )
                check_pair(conversation_rows(ledger_path(workspace), conversation), expected, ctx.redactor)
    finally:
        recorder.close()
    assert {name for name, _ in calls} == set(OPERATIONS.names())


# -- every outcome, through both front doors (test registry)

OUTCOMES: list[tuple[str, dict[str, Any], str, bool]] = [
    ("test_echo", {"required_name": "n", "text": "hi", "tags": ["a"]}, "", False),
    ("test_fail", {"code": "invalid_input", "message": "bad verdict"}, "invalid_input", False),
    ("test_fail", {"code": "not_found"}, "not_found", False),
    ("test_fail", {"code": "refused"}, "refused", False),
    ("test_fail", {"code": "upstream_unavailable"}, "upstream_unavailable", False),
    ("test_fail", {"code": "internal_error"}, "internal_error", False),
    ("test_echo", {}, "invalid_input", True),
    ("test_echo", {"required_name": "n", "count": 11}, "invalid_input", True),
    ("test_echo", {"required_name": "n", "eventType": "x"}, "invalid_input", True),
    ("no_such_operation", {}, "unknown_operation", True),
]


@pytest.mark.parametrize(("name", "arguments", "code", "refused"), OUTCOMES)
def test_each_outcome_over_the_cli(tmp_path: Path, name: str, arguments: dict, code: str, refused: bool) -> None:
    from testops import REGISTRY

    argv = ["--input", canonjson.dumps(arguments)]
    result = cli(tmp_path, "--conversation", "outcome", name, *argv, registry=REGISTRY)
    assert result.exit_code == (EXIT_CODES[code] if code else 0)
    # An unknown operation never parsed its flags: the argv is recorded as given.
    args_text = shlex.join(argv) if code == "unknown_operation" else canonjson.dumps(arguments)
    expected = Expected(name, args_text, text_of(result), "cli", result.exit_code, "flag", refused=refused)
    check_pair(conversation_rows(ledger_path(tmp_path), "outcome"), expected, context_for(tmp_path).redactor)
    if code == "internal_error":
        # The traceback goes to the (redacted) stderr log only, never to the row.
        assert "Traceback" in result.stderr
        assert "Traceback" not in (conversation_rows(ledger_path(tmp_path), "outcome")[1].error or "")


@pytest.mark.anyio
async def test_each_outcome_over_mcp(tmp_path: Path) -> None:
    from testops import REGISTRY

    clock = FakeClock()
    ctx = context_for(tmp_path, clock=clock)
    recorder = recorder_for(ctx)
    meta = {"transport": "stdio", "client": {"name": CLIENT.name, "version": CLIENT.version}}
    try:
        async with Client(build_server(REGISTRY, ctx, recorder=recorder), client_info=CLIENT) as client:
            for n, (name, arguments, code, refused) in enumerate(OUTCOMES):
                result = await client.call_tool(name, arguments, meta={"harness/conversation_id": f"o-{n}"})
                assert result.is_error == bool(code)
                rows = conversation_rows(ledger_path(tmp_path), f"o-{n}")
                expected = Expected(
                    name,
                    canonjson.dumps(arguments),
                    result.content[0].text,
                    "mcp",
                    None,
                    "meta",
                    refused=refused,
                    meta=meta,
                )
                start, end = check_pair(rows, expected, ctx.redactor)
                # Timestamps come from the context's clock.
                assert start.started_at in clock.readings and end.ended_at in clock.readings
    finally:
        recorder.close()


def test_a_malformed_input_is_recorded_as_given(tmp_path: Path) -> None:
    from testops import REGISTRY

    result = cli(tmp_path, "--conversation", "raw", "test_echo", "--input", '{"required_name": ', registry=REGISTRY)
    assert result.exit_code == 2
    expected = Expected(
        "test_echo", shlex.join(["--input", '{"required_name": ']), text_of(result), "cli", 2, "flag", refused=True
    )
    check_pair(conversation_rows(ledger_path(tmp_path), "raw"), expected, context_for(tmp_path).redactor)


@pytest.mark.parametrize(
    ("requested", "tool_name", "requested_meta"),
    [
        ("nope_op", "nope_op", None),
        ("Bad Name!", "_invalid_name", "Bad Name!"),
        ("a" * 300, "_invalid_name", "a" * 256 + "...[capped]"),
        (GITHUB_LIKE.lower(), "_invalid_name", "[REDACTED:github_token]"),
    ],
)
def test_unknown_operation_names(tmp_path: Path, requested: str, tool_name: str, requested_meta: str | None) -> None:
    result = cli(tmp_path, "--conversation", "names", requested)
    assert result.exit_code == 2
    (start, end) = conversation_rows(ledger_path(tmp_path), "names")
    assert start.tool_name == end.tool_name == tool_name
    assert start.meta_object.get("requested_name") == requested_meta
    assert end.error.startswith("unknown_operation: unknown operation")


# -- identifiers and meta (docs/ledger.md §3, docs/ledger.md §11.2)


def test_cli_conversation_sources_and_id_normalization(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from testops import REGISTRY

    def call(*flags: str) -> LedgerRow:
        before = {r.id for r in all_rows(ledger_path(tmp_path))} if ledger_path(tmp_path).exists() else set()
        cli(tmp_path, *flags, "test_echo", "--required-name", "n", registry=REGISTRY)
        (start,) = [r for r in all_rows(ledger_path(tmp_path)) if r.id not in before and r.event == "start"]
        return start

    def hashed(text: str) -> str:
        return "h-" + hashlib.sha256(text.encode()).hexdigest()[:32]

    flag = call("--conversation", "conv-1")
    assert (flag.conversation_id, flag.meta_object["conversation_source"]) == ("conv-1", "flag")
    spaced = call("--conversation", "my conversation")
    assert (spaced.conversation_id, spaced.meta_object["conversation_source"]) == (
        hashed("my conversation"),
        "flag+hashed",
    )
    secret = call("--conversation", GITHUB_LIKE)
    assert (secret.conversation_id, secret.meta_object["conversation_source"]) == (hashed(GITHUB_LIKE), "flag+hashed")
    generated = [call(), call()]
    assert {r.meta_object["conversation_source"] for r in generated} == {"generated"}
    assert generated[0].conversation_id != generated[1].conversation_id
    monkeypatch.setenv("HARNESS_CONVERSATION_ID", "from-env")
    env = call()
    assert (env.conversation_id, env.meta_object["conversation_source"]) == ("from-env", "env")
    assert call("--conversation", "flag-wins").conversation_id == "flag-wins"

    starts = [flag, spaced, secret, *generated, env]
    # Request and tool call ids are fresh UUIDv7s per invocation; the CLI has no transport or client.
    for row in starts:
        for value in (row.request_id, row.tool_call_id, *([row.conversation_id] if row in generated else [])):
            assert ID_RE.fullmatch(value) and len(value) == 36 and value[14] == "7"
        assert set(row.meta_object) == {"surface", "harness_version", "conversation_source", "caller"}
    assert len({r.tool_call_id for r in starts}) == len({r.request_id for r in starts}) == len(starts)


@pytest.mark.anyio
async def test_mcp_conversation_sources_client_and_ids(tmp_path: Path) -> None:
    from testops import REGISTRY

    ctx = context_for(tmp_path)
    recorder = recorder_for(ctx)
    long_client = types.Implementation(name="n" * 100, version="v1")
    args = {"required_name": "n"}
    try:
        async with Client(build_server(REGISTRY, ctx, recorder=recorder), client_info=long_client) as client:
            await client.call_tool("test_echo", args)
            await client.call_tool("test_echo", args)
            await client.call_tool("test_echo", args, meta={"harness/conversation_id": 42, "harness/tool_call_id": 7})
            await client.call_tool(
                "test_echo", args, meta={"harness/conversation_id": "a b", "harness/tool_call_id": "not an id"}
            )
        async with Client(build_server(REGISTRY, ctx, recorder=recorder, transport="http")) as client:
            await client.call_tool("test_echo", args)
            await client.call_tool("test_echo", args)
    finally:
        recorder.close()
    starts = [r for r in all_rows(ledger_path(tmp_path)) if r.event == "start"]
    by_source: dict[str, list[LedgerRow]] = {}
    for row in starts:
        by_source.setdefault(row.meta_object["conversation_source"], []).append(row)

    # stdio: one conversation per server process, calls numbered in order.
    process = by_source["process"]
    assert len(process) == 2 and len({r.conversation_id for r in process}) == 1
    assert sorted(r.seq for r in process) == [1, 2]
    assert process[0].meta_object["client"] == {"name": "n" * 64 + "...[capped]", "version": "v1"}
    assert process[0].meta_object["transport"] == "stdio"
    (meta_int,) = by_source["meta"]
    assert (meta_int.conversation_id, meta_int.meta_object["client_tool_call_id"]) == ("42", "7")
    (meta_hashed,) = by_source["meta+hashed"]
    assert meta_hashed.conversation_id == "h-" + hashlib.sha256(b"a b").hexdigest()[:32]
    assert meta_hashed.meta_object["client_tool_call_id"] == "h-" + hashlib.sha256(b"not an id").hexdigest()[:32]
    # Streamable HTTP without a session: a fresh conversation per call, so unrelated agents never share a chain.
    generated = by_source["generated"]
    assert len(generated) == 2 and len({r.conversation_id for r in generated}) == 2
    assert {r.meta_object["transport"] for r in generated} == {"http"}
    for row in starts:
        assert ID_RE.fullmatch(row.request_id) and row.request_id.isdigit()  # the JSON-RPC id
        assert len(row.tool_call_id) == 36 and row.tool_call_id[14] == "7"
        assert row.exit_code is None
    assert len({r.tool_call_id for r in starts}) == len(starts)


def _rpc(client: httpx2.Client, url: str, body: dict, session: str | None) -> httpx2.Response:
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-11-25",
    }
    if session:
        headers["mcp-session-id"] = session
    return client.post(url, content=json.dumps(body), headers=headers)


def test_http_session_is_one_conversation_stored_as_its_digest(tmp_path: Path) -> None:
    from tests.e2e.procs import clean_env, free_port, harness_argv, wait_for_port

    port = free_port()
    argv = harness_argv("--workspace", str(tmp_path), "serve", "--http", f"127.0.0.1:{port}", test_registry=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for_port(port, proc)
        with httpx2.Client(timeout=20) as client:
            init = _rpc(
                client,
                url,
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "raw-client", "version": "0.1"},
                    },
                },
                None,
            )
            session = init.headers["mcp-session-id"]
            _rpc(client, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
            for n in (2, 3):
                _rpc(
                    client,
                    url,
                    {
                        "jsonrpc": "2.0",
                        "id": n,
                        "method": "tools/call",
                        "params": {"name": "test_echo", "arguments": {"required_name": "n"}},
                    },
                    session,
                )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    rows = all_rows(ledger_path(tmp_path))
    assert [r.event for r in rows] == ["start", "end", "start", "end"]
    assert {r.conversation_id for r in rows} == {session_conversation_id(session)}
    assert [r.request_id for r in rows] == ["2", "2", "3", "3"]
    start = rows[0].meta_object
    assert start["conversation_source"] == "session+hashed"
    assert start["client"] == {"name": "raw-client", "version": "0.1"} and start["transport"] == "http"
    assert session not in ledger_path(tmp_path).read_bytes().decode("latin-1")


# -- operator commands share the recorder


def test_operator_commands_are_recorded_and_init_creates_the_ledger_first(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    first = cli(workspace, "--conversation", "ops", "init", "--empty")
    assert first.exit_code == 0
    assert first.json()["created"] == ["harness.toml", "store", "ledger.sqlite3"]
    assert stat.S_IMODE(ledger_path(workspace).stat().st_mode) == 0o600
    again = cli(workspace, "--conversation", "ops", "init")
    assert again.json()["created"] == []
    events = tmp_path / "events.jsonl"
    events.write_text(
        json.dumps(
            {
                "id": "e-1",
                "timestamp": "2026-04-01T10:00:00Z",
                "source": "github",
                "type": "login",
                "actor": "alice",
                "org": "contoso",
                "payload": {},
            }
        )
        + "\n"
    )
    ingest = cli(workspace, "--conversation", "ops", "ingest", "events", str(events))
    build = cli(workspace, "--conversation", "ops", "baseline", "build")
    rows = conversation_rows(ledger_path(workspace), "ops")
    redactor = context_for(workspace).redactor
    calls = [
        ("cli.init", {"empty": True}, first),
        ("cli.init", {"empty": False}, again),
        ("cli.ingest_events", {"files": [str(events)], "format": "harness", "rejects": ""}, ingest),
        ("cli.baseline_build", {}, build),
    ]
    assert len(rows) == 2 * len(calls)
    for n, (tool, arguments, result) in enumerate(calls):
        expected = Expected(tool, canonjson.dumps(arguments), text_of(result), "cli", result.exit_code, "flag")
        check_pair(rows[2 * n : 2 * n + 2], expected, redactor)


# -- ledger_unavailable: the call is refused before its handler, nothing is written


def _row_count(workspace: Path) -> int:
    return len(all_rows(ledger_path(workspace)))


def test_sqlite_write_lock_refuses_the_cli_call(tmp_path: Path, spy: Spy) -> None:
    write_config(tmp_path, busy_timeout_ms=50)
    assert cli(tmp_path, "test_spy", registry=spy.registry()).exit_code == 0
    before = _row_count(tmp_path)
    holder = hold_write_lock(ledger_path(tmp_path))
    try:
        result = cli(tmp_path, "--conversation", "locked", "test_spy", registry=spy.registry())
        refused = cli(tmp_path, "--conversation", "locked", "test_spy", "--hold-lock", "maybe", registry=spy.registry())
    finally:
        holder.rollback()
        holder.close()
    assert result.exit_code == 3
    assert result.json()["error"]["code"] == "ledger_unavailable"
    assert result.json()["error"]["operation"] == "test_spy"
    assert "database is locked" in result.json()["error"]["message"]
    assert spy.calls == 1
    assert "ledger unavailable" in result.stderr and "locked" in result.stderr
    # A call refused before its handler keeps its own error when the pair cannot be written.
    assert refused.exit_code == 2 and refused.json()["error"]["code"] == "invalid_input"
    assert "not recorded" in refused.stderr
    assert _row_count(tmp_path) == before


@pytest.mark.anyio
async def test_sqlite_write_lock_refuses_the_mcp_call(tmp_path: Path, spy: Spy) -> None:
    write_config(tmp_path, busy_timeout_ms=50)
    ctx = context_for(tmp_path)
    recorder = recorder_for(ctx)
    holder = hold_write_lock(ledger_path(tmp_path))
    try:
        async with Client(build_server(spy.registry(), ctx, recorder=recorder)) as client:
            result = await client.call_tool("test_spy", {})
    finally:
        holder.rollback()
        holder.close()
        recorder.close()
    assert result.is_error and result.structured_content is None
    assert json.loads(result.content[0].text)["error"]["code"] == "ledger_unavailable"
    assert spy.calls == 0
    assert _row_count(tmp_path) == 0


@pytest.mark.pg
def test_postgres_login_without_insert_refuses_the_call(tmp_path: Path, spy: Spy, pg_server: PgServer) -> None:  # noqa: F811
    db = make_pg_ledger(pg_server)
    reader_login = pg_server.create_role("harness_ledger_reader_w", login=True)
    with psycopg.connect(db.admin_dsn, autocommit=True) as conn:
        conn.execute(f'GRANT USAGE ON SCHEMA ledger TO "{reader_login}"')
        conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA ledger TO "{reader_login}"')
    try:
        dsn = pg_server.dsn_for(db.dbname, reader_login)
        result = cli(tmp_path, "--ledger", dsn, "test_spy", registry=spy.registry())
        invalid = cli(tmp_path, "--ledger", dsn, "test_spy", "--input", "[]", registry=spy.registry())
        assert result.exit_code == 3
        error = result.json()["error"]
        assert (error["code"], error["operation"]) == ("ledger_unavailable", "test_spy")
        assert "permission denied" in error["message"]
        assert spy.calls == 0
        assert invalid.exit_code == 2 and invalid.json()["error"]["code"] == "invalid_input"
        with psycopg.connect(db.admin_dsn) as conn:
            assert conn.execute("SELECT count(*) FROM ledger.tool_invocations").fetchone()[0] == 0
        # The app login records the same call.
        ok = cli(tmp_path, "--ledger", db.dsn, "--conversation", "pg-ok", "test_spy", registry=spy.registry())
        assert ok.exit_code == 0
        expected = Expected("test_spy", "{}", text_of(ok), "cli", 0, "flag")
        check_pair(conversation_rows(db.dsn, "pg-ok"), expected, context_for(tmp_path).redactor)
    finally:
        pg_server.drop_database(db.dbname)


def test_a_deleted_conversation_is_never_reused(tmp_path: Path, spy: Spy) -> None:
    assert cli(tmp_path, "--conversation", "gone", "test_spy", registry=spy.registry()).exit_code == 0
    with sqlite3.connect(ledger_path(tmp_path), isolation_level=None) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("DELETE FROM conversations WHERE id = 'gone'")
    result = cli(tmp_path, "--conversation", "gone", "test_spy", registry=spy.registry())
    assert result.exit_code == 3
    assert result.json()["error"] == {
        "code": "ledger_unavailable",
        "message": "conversation gone was deleted from the ledger; use a new conversation id",
        "operation": "test_spy",
    }
    assert spy.calls == 1


# -- the end row: one retry after 50 ms, then the call stays in flight


def _dispatch_spy(workspace: Path, spy: Spy, sleep: Callable[[float], None]) -> tuple[Any, list[LedgerRow]]:
    ctx = context_for(workspace)
    opened = recorder_for(ctx)
    recorder = LedgerRecorder(
        opened.store,
        settings=ctx.settings.ledger,
        redactor=ctx.redactor,
        clock=ctx.clock,
        sleep=sleep,
    )
    call = CallContext(
        surface="cli", conversation_id="end-fail", conversation_source="flag", request_id="r-1", tool_call_id="t-1"
    )
    try:
        outcome = dispatch(
            spy.registry(), "test_spy", {"hold_lock": True}, call, ctx, recorder=recorder, clock=ctx.clock
        )
    finally:
        spy.release()
        recorder.close()
    return outcome, conversation_rows(ledger_path(workspace), "end-fail")


def test_the_end_row_is_retried_once_after_50_ms(tmp_path: Path, spy: Spy) -> None:
    write_config(tmp_path, busy_timeout_ms=50)
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        spy.release()

    outcome, rows = _dispatch_spy(tmp_path, spy, sleep)
    assert sleeps == [0.05]
    assert outcome.text == '{"calls":1}'
    assert [r.event for r in rows] == ["start", "end"] and rows[1].status == "ok"


def test_an_end_row_that_cannot_be_written_leaves_the_call_in_flight(
    tmp_path: Path, spy: Spy, capsys: pytest.CaptureFixture[str]
) -> None:
    setup_logging()
    write_config(tmp_path, busy_timeout_ms=50)
    sleeps: list[float] = []
    outcome, rows = _dispatch_spy(tmp_path, spy, sleeps.append)
    assert sleeps == [0.05]
    assert outcome.text == '{"calls":1}' and not outcome.is_error
    assert [r.event for r in rows] == ["start"]
    lines = [line for line in capsys.readouterr().err.splitlines() if "end row not written" in line]
    assert len(lines) == 1 and "conversation end-fail, request r-1, tool call t-1" in lines[0]


# -- sidecars (docs/ledger.md §11.3)


def _big(workspace: Path, conversation: str, size: int, text: str = "") -> tuple[CliResult, LedgerRow]:
    from testops import REGISTRY

    result = cli(
        workspace, "--conversation", conversation, "test_big", "--size", str(size), "--text", text, registry=REGISTRY
    )
    assert result.exit_code == 0
    rows = conversation_rows(ledger_path(workspace), conversation)
    assert [r.event for r in rows] == ["start", "end"]
    return result, rows[1]


def _stored_result(workspace: Path, end: LedgerRow) -> bytes:
    from recording_support import reader

    store = reader(ledger_path(workspace))
    try:
        with store.snapshot() as snap:
            text = snap.sidecar(end.id)
    finally:
        store.close()
    assert text is not None
    return text.encode("utf-8")


def test_a_result_over_the_preview_cap_is_stored_redacted_with_its_end_row(tmp_path: Path) -> None:
    result, end = _big(tmp_path, "side", 5000, f"token {GITHUB_LIKE} end")
    response = text_of(result)
    assert GITHUB_LIKE in response  # the caller receives its result unchanged
    relpath = f"sidecars/c-{hashlib.sha256(b'side').hexdigest()[:32]}/{end.id}.result"
    assert end.result_sidecar_path == relpath == sidecar_relpath("side", end.id)
    assert end.result_truncated is True and end.result_bytes == len(response)
    content = _stored_result(tmp_path, end)
    assert content.decode() == context_for(tmp_path).redactor.redact_for_ledger(response, 1_048_576)
    assert GITHUB_LIKE.encode() not in content and b"[REDACTED:github_token]" in content
    assert end.meta_object == {
        "caller": LOCAL_CALLER,
        "sidecar_bytes": len(content),
        "sidecar_sha256": hashlib.sha256(content).hexdigest(),
        "sidecar_capped": False,
    }
    # One durable write per row: the result is in the ledger, no file beside it (docs/ledger.md §11.3).
    assert not (tmp_path / "sidecars").exists()
    report = cli(tmp_path, "ledger", "verify", "--sidecars").json()
    assert (report["ok"], report["sidecars_checked"]) == (True, 1)


def test_the_preview_cap_is_the_sidecar_threshold(tmp_path: Path) -> None:
    envelope = len('{"payload":""}')
    exact, exact_end = _big(tmp_path, "exact", 2048 - envelope)
    over, over_end = _big(tmp_path, "over", 2049 - envelope)
    assert len(text_of(exact)) == 2048 and exact_end.result_sidecar_path is None and not exact_end.result_truncated
    assert len(text_of(over)) == 2049 and over_end.result_sidecar_path is not None


def test_a_sidecar_is_capped_at_sidecar_max_bytes(tmp_path: Path) -> None:
    write_config(tmp_path, sidecar_max_bytes=4096)
    _, end = _big(tmp_path, "capped", 10_000)
    content = _stored_result(tmp_path, end)
    assert len(content) == 4096 + len("...[capped]") and content.endswith(b"...[capped]")
    assert end.meta_object["sidecar_capped"] is True and end.meta_object["sidecar_bytes"] == len(content)


def test_sidecars_off_writes_none(tmp_path: Path) -> None:
    write_config(tmp_path, sidecars=False)
    _, end = _big(tmp_path, "off", 5000)
    assert end.result_sidecar_path is None and end.result_truncated is True
    assert end.meta_object == {"caller": LOCAL_CALLER}
    assert not (tmp_path / "sidecars").exists()
    with sqlite3.connect(ledger_path(tmp_path)) as conn:
        assert conn.execute("SELECT count(*) FROM result_sidecars").fetchone() == (0,)


def _make_read_only(directory: Path) -> Callable[[], None]:
    """Make a directory unwritable for this process; returns the undo. Root ignores modes, so it uses the
    immutable attribute instead."""
    if os.geteuid() != 0:
        directory.chmod(0o500)
        return lambda: directory.chmod(0o700)
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(directory)], capture_output=True).returncode != 0:
        pytest.fail("running as root needs chattr +i to make a directory read-only")
    return lambda: subprocess.run([chattr, "-i", str(directory)], check=True)


def test_a_read_only_sidecar_directory_is_never_needed(tmp_path: Path) -> None:
    (tmp_path / "sidecars").mkdir(mode=0o700)
    undo = _make_read_only(tmp_path / "sidecars")
    try:
        result, end = _big(tmp_path, "ro", 5000)
    finally:
        undo()
    assert json.loads(result.stdout) == {"payload": "x" * 5000}
    assert end.result_sidecar_path is not None and end.result_truncated is True
    assert set(end.meta_object) == {"caller", "sidecar_bytes", "sidecar_sha256", "sidecar_capped"}
    assert _stored_result(tmp_path, end).decode() == text_of(result)
    assert os.listdir(tmp_path / "sidecars") == []


# -- a crash inside the handler


def test_a_crash_in_the_handler_leaves_an_in_flight_start(tmp_path: Path) -> None:
    from tests.e2e.procs import clean_env

    launcher = [sys.executable, "-c", CRASH_LAUNCHER.format(tests=str(TESTS_DIR))]
    argv = [*launcher, "--workspace", str(tmp_path), "--conversation", "crash", "test_crash", "--status", "70"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=60)
    assert proc.returncode == 70 and proc.stdout == ""
    from recording_support import reader

    store = reader(ledger_path(tmp_path))
    try:
        cutoff = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=1)
        (in_flight,) = store.list_in_flight_before(cutoff)
        assert (in_flight.conversation_id, in_flight.tool_name, in_flight.event) == ("crash", "test_crash", "start")
        assert in_flight.arguments == '{"status":70}'
        assert store.list_in_flight_before(in_flight.ts) == []
    finally:
        store.close()
    listed = cli(tmp_path, "ledger", "list", "--in-flight-before", "2999-01-01T00:00:00Z").json()
    assert [(c["tool_name"], c["status"], c["ended_at"]) for c in listed["calls"]] == [
        ("test_crash", "in_flight", None)
    ]


# -- the overhead bench runs


def test_the_dispatch_overhead_bench_prints_one_report() -> None:
    bench = TESTS_DIR.parent / "bench" / "dispatch_overhead.py"
    done = subprocess.run(
        [sys.executable, str(bench), "--quick", "--calls", "20"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["bench"] == "dispatch_overhead" and set(report["machine"]) >= {"cpus", "python"}
    assert [r["name"] for r in report["results"]] == ["dispatch.ledger_overhead_p50", "dispatch.ledger_p99"]
    assert all(r["baseline"] > 0 and r["ratio"] > 0 for r in report["results"])


# -- a configured secret cut by the arguments cap (docs/decisions.md, "Secrets in output and logs")

CUT_SECRET = "Zk3p9QxV7mN2rT8wAbCdEfGhIjKlMnOpQrStUvW"  # 39 characters; 38 of them were stored before


def _straddling_arguments(kept: int) -> dict[str, Any]:
    """test_echo arguments whose canonical JSON puts `kept` bytes of CUT_SECRET before the 8 KiB cap."""
    head = '{"meta":{"a":"'
    filler = 8192 - len(head) - kept
    return {"meta": {"a": "x" * filler + CUT_SECRET}, "required_name": "n"}


def _stored_arguments(workspace: Path, conversation: str) -> str:
    (start, _) = conversation_rows(ledger_path(workspace), conversation)
    return start.arguments


@pytest.mark.anyio
@pytest.mark.parametrize("kept", [4, 20, 38])
async def test_a_known_secret_cut_by_the_arguments_cap_keeps_no_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: int
) -> None:
    from testops import REGISTRY

    monkeypatch.setenv("MYAPP_API_KEY", CUT_SECRET)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    arguments = _straddling_arguments(kept)
    assert canonjson.dumps(arguments).index(CUT_SECRET) + kept == 8192
    cli = run_cli(
        ["--workspace", str(workspace), "--conversation", "cut-cli", "test_echo", "--input", json.dumps(arguments)],
        REGISTRY,
    )
    assert cli.exit_code == 0
    ctx = context_for(workspace)
    recorder = recorder_for(ctx)
    try:
        async with Client(build_server(REGISTRY, ctx, recorder=recorder)) as client:
            await client.call_tool("test_echo", arguments, meta={"harness/conversation_id": "cut-mcp"})
    finally:
        recorder.close()
    for conversation in ("cut-cli", "cut-mcp"):
        stored = _stored_arguments(workspace, conversation)
        assert stored.endswith("...[capped]")
        assert CUT_SECRET[:4] not in stored, stored[-60:]
