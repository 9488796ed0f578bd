"""`harness ledger list|show|verify|head|export|migrate` end to end (docs/ledger.md §12, docs/ledger.md §8.3-docs/ledger.md §8.4, docs/ledger.md §7.4, docs/ledger.md §13) on
ledgers filled by real recorded calls, on both backends; tampering is reported by the CLI at the first bad
chain_seq; reading commands never create a ledger; `serve` refuses to start without a usable ledger."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import json
import sqlite3
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)
from recording_support import all_rows, make_pg_ledger, reader
from runners import CliResult, run_cli
from testops import REGISTRY

from harness.ledger import chain
from harness.ledger.model import LedgerEvent, LedgerRow
from harness.ledger.settings import LedgerSettings
from harness.ledger.store import open_store
from harness.text.redact import KnownSecrets, build_redactor
from tests.e2e.procs import clean_env, harness_argv
from tests.ledger.ledger_support import PgAdmin, SqliteAdmin

ROW_KEYS = {
    "id",
    "conversation_id",
    "request_id",
    "tool_call_id",
    "tool_name",
    "event",
    "seq",
    "ts",
    "started_at",
    "ended_at",
    "duration_ms",
    "arguments",
    "args_bytes",
    "status",
    "error",
    "result_preview",
    "preview_bytes",
    "result_bytes",
    "result_truncated",
    "result_sidecar_path",
    "exit_code",
    "meta",
    "redaction_version",
    "chain_seq",
    "prev_hash",
    "row_hash",
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)


@dataclasses.dataclass
class Ledger:
    """A workspace and its ledger (the workspace's SQLite file, or a PostgreSQL database given by --ledger)."""

    backend: str
    workspace: Path
    target: str
    admin: SqliteAdmin | PgAdmin

    @property
    def flags(self) -> list[str]:
        return ["--workspace", str(self.workspace)] + (["--ledger", self.target] if self.backend != "sqlite" else [])

    def run(self, *args: str) -> CliResult:
        return run_cli([*self.flags, *args], REGISTRY)

    def call(self, conversation: str, name: str, arguments: dict[str, Any]) -> CliResult:
        return self.run("--conversation", conversation, name, "--input", json.dumps(arguments))

    def rows(self, conversation: str) -> list[LedgerRow]:
        store = reader(self.target)
        try:
            return store.list_by_conversation(conversation)
        finally:
            store.close()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledger]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    if request.param == "sqlite":
        path = workspace / "ledger.sqlite3"
        yield Ledger("sqlite", workspace, str(path), SqliteAdmin(path))
        return
    server: PgServer = request.getfixturevalue("pg_server")
    db = make_pg_ledger(server)
    yield Ledger("postgresql", workspace, db.dsn, PgAdmin(db.admin_dsn, db.owner_role))
    server.drop_database(db.dbname)


def fill(ledger: Ledger) -> None:
    """Conversation `a`: an ok call, a not_found, a refused invalid input; conversation `b`: one ok call."""
    assert ledger.call("a", "test_echo", {"required_name": "n"}).exit_code == 0
    assert ledger.call("a", "test_fail", {"code": "not_found"}).exit_code == 1
    assert ledger.call("a", "test_echo", {}).exit_code == 2
    assert ledger.call("b", "test_echo", {"required_name": "m"}).exit_code == 0


def problems(result: CliResult) -> list[tuple[str, int | None, str]]:
    return [(p["conversation_id"], p["chain_seq"], p["kind"]) for p in result.json()["problems"]]


def assert_error(result: CliResult, code: str, operation: str, exit_code: int) -> dict[str, Any]:
    assert result.exit_code == exit_code, result.stdout
    error = result.json()["error"]
    assert (error["code"], error["operation"]) == (code, operation)
    return error


# -- list and show


def test_list_calls_with_filters(ledger: Ledger) -> None:
    fill(ledger)
    listed = ledger.run("ledger", "list").json()
    calls = listed["calls"]
    assert (len(calls), listed["truncated"], listed["notes"]) == (4, False, "")
    assert [c["started_at"] for c in calls] == sorted((c["started_at"] for c in calls), reverse=True)
    assert set(calls[0]) == {
        "conversation_id",
        "request_id",
        "tool_call_id",
        "tool_name",
        "seq",
        "started_at",
        "ended_at",
        "duration_ms",
        "status",
        "error",
        "exit_code",
        "result_bytes",
        "result_truncated",
        "principal",
    }
    assert [c["seq"] for c in ledger.run("ledger", "list", "--conversation", "a").json()["calls"]] == [3, 2, 1]
    (failed,) = ledger.run("ledger", "list", "--tool", "test_fail").json()["calls"]
    assert (failed["status"], failed["error"], failed["exit_code"]) == ("error", "not_found: it failed", 1)
    assert len(ledger.run("ledger", "list", "--status", "ok").json()["calls"]) == 2
    limited = ledger.run("ledger", "list", "--limit", "1").json()
    assert len(limited["calls"]) == 1 and limited["truncated"] is True
    future = ledger.run("ledger", "list", "--since", "2999-01-01T00:00:00Z").json()
    assert future == {"calls": [], "truncated": False, "notes": "no calls matched"}
    assert len(ledger.run("ledger", "list", "--until", "2999-01-01T00:00:00Z").json()["calls"]) == 4
    conversations = ledger.run("ledger", "list", "--conversations").json()["conversations"]
    assert {(c["id"], c["calls"], c["last_chain_seq"]) for c in conversations} == {("a", 3, 6), ("b", 1, 2)}


def test_list_in_flight_calls(ledger: Ledger) -> None:
    fill(ledger)
    store = open_store(
        ledger.target,
        redactor=build_redactor(KnownSecrets()),
        clock=lambda: datetime.datetime.now(datetime.UTC),
        settings=LedgerSettings(),
    )
    try:
        store.insert(LedgerEvent("c", "r-1", "t-1", "search_events", "start", arguments="{}"))
    finally:
        store.close()
    (flying,) = ledger.run("ledger", "list", "--status", "in_flight").json()["calls"]
    assert (flying["conversation_id"], flying["ended_at"], flying["status"]) == ("c", None, "in_flight")
    before_future = ledger.run("ledger", "list", "--in-flight-before", "2999-01-01T00:00:00Z").json()["calls"]
    assert [c["tool_call_id"] for c in before_future] == ["t-1"]
    assert ledger.run("ledger", "list", "--in-flight-before", "1d").json()["calls"] == []


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--status", "bogus"], "status: expected one of ok, error, in_flight"),
        (["--limit", "0"], "limit: expected an integer in 1..10000"),
        (["--limit", "abc"], "limit:"),
        (["--since", "yesterday"], "since:"),
        (["--in-flight-before", "soon"], "in_flight_before:"),
        (["--conversation", "a b"], "conversation:"),
        (["--bogus"], "bogus"),
    ],
)
def test_list_refuses_bad_options(tmp_path: Path, args: list[str], fragment: str) -> None:
    result = run_cli(["--workspace", str(tmp_path), "ledger", "list", *args])
    assert fragment in assert_error(result, "invalid_input", "ledger.list", 2)["message"]


def test_show_a_conversation(ledger: Ledger) -> None:
    fill(ledger)
    shown = ledger.run("ledger", "show", "a").json()
    rows = ledger.rows("a")
    assert shown["conversation"]["id"] == "a" and shown["conversation"]["rows"] == 6
    assert shown["conversation"]["head"] == {"chain_seq": 6, "row_hash": rows[-1].row_hash.hex()}
    assert shown["truncated"] is False
    assert shown["rows"] == [row.to_json() for row in rows]
    assert all(set(r) == ROW_KEYS for r in shown["rows"])
    start = shown["rows"][0]
    assert start["ended_at"] is None and start["status"] is None and len(start["ts"]) == 27
    assert start["meta"]["surface"] == "cli" and start["prev_hash"] == "00" * 32
    call = rows[2].tool_call_id
    assert [r["chain_seq"] for r in ledger.run("ledger", "show", "a", "--call", call).json()["rows"]] == [3, 4]
    assert [r["chain_seq"] for r in ledger.run("ledger", "show", "a", "--after-chain-seq", "4").json()["rows"]] == [
        5,
        6,
    ]
    limited = ledger.run("ledger", "show", "a", "--limit", "2").json()
    assert len(limited["rows"]) == 2 and limited["truncated"] is True
    missing = assert_error(ledger.run("ledger", "show", "zzz"), "not_found", "ledger.show", 1)
    assert missing["message"] == "conversation_id: conversation zzz is not in the ledger"
    assert_error(ledger.run("ledger", "show", "a b"), "invalid_input", "ledger.show", 2)
    assert_error(ledger.run("ledger", "show"), "invalid_input", "ledger.show", 2)


# -- verify, heads and tampering


def test_a_clean_ledger_verifies(ledger: Ledger) -> None:
    fill(ledger)
    result = ledger.run("ledger", "verify")
    assert result.exit_code == 0
    assert result.json() == {
        "ok": True,
        "backend": ledger.backend,
        "conversations": 2,
        "rows": 8,
        "tombstones": 0,
        "heads_checked": 0,
        "sidecars_checked": 0,
        "in_flight": 0,
        "problems": [],
        "truncated": False,
    }
    only_b = ledger.run("ledger", "verify", "--conversation", "b").json()
    assert (only_b["conversations"], only_b["rows"]) == (1, 2)


def _swap(rows: list[LedgerRow], k: int) -> list[tuple[str, list[Any]]]:
    a, b = rows[k - 1], rows[k]
    sql = "UPDATE ledger.tool_invocations SET chain_seq = ?, prev_hash = ? WHERE id = ?"
    return [
        ("UPDATE ledger.tool_invocations SET chain_seq = ? WHERE id = ?", [999_999, str(a.id)]),
        (sql, [k, a.prev_hash, str(b.id)]),
        (sql, [k + 1, b.prev_hash, str(a.id)]),
    ]


TAMPERING = {
    "edit": (
        lambda rows: [("UPDATE ledger.tool_invocations SET tool_name = ? WHERE id = ?", ["edited", str(rows[2].id)])],
        3,
        "hash_mismatch",
    ),
    "delete": (lambda rows: [("DELETE FROM ledger.tool_invocations WHERE id = ?", [str(rows[3].id)])], 4, "gap"),
    "swap": (lambda rows: _swap(rows, 3), 3, "hash_mismatch"),
    "link": (
        lambda rows: [
            ("UPDATE ledger.tool_invocations SET prev_hash = ? WHERE id = ?", [b"\x07" * 32, str(rows[4].id)])
        ],
        5,
        "link_mismatch",
    ),
}


@pytest.mark.parametrize("kind", sorted(TAMPERING))
def test_tampering_is_reported_at_the_first_bad_row(ledger: Ledger, kind: str) -> None:
    fill(ledger)
    statements, chain_seq, problem = TAMPERING[kind]
    ledger.admin.tamper(statements(ledger.rows("a")))
    result = ledger.run("ledger", "verify")
    assert result.exit_code == 4
    assert problems(result) == [("a", chain_seq, problem)]
    assert result.json()["ok"] is False
    assert ledger.run("ledger", "verify", "--conversation", "b").exit_code == 0


DROP_GUARDS = {
    "sqlite": (
        ["DROP TRIGGER tool_invocations_no_update", "DROP TRIGGER tool_invocations_no_delete"],
        ["trigger tool_invocations_no_delete is missing", "trigger tool_invocations_no_update is missing"],
    ),
    "postgresql": (
        ["ALTER TABLE ledger.tool_invocations DISABLE TRIGGER tool_invocations_refuse_row"],
        ["trigger tool_invocations.tool_invocations_refuse_row differs from the migrated schema"],
    ),
}


def test_dropped_guards_are_a_schema_mismatch(ledger: Ledger) -> None:
    """Before, with the append-only triggers gone, `harness ledger verify` still said ok."""
    fill(ledger)
    statements, details = DROP_GUARDS[ledger.backend]
    with contextlib.closing(ledger.admin.connect()) as conn:
        for statement in statements:
            conn.execute(statement)
    result = ledger.run("ledger", "verify")
    assert result.exit_code == 4
    assert problems(result) == [(None, None, "schema_mismatch")] * len(details)
    assert [p["detail"] for p in result.json()["problems"]] == details
    assert ledger.run("ledger", "verify", "--conversation", "b").exit_code == 4


def test_a_moved_created_at_is_reported(ledger: Ledger) -> None:
    fill(ledger)
    first = ledger.rows("a")[0].ts - datetime.timedelta(hours=1)
    moved = first.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if ledger.backend == "sqlite" else first
    ledger.admin.tamper([("UPDATE ledger.conversations SET created_at = ? WHERE id = ?", [moved, "a"])])
    result = ledger.run("ledger", "verify")
    assert result.exit_code == 4
    assert problems(result) == [("a", 1, "created_at_mismatch")]


def _heads(ledger: Ledger) -> Path:
    path = ledger.workspace.parent / "heads.json"
    printed = ledger.run("ledger", "head", "--output", str(path))
    assert printed.exit_code == 0
    document = printed.json()
    assert json.loads(path.read_text()) == document
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    heads = document["heads"]
    assert [h["conversation_id"] for h in heads] == ["a", "b"]
    canonical = json.dumps(heads, sort_keys=True, separators=(",", ":")).encode()
    assert document["digest"] == hashlib.sha256(canonical).hexdigest()
    assert (document["format"], document["version"], document["backend"]) == (
        "triage-harness/ledger-heads",
        1,
        ledger.backend,
    )
    return path


def test_head_of_one_conversation(ledger: Ledger) -> None:
    fill(ledger)
    (head,) = ledger.run("ledger", "head", "--conversation", "b").json()["heads"]
    assert head == {"conversation_id": "b", "chain_seq": 2, "row_hash": ledger.rows("b")[-1].row_hash.hex()}


def test_a_truncated_tail_is_found_only_against_heads(ledger: Ledger) -> None:
    fill(ledger)
    heads = _heads(ledger)
    ledger.admin.tamper(
        [("DELETE FROM ledger.tool_invocations WHERE id = ?", [str(r.id)]) for r in ledger.rows("a")[-2:]]
    )
    assert ledger.run("ledger", "verify").exit_code == 0
    result = ledger.run("ledger", "verify", "--heads", str(heads))
    assert result.exit_code == 4
    assert problems(result) == [("a", 5, "head_behind")] and result.json()["heads_checked"] == 2


def test_a_rewritten_and_rechained_history_is_found_only_against_heads(ledger: Ledger) -> None:
    fill(ledger)
    heads = _heads(ledger)
    rows = ledger.rows("a")
    statements, prev = [], rows[1].row_hash
    for row in rows[2:]:
        changed = dataclasses.replace(
            row, prev_hash=prev, tool_name="rewritten" if row.chain_seq == 3 else row.tool_name
        )
        new_hash = chain.hash_values(changed.chain_values())
        statements.append(
            (
                "UPDATE ledger.tool_invocations SET tool_name = ?, prev_hash = ?, row_hash = ? WHERE id = ?",
                [changed.tool_name, prev, new_hash, str(row.id)],
            )
        )
        prev = new_hash
    ledger.admin.tamper(statements)
    assert ledger.run("ledger", "verify").exit_code == 0
    result = ledger.run("ledger", "verify", "--heads", str(heads))
    assert problems(result) == [("a", 6, "head_mismatch")] and result.exit_code == 4


def test_a_deleted_conversation_against_heads(ledger: Ledger) -> None:
    fill(ledger)
    heads = _heads(ledger)
    ledger.admin.delete_conversation("a")
    result = ledger.run("ledger", "verify", "--heads", str(heads))
    assert result.exit_code == 0 and result.json()["tombstones"] == 1
    ledger.admin.tamper([("DELETE FROM ledger.tombstones WHERE conversation_id = ?", ["a"])])
    result = ledger.run("ledger", "verify", "--heads", str(heads))
    assert problems(result) == [("a", 6, "missing_conversation")] and result.exit_code == 4


def test_a_bad_heads_file_is_invalid_input(ledger: Ledger) -> None:
    fill(ledger)
    heads = _heads(ledger)
    document = json.loads(heads.read_text())
    document["heads"][0]["chain_seq"] = 99
    heads.write_text(json.dumps(document))
    error = assert_error(ledger.run("ledger", "verify", "--heads", str(heads)), "invalid_input", "ledger.verify", 2)
    assert "digest" in error["message"]
    missing = ledger.run("ledger", "verify", "--heads", str(heads.parent / "absent.json"))
    assert_error(missing, "invalid_input", "ledger.verify", 2)


# -- signed heads (issue 10, docs/decisions.md)


def _keygen(ledger: Ledger, name: str = "signing.key") -> tuple[Path, Path]:
    key = ledger.workspace.parent / name
    result = ledger.run("ledger", "keygen", "--out", str(key))
    assert result.exit_code == 0, result.stdout
    pub = key.with_name(name + ".pub")
    assert result.json() == {
        "private_key": str(key),
        "public_key": str(pub),
        "alg": "Ed25519",
        "key_id": result.json()["key_id"],
    }
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(pub.stat().st_mode) == 0o644
    assert key.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    secret_body = key.read_text().splitlines()[1]
    assert secret_body not in result.stdout + result.stderr
    return key, pub


def _signed_heads(ledger: Ledger, key: Path) -> Path:
    path = ledger.workspace.parent / "signed-heads.json"
    printed = ledger.run("ledger", "head", "--sign", str(key), "--output", str(path))
    assert printed.exit_code == 0, printed.stdout
    assert json.loads(path.read_text()) == printed.json()
    assert key.read_text().splitlines()[1] not in printed.stdout + printed.stderr
    return path


def _verify_signed(ledger: Ledger, heads: Path, pub: Path) -> CliResult:
    return ledger.run("ledger", "verify", "--heads", str(heads), "--pubkey", str(pub))


def test_keygen_never_overwrites_a_key(ledger: Ledger) -> None:
    key, pub = _keygen(ledger)
    before = key.read_bytes(), pub.read_bytes()
    again = ledger.run("ledger", "keygen", "--out", str(key))
    assert "never overwritten" in assert_error(again, "invalid_input", "ledger.keygen", 2)["message"]
    pub.unlink()
    again = ledger.run("ledger", "keygen", "--out", str(key))
    assert "never overwritten" in assert_error(again, "invalid_input", "ledger.keygen", 2)["message"]
    assert key.read_bytes() == before[0] and not pub.exists()
    assert sorted(p.name for p in key.parent.iterdir() if p.name.startswith(".")) == []


def test_a_signed_heads_file_verifies_with_the_public_key(ledger: Ledger) -> None:
    fill(ledger)
    key, pub = _keygen(ledger)
    heads = _signed_heads(ledger, key)
    document = json.loads(heads.read_text())
    assert set(document["signature"]) == {"alg", "key_id", "value"}
    assert document["signature"]["alg"] == "Ed25519"
    result = _verify_signed(ledger, heads, pub)
    assert result.exit_code == 0 and result.json()["heads_checked"] == 2
    _, other_pub = _keygen(ledger, "other.key")
    error = assert_error(_verify_signed(ledger, heads, other_pub), "invalid_input", "ledger.verify", 2)
    assert "another key" in error["message"]
    unsigned = _heads(ledger)
    error = assert_error(_verify_signed(ledger, unsigned, pub), "invalid_input", "ledger.verify", 2)
    assert "not signed" in error["message"]


def test_one_edited_byte_of_a_signed_heads_file_is_reported(ledger: Ledger) -> None:
    fill(ledger)
    key, pub = _keygen(ledger)
    heads = _signed_heads(ledger, key)
    original = heads.read_bytes()
    # A byte of exported_at is covered by the signature alone (the digest covers only "heads").
    at = original.index(b'"exported_at":"') + len(b'"exported_at":"') + 3
    for index in (at, original.index(b'"value":"') + len(b'"value":"') + 5):
        edited = bytearray(original)
        edited[index] = ord("1") if edited[index] != ord("1") else ord("2")
        heads.write_bytes(bytes(edited))
        error = assert_error(_verify_signed(ledger, heads, pub), "invalid_input", "ledger.verify", 2)
        assert "altered after signing" in error["message"]
    heads.write_bytes(original)
    assert _verify_signed(ledger, heads, pub).exit_code == 0


def test_an_edited_row_or_a_cut_chain_is_reported_against_signed_heads(ledger: Ledger) -> None:
    fill(ledger)
    key, pub = _keygen(ledger)
    heads = _signed_heads(ledger, key)
    ledger.admin.tamper(
        [("DELETE FROM ledger.tool_invocations WHERE id = ?", [str(r.id)]) for r in ledger.rows("a")[-2:]]
    )
    result = _verify_signed(ledger, heads, pub)
    assert result.exit_code == 4 and problems(result) == [("a", 5, "head_behind")]
    edit_b = "UPDATE ledger.tool_invocations SET tool_name = ? WHERE id = ?"
    ledger.admin.tamper([(edit_b, ["x", str(ledger.rows("b")[0].id)])])
    result = _verify_signed(ledger, heads, pub)
    assert result.exit_code == 4 and problems(result) == [("a", 5, "head_behind"), ("b", 1, "hash_mismatch")]


def test_a_private_key_others_can_read_is_refused(ledger: Ledger) -> None:
    fill(ledger)
    key, pub = _keygen(ledger)
    key.chmod(0o640)
    error = assert_error(ledger.run("ledger", "head", "--sign", str(key)), "invalid_input", "ledger.head", 2)
    assert "readable by others" in error["message"]
    pub.chmod(0o600)
    error = assert_error(ledger.run("ledger", "head", "--sign", str(pub)), "invalid_input", "ledger.head", 2)
    assert "not an unencrypted PEM private key" in error["message"]
    error = assert_error(ledger.run("ledger", "verify", "--pubkey", str(pub)), "invalid_input", "ledger.verify", 2)
    assert "--heads" in error["message"]


def test_an_altered_sidecar_is_found_with_sidecars(ledger: Ledger) -> None:
    assert ledger.call("s", "test_big", {"size": 5000}).exit_code == 0
    checked = ledger.run("ledger", "verify", "--sidecars").json()
    assert (checked["ok"], checked["sidecars_checked"]) == (True, 1)
    (end,) = [r for r in ledger.rows("s") if r.event == "end"]
    # The result is stored with its end row (docs/ledger.md §11.3): alter it there, then remove it.
    where = " WHERE CAST(end_id AS TEXT) = ?"
    ledger.admin.tamper(
        [("UPDATE ledger.result_sidecars SET content = replace(content, 'x', 'y')" + where, [str(end.id)])]
    )
    assert ledger.run("ledger", "verify").exit_code == 0
    result = ledger.run("ledger", "verify", "--sidecars")
    assert problems(result) == [("s", 2, "sidecar_mismatch")] and result.exit_code == 4
    ledger.admin.tamper([("DELETE FROM ledger.result_sidecars" + where, [str(end.id)])])
    assert problems(ledger.run("ledger", "verify", "--sidecars")) == [("s", 2, "sidecar_missing")]


# -- export


def test_export_jsonl(ledger: Ledger) -> None:
    fill(ledger)
    exported = ledger.run("ledger", "export")
    assert exported.exit_code == 0
    lines = exported.stdout.splitlines()
    rows = ledger.rows("a") + ledger.rows("b")
    assert lines == [json.dumps(r.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False) for r in rows]
    assert ledger.run("ledger", "export").stdout == exported.stdout  # same state, same bytes
    only_b = ledger.run("ledger", "export", "--conversation", "b").stdout.splitlines()
    assert only_b == lines[6:]
    assert ledger.run("ledger", "export", "--since", "2999-01-01T00:00:00Z").stdout == ""
    output = ledger.workspace.parent / "export.jsonl"
    summary = ledger.run("ledger", "export", "--output", str(output)).json()
    data = output.read_bytes()
    assert data == exported.stdout.encode()
    assert summary == {"output": str(output), "rows": 8, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert stat.S_IMODE(output.stat().st_mode) == 0o600
    assert_error(ledger.run("ledger", "export", "--until", "never"), "invalid_input", "ledger.export", 2)


def test_export_from_a_real_process_is_the_same_bytes(tmp_path: Path) -> None:
    assert (
        run_cli(
            ["--workspace", str(tmp_path), "--conversation", "p", "test_echo", "--required-name", "n"], REGISTRY
        ).exit_code
        == 0
    )
    proc = subprocess.run(
        harness_argv("--workspace", str(tmp_path), "ledger", "export"),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == run_cli(["--workspace", str(tmp_path), "ledger", "export"]).stdout
    assert len(proc.stdout.splitlines()) == 2


# -- what creates a ledger, and what is recorded


def test_reading_commands_never_create_a_ledger(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    base = ["--workspace", str(workspace), "ledger"]
    assert run_cli([*base, "list"]).json() == {"calls": [], "truncated": False, "notes": "no calls matched"}
    assert run_cli([*base, "list", "--conversations"]).json()["conversations"] == []
    verified = run_cli([*base, "verify"])
    assert verified.exit_code == 0 and verified.json()["ok"] is True and verified.json()["conversations"] == 0
    assert run_cli([*base, "head"]).json()["heads"] == []
    assert run_cli([*base, "export"]).stdout == ""
    assert_error(run_cli([*base, "show", "a"]), "not_found", "ledger.show", 1)
    assert not workspace.exists()


def test_ledger_commands_schema_and_serve_are_not_recorded(tmp_path: Path) -> None:
    base = ["--workspace", str(tmp_path)]
    assert run_cli([*base, "--conversation", "x", "test_echo", "--required-name", "n"], REGISTRY).exit_code == 0
    before = all_rows(tmp_path / "ledger.sqlite3")
    for args in (
        ["ledger", "list"],
        ["ledger", "verify"],
        ["ledger", "head"],
        ["ledger", "export"],
        ["ledger", "show", "x"],
        ["ledger", "migrate"],
        ["schema", "test_echo"],
    ):
        assert run_cli([*base, *args], REGISTRY).exit_code == 0, args
    proc = subprocess.run(
        harness_argv(*base, "serve", test_registry=True),
        input="",
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert all_rows(tmp_path / "ledger.sqlite3") == before


# -- migrate


SHARED = [{"version": 1, "name": "initial"}, {"version": 2, "name": "deletion_integrity"}]
APPLIED = [*SHARED, {"version": 3, "name": "result_sidecars"}, {"version": 4, "name": "open_calls"}]
PG_APPLIED = [
    *SHARED,
    {"version": 3, "name": "tail_order"},
    {"version": 4, "name": "result_sidecars"},
    {"version": 5, "name": "open_calls"},
]


def test_migrate_a_sqlite_ledger(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere" / "ledger.sqlite3"
    base = ["--workspace", str(tmp_path), "--ledger", str(path), "ledger", "migrate"]
    dry = run_cli([*base, "--dry-run"]).json()
    assert dry == {
        "backend": "sqlite",
        "from_version": 0,
        "to_version": len(APPLIED),
        "applied": APPLIED,
        "roles": {"owner": None, "app": None, "created": []},
        "dry_run": True,
    }
    assert not path.exists()
    done = run_cli(base).json()
    assert (done["from_version"], done["applied"], done["dry_run"]) == (0, APPLIED, False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert run_cli(base).json()["applied"] == []
    refused = run_cli([*base, "--admin-dsn", "postgresql://x@127.0.0.1/db"])
    assert_error(refused, "invalid_input", "ledger.migrate", 2)


@pytest.mark.pg
def test_migrate_postgres_with_an_admin_dsn(tmp_path: Path, pg_server: PgServer) -> None:  # noqa: F811
    owner = pg_server.reserve_role_name("harness_ledger_owner_m")
    app = pg_server.reserve_role_name("harness_ledger_app_m")
    login = pg_server.create_role("harness_ledger_login_m", login=True)
    dbname = pg_server.create_database("harness_migrate")
    try:
        dsn, admin = pg_server.dsn_for(dbname, login), pg_server.dsn_for(dbname)
        base = ["--workspace", str(tmp_path), "--ledger", dsn]
        before = run_cli([*base, "--conversation", "m", "test_echo", "--required-name", "n"], REGISTRY)
        error = assert_error(before, "ledger_unavailable", "test_echo", 3)
        assert "run harness ledger migrate" in error["message"]
        migrate = [
            *base,
            "ledger",
            "migrate",
            "--admin-dsn",
            admin,
            "--owner-role",
            owner,
            "--app-role",
            app,
            "--grant-app-to",
            login,
        ]
        dry = run_cli([*migrate, "--dry-run"]).json()
        assert (dry["backend"], dry["from_version"], dry["dry_run"]) == ("postgresql", 0, True)
        done = run_cli(migrate)
        assert done.exit_code == 0, done.stdout
        report = done.json()
        assert (report["from_version"], report["to_version"]) == (0, len(PG_APPLIED))
        assert report["applied"] == PG_APPLIED
        assert report["roles"]["owner"] == owner and report["roles"]["app"] == app
        assert set(report["roles"]["created"]) == {owner, app}
        assert run_cli(migrate).json()["applied"] == []
        recorded = run_cli([*base, "--conversation", "m", "test_echo", "--required-name", "n"], REGISTRY)
        assert recorded.exit_code == 0
        assert [r.event for r in all_rows(dsn)] == ["start", "end"]
        assert run_cli([*base, "ledger", "verify"]).json()["ok"] is True
    finally:
        pg_server.drop_database(dbname)


def test_an_unreachable_ledger_is_exit_3_with_its_dsn_redacted(tmp_path: Path) -> None:
    (tmp_path / "harness.toml").write_text("[ledger]\nconnect_timeout_s = 1\n")
    dsn = "postgresql://someone:pw-e2e-9f8e7d6c@127.0.0.1:1/ledger"
    for args in (["ledger", "list"], ["ledger", "verify"], ["ledger", "export"], ["ledger", "migrate"]):
        result = run_cli(["--workspace", str(tmp_path), "--ledger", dsn, *args])
        assert_error(result, "ledger_unavailable", f"ledger.{args[1]}", 3)
        assert "pw-e2e-9f8e7d6c" not in result.stdout + result.stderr
    call = run_cli(["--workspace", str(tmp_path), "--ledger", dsn, "test_echo", "--required-name", "n"], REGISTRY)
    assert_error(call, "ledger_unavailable", "test_echo", 3)
    assert "pw-e2e-9f8e7d6c" not in call.stdout + call.stderr


# -- serve refuses to start without a usable ledger


def _serve(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    argv = harness_argv("--workspace", str(tmp_path), *flags, "serve", test_registry=True)
    return subprocess.run(argv, input="", capture_output=True, text=True, env=clean_env(), timeout=60)


def test_serve_exits_3_on_a_sqlite_ledger_from_the_future(tmp_path: Path) -> None:
    assert run_cli(["--workspace", str(tmp_path), "ledger", "migrate"]).exit_code == 0
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as conn:
        conn.execute(
            "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, 'future', ?, ?)",
            (len(APPLIED) + 1, "0" * 64, "2026-01-01T00:00:00.000000Z"),
        )
    proc = _serve(tmp_path)
    assert proc.returncode == 3
    error = json.loads(proc.stdout)["error"]
    assert (error["code"], error["operation"]) == ("ledger_unavailable", "serve")
    call = run_cli(["--workspace", str(tmp_path), "test_echo", "--required-name", "n"], REGISTRY)
    assert_error(call, "ledger_unavailable", "test_echo", 3)


@pytest.mark.pg
def test_serve_exits_3_on_an_unmigrated_postgres_ledger(tmp_path: Path, pg_server: PgServer) -> None:  # noqa: F811
    dbname = pg_server.create_database("harness_unmigrated")
    try:
        proc = _serve(tmp_path, "--ledger", pg_server.dsn_for(dbname))
        assert proc.returncode == 3
        error = json.loads(proc.stdout)["error"]
        assert (error["code"], error["operation"]) == ("ledger_unavailable", "serve")
        assert "run harness ledger migrate" in error["message"]
    finally:
        pg_server.drop_database(dbname)
