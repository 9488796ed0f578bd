"""Issue 8: a `key="value"` secret echoed inside an error message, JSON-escaped once to three times by the time it is
stored, never reaches the ledger in clear. Every form goes through real calls (the CLI front door, the dispatcher,
the recorder) whose arguments carry it, whose error message echoes it and whose result preview echoes it; then every
byte of every file of the workspace, and a COPY of every table of the PostgreSQL ledger schema, is searched for each
value in its raw, JSON-escaped (1-4 levels) and percent-encoded forms."""

from __future__ import annotations

import dataclasses
import json
import secrets
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)
from recording_support import make_pg_ledger
from runners import run_cli
from testops import FULL_REGISTRY

# Secret-like keys from issue 8's list, and the double-quoted syntaxes people write them in.
KEYS = ("password", "passwd", "pwd", "secret", "token", "api_key", "client_secret", "private_key", "credential",
        "access_token", "auth_token", "secret_key")
STYLES = ('{k}="{v}"', '{k} = "{v}"', '"{k}":"{v}"', '"{k}": "{v}"', '{k}: "{v}"')
DEPTHS = (1, 2, 3)
FAIL_MESSAGE_BYTES = 256


@dataclasses.dataclass(frozen=True)
class Form:
    key: str
    style: str
    depth: int
    value: str
    text: str


def echo_forms() -> list[Form]:
    """Every key x style x depth: `config rejected: <key form>` wrapped in an error object, JSON-encoded `depth` times."""
    out = []
    for key in KEYS:
        for style in STYLES:
            for depth in DEPTHS:
                value = "Zq7" + secrets.token_urlsafe(15).replace("-", "x").replace("_", "y")
                text = "config rejected: " + style.format(k=key, v=value)
                for _ in range(depth):
                    text = json.dumps({"error": text})
                out.append(Form(key, style, depth, value, text))
    return out


def needles(value: str) -> list[bytes]:
    forms = {value, urllib.parse.quote(value, safe="")}
    escaped = value
    for _ in range(4):
        escaped = json.dumps(escaped)[1:-1]
        forms.add(escaped)
    return [form.encode() for form in forms]


@dataclasses.dataclass
class Backend:
    workspace: Path
    flags: list[str]
    admin_dsn: str | None


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def backend(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    if request.param == "sqlite":
        yield Backend(workspace, ["--workspace", str(workspace)], None)
        return
    server: PgServer = request.getfixturevalue("pg_server")
    db = make_pg_ledger(server, "harness_echo")
    yield Backend(workspace, ["--workspace", str(workspace), "--ledger", db.dsn], db.admin_dsn)
    server.drop_database(db.dbname)


def _workspace_bytes(workspace: Path) -> list[tuple[str, bytes]]:
    return [(str(path.relative_to(workspace)), path.read_bytes()) for path in sorted(workspace.rglob("*")) if path.is_file()]


def _ledger_tables(admin_dsn: str) -> list[tuple[str, bytes]]:
    out = []
    with psycopg.connect(admin_dsn) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'ledger' ORDER BY table_name")]
        for table in tables:
            data = bytearray()
            with conn.cursor().copy(f"COPY ledger.{table} TO STDOUT") as copy:
                for block in copy:
                    data += bytes(block)
            out.append((f"COPY ledger.{table}", bytes(data)))
    return out


def test_double_quoted_echo_forms_never_reach_the_ledger(backend: Backend) -> None:
    forms = echo_forms()
    assert len({(f.key, f.style, f.depth) for f in forms}) >= 95
    assert all(len(f.text.encode()) <= FAIL_MESSAGE_BYTES for f in forms)
    for form in forms:
        # The argument carries the form and the error message echoes it (the error column).
        failed = run_cli([*backend.flags, "test_fail", "--code", "refused", "--message", form.text], FULL_REGISTRY)
        assert failed.exit_code != 0
        # The result echoes it (the preview).
        echoed = run_cli([*backend.flags, "test_big", "--text", form.text, "--size", "0"], FULL_REGISTRY)
        assert echoed.exit_code == 0, echoed.stderr
    exported = run_cli([*backend.flags, "ledger", "export"], FULL_REGISTRY)
    assert exported.exit_code == 0, exported.stderr

    haystacks = _workspace_bytes(backend.workspace)
    if backend.admin_dsn is not None:
        haystacks += _ledger_tables(backend.admin_dsn)
    haystacks.append(("ledger export", exported.stdout.encode()))
    leaks = [
        f"{form.key} {form.style} depth {form.depth} in {where}"
        for form in forms
        for where, data in haystacks
        if any(needle in data for needle in needles(form.value))
    ]
    assert not leaks, "\n".join(leaks)

    # Not vacuous: every call is on record with the form's key kept and its value replaced.
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    calls = {row["tool_name"] for row in rows}
    assert {"test_fail", "test_big"} <= calls
    assert len(rows) >= 4 * len(forms)
    assert exported.stdout.count("[REDACTED:") >= 3 * len(forms)
    if backend.admin_dsn is None:
        assert any(name.startswith("ledger.sqlite3") for name, _ in haystacks)
