"""No secret at rest (docs/ledger.md §14): per-run sentinels (an opaque value in HARNESS_TEST_SENTINEL_TOKEN and a
freshly generated positive of every catalogue rule, in its fixture's syntax) go into every string argument of
every operation over the CLI and over MCP (a stdio subprocess), into _meta ids, the clientInfo, inputs whose
error echoes them, big echo results (sidecars) and files given to `harness ingest`. None of them, nor their
JSON-escaped or percent-encoded forms, may reach the raw ledger bytes (SQLite file, -wal, -shm; a PostgreSQL COPY
of every ledger table), a sidecar, the stderr of any process, or `harness ledger export`."""

from __future__ import annotations

import dataclasses
import json
import random
import secrets
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import psycopg
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)
from recording_support import make_pg_ledger
from runners import CliResult, run_cli
from testops import FULL_REGISTRY

from harness.cliargs import flags_for
from harness.ledger.postgres import LEDGER_TABLES
from harness.surface import OPERATIONS
from tests.e2e.procs import clean_env
from tests.text.redact_fixtures import FIXTURES
from tests.triage.triage_samples import v0

SENTINEL_ENV = "HARNESS_TEST_SENTINEL_TOKEN"
CHUNK_BYTES = 1200
SHORT_BYTES = 120
TESTS_DIR = Path(__file__).resolve().parent.parent
LAUNCHER = (
    "import sys; sys.path.insert(0, {tests!r}); from testops import FULL_REGISTRY; "
    "from harness.cli import main; main(sys.argv[1:], registry=FULL_REGISTRY)"
)


@dataclasses.dataclass(frozen=True)
class Sentinels:
    """This run's secrets: the texts to place, and the bodies that must never be found at rest."""

    seed: int
    opaque: str
    positives: tuple[str, ...]
    bodies: tuple[tuple[str, str], ...]  # (label, secret body)

    @property
    def short(self) -> list[str]:
        """Texts small enough for narrow fields and echoing error messages."""
        return [self.opaque, *(p for p in self.positives if len(p.encode()) <= SHORT_BYTES)]

    def chunks(self) -> list[str]:
        """Every text, packed into chunks of about CHUNK_BYTES (joined by newlines)."""
        out, current = [], ""
        for text in (self.opaque, *self.positives):
            if current and len((current + "\n" + text).encode()) > CHUNK_BYTES:
                out.append(current)
                current = ""
            current = f"{current}\n{text}" if current else text
        return [*out, current]

    def needles(self) -> list[tuple[str, bytes]]:
        """Each body as UTF-8, JSON-escaped and percent-encoded."""
        found = []
        for label, body in self.bodies:
            for form in {body, json.dumps(body)[1:-1], urllib.parse.quote(body, safe="")}:
                found.append((label, form.encode()))
        return found

ECHO_KEYS = ("password", "passwd", "pwd", "secret", "token", "api_key", "client_secret", "access_token", "PASSWORD")


def make_sentinels(seed: int) -> Sentinels:
    rng = random.Random(seed)
    opaque = "sentinel-" + secrets.token_hex(16)
    positives, bodies = [], [("known_secret", opaque)]
    for fixture in FIXTURES:
        secret = fixture.make(random.Random(rng.random()))
        positives.append(fixture.positives[0].template.replace("{s}", secret))
        bodies.append((fixture.rule_id, fixture.body(secret)))
    # Issue 8: a key="value" secret echoed inside an error message, JSON-escaped twice by the time it is stored.
    for key in ECHO_KEYS:
        value = "Zq7" + secrets.token_urlsafe(15).replace("-", "x").replace("_", "y")
        positives.append(json.dumps(json.dumps({"error": f'config rejected: {key}="{value}"'})))
        bodies.append((f"echo:{key}", value))
    return Sentinels(seed, opaque, tuple(positives), tuple(bodies))


@pytest.fixture(scope="module")
def sentinels() -> Sentinels:
    return make_sentinels(secrets.randbits(32))


def _value(kind: str, text: str) -> Any:
    return {"str": text, "str_list": [text], "object": {"note": text}}[kind]


BENIGN = {
    "entity": "baron",
    "finding_id": "f-1",
    "finding_family": "unusual-timing",
    "id": "evt-0001",
    "login": "octocat",
    "target_repo": "trustsight",
    "date": "2026-01-15",
    "path": "src/trustsight/rules.py",
}


def operation_calls(s: Sentinels) -> list[tuple[str, dict[str, Any]]]:
    """Every string argument of every package operation carrying each chunk in turn (other required fields
    benign), inputs whose errors echo short sentinels, and big echo results over the preview cap."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for n, chunk in enumerate(s.chunks()):
        for op in OPERATIONS:
            flags = [f for f in flags_for(op.impl.input_model) if f.kind in ("str", "str_list", "object")]
            base = {f.field: BENIGN.get(f.field, "x") for f in flags if f.required and f.kind == "str"}
            for flag in flags:
                calls.append((op.name, {**base, flag.field: _value(flag.kind, chunk)}))
        verdict = {**v0(), "verdict": "uncertain", "proposed_changes": [], "rationale": chunk}
        calls.append(("fp_agent_verify", {"verdict": verdict}))
        calls.append(("test_big", {"text": chunk, "size": 3000 + n}))
    for text in s.short:
        calls.append(("search_events", {"since": text}))
        calls.append(("test_fail", {"code": "refused", "message": text}))
        calls.append(("test_fail", {"code": "internal_error", "message": text}))
    return calls


def _cli_args(name: str, arguments: dict[str, Any]) -> list[str]:
    """Plain string fields as flags (argv reaches the front door as typed), everything else through --input."""
    plain = {k: v for k, v in arguments.items() if isinstance(v, str)}
    rest = {k: v for k, v in arguments.items() if not isinstance(v, str)}
    argv = [name]
    for key, value in plain.items():
        argv += ["--" + key.replace("_", "-"), value]
    return [*argv, "--input", json.dumps(rest)] if rest else argv


@dataclasses.dataclass
class Run:
    """One backend's workspace, its flags, and every stderr captured."""

    workspace: Path
    flags: list[str]
    admin_dsn: str | None
    stderr: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    # What the caller is shown (CLI stdout, MCP results): shaped data stays, the configured secret never does.
    shown: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    def cli(self, *args: str) -> CliResult:
        result = run_cli([*self.flags, *args], FULL_REGISTRY)
        self.stderr.append((f"cli {args[:3]}", result.stderr))
        self.shown.append((f"stdout of cli {args[:3]}", result.stdout))
        return result

    def process(self, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-c", LAUNCHER.format(tests=str(TESTS_DIR)), *self.flags, *args]
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
        self.stderr.append((f"process {args[:3]}", proc.stderr))
        if args[:2] != ("ledger", "export"):
            self.shown.append((f"stdout of process {args[:3]}", proc.stdout))
        return proc


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def run(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Run]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # Nothing may leave the machine: every outbound service points at a closed loopback port.
    (workspace / "harness.toml").write_text(
        '[github]\napi_url = "https://127.0.0.1:9"\n\n[aur]\nbase_url = "https://127.0.0.1:9"\n'
    )
    if request.param == "sqlite":
        yield Run(workspace, ["--workspace", str(workspace)], None)
        return
    server: PgServer = request.getfixturevalue("pg_server")
    db = make_pg_ledger(server, "harness_secrets")
    yield Run(workspace, ["--workspace", str(workspace), "--ledger", db.dsn], db.admin_dsn)
    server.drop_database(db.dbname)


def _ingest_files(s: Sentinels, directory: Path) -> tuple[Path, Path]:
    """A valid events file whose payload carries every sentinel, and an invalid one whose error echoes one."""
    good = directory / "events.jsonl"
    event = {
        "id": "evt-secret-1",
        "timestamp": "2026-04-01T10:00:00Z",
        "source": "github",
        "type": "login",
        "actor": "alice",
        "org": "contoso",
        "payload": {f"note_{n}": c for n, c in enumerate(s.chunks())},
    }
    good.write_text(json.dumps(event) + "\n")
    bad = directory / "bad.jsonl"
    bad.write_text(json.dumps({**event, "id": "evt-secret-2", "timestamp": s.short[1]}) + "\n")
    return good, bad


async def _mcp_calls(run: Run, s: Sentinels, env: dict[str, str]) -> list[bytes]:
    """Every call over a stdio server process; returns the raw SQLite files read while the server is up."""
    argv = [sys.executable, "-c", LAUNCHER.format(tests=str(TESTS_DIR)), *run.flags, "serve"]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    client_info = types.Implementation(name=s.opaque, version=s.short[-1][:64])
    short = s.short
    errlog = run.workspace.parent / "server.stderr"
    with errlog.open("w") as errors:
        async with Client(stdio_client(params, errlog=errors), client_info=client_info) as client:
            for n, (name, arguments) in enumerate(operation_calls(s)):
                meta = {
                    "harness/conversation_id": short[n % len(short)],
                    "harness/tool_call_id": short[(n + 1) % len(short)],
                }
                result = await client.call_tool(name, arguments, meta=meta if n % 2 else None)
                run.shown.append((f"MCP result of {name}", result.model_dump_json()))
            for text in short[:4]:
                result = await client.call_tool(text, {"x": text})
                run.shown.append(("MCP result of an unknown tool", result.model_dump_json()))
            await client.call_tool("get_raw_event", {"id": "evt-secret-1"})
            await client.call_tool("search_events", {"ids": ["evt-secret-1"]})
            live = _sqlite_files(run.workspace)
    run.stderr.append(("the MCP server", errlog.read_text()))
    return live


def _sqlite_files(workspace: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(workspace.glob("ledger.sqlite3*"))]


def _copy_tables(admin_dsn: str) -> list[bytes]:
    out = []
    with psycopg.connect(admin_dsn) as conn:
        for table in LEDGER_TABLES:
            data = bytearray()
            with conn.cursor().copy(f"COPY ledger.{table} TO STDOUT") as copy:
                for block in copy:
                    data += bytes(block)
            out.append(bytes(data))
    return out


def _leaks(s: Sentinels, haystacks: list[tuple[str, bytes]]) -> list[str]:
    found = []
    for where, data in haystacks:
        for label, needle in s.needles():
            if (at := data.find(needle)) >= 0:
                before = data[max(0, at - 80) : at]
                found.append(f"{label} in {where}, after {before.decode('utf-8', 'replace')!r}")
    return found


@pytest.mark.slow
@pytest.mark.anyio
async def test_no_sentinel_reaches_the_ledger_sidecars_logs_or_export(
    run: Run, sentinels: Sentinels, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = sentinels
    env = clean_env(**{SENTINEL_ENV: s.opaque})
    monkeypatch.setenv(SENTINEL_ENV, s.opaque)
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)
    assert run.cli("init").exit_code == 0

    # The CLI in-process for the whole matrix, and as real processes for files, echoes and unknown names.
    short = s.short
    for n, (name, arguments) in enumerate(operation_calls(s)):
        run.cli("--conversation", short[n % len(short)], *_cli_args(name, arguments))
    good, bad = _ingest_files(s, run.workspace.parent)
    assert run.process("ingest", "events", str(good), env=env).returncode == 0
    assert run.process("ingest", "events", str(bad), env=env).returncode == 2
    assert run.process("--conversation", short[2], "get_raw_event", "--id", "evt-secret-1", env=env).returncode == 0
    assert run.process("search_events", "--since", short[3], env=env).returncode == 2
    assert run.process(short[4], "--text", short[4], env=env).returncode == 2
    assert run.process("test_big", "--text", s.chunks()[0], "--size", "4000", env=env).returncode == 0

    live = await _mcp_calls(run, s, env)
    exported = run.process("ledger", "export", env=env)
    assert exported.returncode == 0

    haystacks = [("export", exported.stdout.encode())]
    haystacks += [(f"stderr of {label}", text.encode()) for label, text in run.stderr]
    # Results are stored in the ledger (result_sidecars); a legacy sidecar file, if any appeared, is read too.
    haystacks += [(f"file {p.name}", p.read_bytes()) for p in (run.workspace / "sidecars").rglob("*") if p.is_file()]
    if run.admin_dsn is None:
        haystacks += [(f"live SQLite file {n}", data) for n, data in enumerate(live)]
        haystacks += [(f"SQLite file {n}", data) for n, data in enumerate(_sqlite_files(run.workspace))]
    else:
        haystacks += [
            (f"COPY ledger.{t}", data) for t, data in zip(LEDGER_TABLES, _copy_tables(run.admin_dsn), strict=True)
        ]
    leaks = _leaks(s, haystacks)
    opaque = [(label, needle) for label, needle in s.needles() if label == "known_secret"]
    leaks += [
        f"the configured secret in {where}" for where, text in run.shown if any(n in text.encode() for _, n in opaque)
    ]
    assert not leaks, f"seed {s.seed}:\n" + "\n".join(leaks)

    # Not vacuous: every call is on record, big results were stored beside their end rows, and redaction did
    # the work.
    lines = exported.stdout.splitlines()
    assert len(lines) >= 2 * 2 * len(operation_calls(s))
    assert sum(1 for line in lines if json.loads(line).get("result_sidecar_path")) >= 2 * len(s.chunks())
    assert "[REDACTED:known_secret]" in exported.stdout
    assert exported.stdout.count("[REDACTED:") > 1000
    assert any(json.loads(line)["tool_name"] == "_invalid_name" for line in lines)
