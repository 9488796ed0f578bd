"""Tamper evidence (docs/ledger.md §8.3-docs/ledger.md §8.4, docs/ledger.md §14): each kind of tampering is reported where it happened, on both backends.

Guards are bypassed as in real tampering: triggers dropped through a raw SQLite connection, or disabled by a
PostgreSQL superuser, then restored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import importlib.resources
import json
import os
from pathlib import Path
from typing import Any

import pytest
from ledger_support import T0, PgAdmin, SqliteAdmin

from harness.errors import InvalidInput
from harness.ledger import catalog, chain, commands, migrations
from harness.ledger.model import LedgerEvent, LedgerRow, end_event, format_ts
from harness.ledger.records import Head
from harness.ledger.sqlite import migrated_catalog
from harness.ledger.store import LedgerStore
from harness.ledger.verify import HeadsFormatError, heads_document, parse_heads_document, verify

Admin = SqliteAdmin | PgAdmin
CONV = "conv-t"
N = 8  # rows in the tampered conversation: 4 calls


@pytest.fixture
def rows(store: LedgerStore) -> list[LedgerRow]:
    """CONV with four finished calls, and a bystander conversation that must stay clean."""
    for n in range(N // 2):
        began = store.insert(LedgerEvent(CONV, str(n), f"call-{n}", "search_events", "start", arguments=f'{{"n":{n}}}'))
        store.insert(
            end_event(began.row, ended_at=began.row.ts, duration_ms=n, status="ok", result_preview="{}", result_bytes=2)
        )
    store.insert(LedgerEvent("bystander", "1", "call-1", "search_events", "start"))
    return store.list_by_conversation(CONV)


def _problems(report: dict[str, Any]) -> list[tuple[str, int | None, str]]:
    return [(p["conversation_id"], p["chain_seq"], p["kind"]) for p in report["problems"]]


def _heads_file(store: LedgerStore, tmp_path: Path) -> Path:
    path = tmp_path / "heads.json"
    commands.head(store, clock=lambda: T0, output=path)
    return path


def _rewrite(admin: Admin, rows: list[LedgerRow], k: int, **changes: Any) -> None:
    """Change row k and recompute every later hash, as a privileged rewriter would."""
    statements = []
    prev = rows[k - 2].row_hash if k > 1 else chain.ZERO_HASH
    for row in rows[k - 1 :]:
        values = dataclasses.replace(row, prev_hash=prev, **(changes if row.chain_seq == k else {}))
        new_hash = chain.hash_values(values.chain_values())
        assignments = ", ".join(f"{name} = ?" for name in [*changes] if row.chain_seq == k)
        params = [changes[name] for name in changes] if row.chain_seq == k else []
        prefix = assignments + ", " if assignments else ""
        statements.append(
            (
                f"UPDATE ledger.tool_invocations SET {prefix}prev_hash = ?, row_hash = ? WHERE id = ?",
                [*params, prev, new_hash, str(row.id)],
            )
        )
        prev = new_hash
    admin.tamper(statements)


def test_a_clean_ledger(store: LedgerStore, rows: list[LedgerRow]) -> None:
    report = verify(store)
    assert report == {
        "ok": True,
        "backend": store.backend,
        "conversations": 2,
        "rows": N + 1,
        "tombstones": 0,
        "heads_checked": 0,
        "sidecars_checked": 0,
        "in_flight": 1,
        "problems": [],
        "truncated": False,
    }


def test_edit_a_column(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    admin.tamper([("UPDATE ledger.tool_invocations SET arguments = ? WHERE id = ?", ['{"n":9}', str(rows[2].id)])])
    assert _problems(verify(store)) == [(CONV, 3, "hash_mismatch")]


def test_edit_a_link(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    admin.tamper([("UPDATE ledger.tool_invocations SET prev_hash = ? WHERE id = ?", [b"\x07" * 32, str(rows[4].id)])])
    assert _problems(verify(store)) == [(CONV, 5, "link_mismatch")]


def test_delete_a_middle_row(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    admin.tamper([("DELETE FROM ledger.tool_invocations WHERE id = ?", [str(rows[3].id)])])
    report = verify(store)
    assert _problems(report) == [(CONV, 4, "gap")] and report["ok"] is False


def test_swap_two_chain_positions(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    a, b = rows[2], rows[3]  # chain_seq 3 and 4
    admin.tamper(
        [
            ("UPDATE ledger.tool_invocations SET chain_seq = ? WHERE id = ?", [999_999, str(a.id)]),
            (
                "UPDATE ledger.tool_invocations SET chain_seq = ?, prev_hash = ? WHERE id = ?",
                [3, a.prev_hash, str(b.id)],
            ),
            (
                "UPDATE ledger.tool_invocations SET chain_seq = ?, prev_hash = ? WHERE id = ?",
                [4, b.prev_hash, str(a.id)],
            ),
        ]
    )
    assert _problems(verify(store)) == [(CONV, 3, "hash_mismatch")]


def test_truncate_the_tail(store: LedgerStore, rows: list[LedgerRow], admin: Admin, tmp_path: Path) -> None:
    heads = _heads_file(store, tmp_path)
    admin.tamper([("DELETE FROM ledger.tool_invocations WHERE id = ?", [str(r.id)]) for r in rows[-2:]])
    assert verify(store)["ok"] is True
    report = commands.verify_ledger(store, heads_file=heads)
    assert _problems(report) == [(CONV, N - 1, "head_behind")] and report["heads_checked"] == 2


def test_rewrite_and_rechain(store: LedgerStore, rows: list[LedgerRow], admin: Admin, tmp_path: Path) -> None:
    heads = _heads_file(store, tmp_path)
    _rewrite(admin, rows, 3, arguments='{"n":"rewritten"}')
    assert verify(store)["ok"] is True
    assert _problems(commands.verify_ledger(store, heads_file=heads)) == [(CONV, N, "head_mismatch")]


def test_an_unknown_redaction_version_is_a_shape_problem(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    _rewrite(admin, rows, 5, redaction_version=99)
    assert _problems(verify(store)) == [(CONV, 5, "shape")]


def test_an_end_with_another_seq_is_a_shape_problem(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    _rewrite(admin, rows, 4, seq=7)
    assert _problems(verify(store)) == [(CONV, 4, "shape")]


def test_a_deleted_conversation_against_heads(
    store: LedgerStore, rows: list[LedgerRow], admin: Admin, tmp_path: Path
) -> None:
    heads = _heads_file(store, tmp_path)
    admin.delete_conversation(CONV)
    report = commands.verify_ledger(store, heads_file=heads)
    assert report["ok"] is True and report["tombstones"] == 1
    admin.tamper([("DELETE FROM ledger.tombstones WHERE conversation_id = ?", [CONV])])
    assert _problems(commands.verify_ledger(store, heads_file=heads)) == [(CONV, N, "missing_conversation")]


def test_a_tombstone_that_does_not_cover_the_head(
    store: LedgerStore, rows: list[LedgerRow], admin: Admin, tmp_path: Path
) -> None:
    heads = _heads_file(store, tmp_path)
    admin.delete_conversation(CONV)
    admin.tamper([("UPDATE ledger.tombstones SET final_row_hash = ? WHERE conversation_id = ?", [b"\x01" * 32, CONV])])
    assert _problems(commands.verify_ledger(store, heads_file=heads)) == [(CONV, N, "tombstone_mismatch")]


def test_orphan_rows(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    """A conversation row deleted without the cascade (guards dropped, and foreign keys off or replica mode) leaves
    orphans."""
    sqlite = isinstance(admin, SqliteAdmin)
    no_cascade = "PRAGMA foreign_keys = OFF" if sqlite else "SET session_replication_role = replica"
    admin.tamper([(no_cascade, []), ("DELETE FROM ledger.conversations WHERE id = ?", [CONV])])
    report = verify(store)
    assert _problems(report) == [(CONV, 1, "orphan_rows")]
    assert report["problems"][0]["detail"].startswith(f"{N} rows")


def test_conversation_filter(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    admin.tamper([("UPDATE ledger.tool_invocations SET arguments = ? WHERE id = ?", ["{}", str(rows[0].id)])])
    clean = verify(store, conversation_ids=["bystander"])
    assert clean["ok"] is True and clean["conversations"] == 1 and clean["rows"] == 1
    assert _problems(verify(store, conversation_ids=[CONV])) == [(CONV, 1, "hash_mismatch")]


def test_sidecars(store: LedgerStore, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    body = b'{"big":"' + b"x" * 5000 + b'"}'
    begun = store.insert(LedgerEvent("conv-s", "1", "call-1", "get_raw_event", "start")).row
    relative = f"sidecars/c-{hashlib.sha256(b'conv-s').hexdigest()[:32]}/{begun.id}.result"
    (workspace / relative).parent.mkdir(parents=True)
    (workspace / relative).write_bytes(body)
    store.insert(
        end_event(
            begun,
            ended_at=begun.ts,
            duration_ms=1,
            status="ok",
            result_preview=body.decode(),
            result_bytes=len(body),
            result_sidecar_path=relative,
            meta={"sidecar_bytes": len(body), "sidecar_sha256": hashlib.sha256(body).hexdigest()},
        )
    )
    report = commands.verify_ledger(store, sidecars=True, workspace=workspace)
    assert report["ok"] is True and report["sidecars_checked"] == 1
    assert verify(store)["sidecars_checked"] == 0
    (workspace / relative).write_bytes(body.replace(b"x", b"y", 1))
    assert _problems(commands.verify_ledger(store, sidecars=True, workspace=workspace)) == [
        ("conv-s", 2, "sidecar_mismatch")
    ]
    (workspace / relative).unlink()
    (workspace / relative).symlink_to(tmp_path / "elsewhere")
    assert _problems(commands.verify_ledger(store, sidecars=True, workspace=workspace))[0][2] == "sidecar_mismatch"
    (workspace / relative).unlink()
    assert _problems(commands.verify_ledger(store, sidecars=True, workspace=workspace)) == [
        ("conv-s", 2, "sidecar_missing")
    ]
    with pytest.raises(InvalidInput, match="workspace"):
        commands.verify_ledger(store, sidecars=True)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_problems_are_sorted_and_capped(store: LedgerStore, admin: Admin) -> None:
    store.insert_many([LedgerEvent(f"c{n:04d}", "1", "k", "search_events", "start", ts=T0) for n in range(1005)])
    admin.tamper([("UPDATE ledger.tool_invocations SET tool_name = ?", ["tampered"])])
    report = verify(store)
    assert report["ok"] is False and report["truncated"] is True
    assert len(report["problems"]) == 1000
    assert [p["conversation_id"] for p in report["problems"]] == [f"c{n:04d}" for n in range(1000)]


def test_heads_document_round_trip_and_refusals(store: LedgerStore, rows: list[LedgerRow]) -> None:
    document = heads_document(store.heads(), backend=store.backend, exported_at=T0)
    assert document["format"] == "triage-harness/ledger-heads" and document["version"] == 1
    assert document["exported_at"] == "2026-01-02T03:04:05.123456Z"
    assert [h["conversation_id"] for h in document["heads"]] == ["bystander", CONV]
    canonical = json.dumps(document["heads"], sort_keys=True, separators=(",", ":")).encode()
    assert document["digest"] == hashlib.sha256(canonical).hexdigest()
    assert parse_heads_document(json.dumps(document)) == store.heads()

    def altered(**changes: Any) -> str:
        return json.dumps({**document, **changes})

    forged = [dict(document["heads"][0], chain_seq=99), document["heads"][1]]
    for bad, match in [
        (altered(heads=forged), "digest"),
        (altered(format="other"), "format"),
        (altered(version=2), "format"),
        (altered(heads=[{"conversation_id": "x"}]), r"heads\[0\]"),
        (altered(heads=[document["heads"][0]] * 2), "twice"),
        ("not json", "JSON"),
    ]:
        with pytest.raises(HeadsFormatError, match=match):
            parse_heads_document(bad)


def test_a_bad_heads_file_is_invalid_input(store: LedgerStore, tmp_path: Path) -> None:
    bad = tmp_path / "heads.json"
    bad.write_text('{"format": "x"}')
    with pytest.raises(InvalidInput, match="^heads: "):
        commands.verify_ledger(store, heads_file=bad)
    with pytest.raises(InvalidInput, match=r'^heads: file ".*missing.json" does not exist$'):
        commands.verify_ledger(store, heads_file=tmp_path / "missing.json")
    assert verify(store, heads=[Head("nobody", 1, b"\x00" * 32)])["problems"][0]["kind"] == "missing_conversation"


def test_heads_against_a_live_conversation(store: LedgerStore, rows: list[LedgerRow]) -> None:
    report = verify(store, heads=[Head(CONV, N + 3, rows[-1].row_hash)])
    assert _problems(report) == [(CONV, N + 1, "head_behind")]
    assert verify(store, heads=[Head(CONV, N, rows[-1].row_hash)])["ok"] is True
    mismatch = verify(store, heads=[Head(CONV, 2, rows[-1].row_hash)])
    assert _problems(mismatch) == [(CONV, 2, "head_mismatch")]


# -- the schema and created_at (docs/decisions.md, "Ledger integrity")


def _schema_problems(report: dict[str, Any]) -> list[str]:
    return [p["detail"] for p in report["problems"] if p["kind"] == "schema_mismatch"]


@pytest.mark.pg
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_the_recorded_postgres_catalog_is_the_migrated_one(store: LedgerStore, rows: list[LedgerRow]) -> None:
    """The catalog a fresh `migrate --admin-dsn` creates is the one recorded next to the migrations. Rerun with
    HARNESS_UPDATE_SNAPSHOT=1 to record it again after a new migration."""
    with store.snapshot() as snap:
        migrated = snap.catalog()
    version = migrations.target_version("postgres")
    if os.environ.get("HARNESS_UPDATE_SNAPSHOT") == "1":
        path = Path(str(importlib.resources.files("harness.ledger.migrations").joinpath(catalog.RECORDED_POSTGRES)))
        path.write_text(catalog.document(version, migrated), encoding="utf-8")
    assert catalog.recorded_postgres(version) == migrated
    assert {kind for kind, _, _ in migrated} == {"relation", "column", "constraint", "index", "trigger", "function"}
    assert verify(store)["ok"] is True


def test_a_recorded_catalog_of_another_version_is_refused() -> None:
    with pytest.raises(RuntimeError, match="records schema"):
        catalog.recorded_postgres(migrations.target_version("postgres") + 1)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_sqlite_catalog_is_what_the_migrations_create(store: LedgerStore, rows: list[LedgerRow]) -> None:
    with store.snapshot() as snap:
        assert snap.catalog() == migrated_catalog(migrations.target_version("sqlite"))
    assert len([kind for kind, _, _ in migrated_catalog(2) if kind == "trigger"]) == 10
    assert migrated_catalog(1) < migrated_catalog(2)


SQLITE_SCHEMA_TAMPERING = {
    "drop the append-only triggers": (
        ["DROP TRIGGER tool_invocations_no_update", "DROP TRIGGER tool_invocations_no_delete"],
        ["trigger tool_invocations_no_delete is missing", "trigger tool_invocations_no_update is missing"],
    ),
    "weaken a trigger": (
        [
            "DROP TRIGGER tool_invocations_no_update",
            "CREATE TRIGGER tool_invocations_no_update BEFORE UPDATE ON tool_invocations WHEN 0"
            " BEGIN SELECT RAISE(ABORT, 'tool_invocations is append-only: UPDATE refused'); END",
        ],
        ["trigger tool_invocations_no_update differs from the migrated schema"],
    ),
    "add an index": (
        ["CREATE INDEX extra ON tool_invocations (ts)"],
        ["index extra is not part of the migrated schema"],
    ),
    "add a trigger": (
        ["CREATE TRIGGER quiet AFTER INSERT ON tool_invocations BEGIN SELECT 1; END"],
        ["trigger quiet is not part of the migrated schema"],
    ),
}


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize("case", sorted(SQLITE_SCHEMA_TAMPERING))
def test_a_changed_sqlite_schema_is_a_schema_mismatch(
    store: LedgerStore, rows: list[LedgerRow], admin: Admin, case: str
) -> None:
    """Before, dropping the append-only triggers left `verify` ok: the chain was intact, the guards were gone."""
    statements, expected = SQLITE_SCHEMA_TAMPERING[case]
    with contextlib.closing(admin.connect()) as conn:
        for statement in statements:
            conn.execute(statement)
    report = verify(store)
    assert report["ok"] is False
    assert _schema_problems(report) == expected
    assert [(p["conversation_id"], p["chain_seq"]) for p in report["problems"]] == [(None, None)] * len(expected)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_planner_statistics_are_not_a_schema_change(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    with contextlib.closing(admin.connect()) as conn:
        conn.execute("ANALYZE")
    assert verify(store)["ok"] is True


PG_SCHEMA_TAMPERING = {
    "disable a guard": (
        ["ALTER TABLE ledger.tool_invocations DISABLE TRIGGER tool_invocations_refuse_row"],
        ["trigger tool_invocations.tool_invocations_refuse_row differs from the migrated schema"],
    ),
    "origin-only guard": (
        ["ALTER TABLE ledger.tool_invocations ENABLE TRIGGER tool_invocations_refuse_row"],
        ["trigger tool_invocations.tool_invocations_refuse_row differs from the migrated schema"],
    ),
    "drop a guard": (
        ["DROP TRIGGER conversations_refuse_reuse ON ledger.conversations"],
        ["trigger conversations.conversations_refuse_reuse is missing"],
    ),
    "gut a function": (
        [
            "CREATE OR REPLACE FUNCTION ledger.refuse_mutation() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER"
            " SET search_path = pg_catalog, pg_temp AS $$ BEGIN RETURN OLD; END $$"
        ],
        ["function refuse_mutation() differs from the migrated schema"],
    ),
    "disable the cascade": (
        ["ALTER TABLE ledger.conversations DISABLE TRIGGER ALL"],
        [
            "trigger conversations.conversations_refuse_reuse differs from the migrated schema",
            "trigger conversations.conversations_refuse_truncate differs from the migrated schema",
            "trigger conversations.conversations_refuse_update differs from the migrated schema",
            "trigger conversations.conversations_tombstone differs from the migrated schema",
            "trigger conversations.tool_invocations_conversation_id_fkey/RI_FKey_cascade_del differs from the"
            " migrated schema",
            "trigger conversations.tool_invocations_conversation_id_fkey/RI_FKey_noaction_upd differs from the"
            " migrated schema",
        ],
    ),
    "row-level security": (
        ["ALTER TABLE ledger.tool_invocations ENABLE ROW LEVEL SECURITY"],
        ["relation tool_invocations differs from the migrated schema"],
    ),
    "a rule": (
        ["CREATE RULE quiet AS ON UPDATE TO ledger.tombstones DO INSTEAD NOTHING"],
        ["rule tombstones.quiet is not part of the migrated schema"],
    ),
    "drop a check": (
        ["ALTER TABLE ledger.tool_invocations DROP CONSTRAINT tool_invocations_shape"],
        ["constraint tool_invocations.tool_invocations_shape is missing"],
    ),
}


@pytest.mark.pg
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
@pytest.mark.parametrize("case", sorted(PG_SCHEMA_TAMPERING))
def test_a_changed_postgres_schema_is_a_schema_mismatch(
    store: LedgerStore, rows: list[LedgerRow], admin: Admin, case: str
) -> None:
    statements, expected = PG_SCHEMA_TAMPERING[case]
    with admin.connect() as conn:
        for statement in statements:
            conn.execute(statement)
    report = verify(store)
    assert report["ok"] is False
    assert _schema_problems(report) == expected


def test_an_edited_created_at_is_reported(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    """Before, created_at was covered by nothing: a superuser could move a conversation in time unseen."""
    earlier = _ts_param(admin, rows[0].ts - datetime.timedelta(days=1))
    admin.tamper([("UPDATE ledger.conversations SET created_at = ? WHERE id = ?", [earlier, CONV])])
    report = verify(store)
    assert _problems(report) == [(CONV, 1, "created_at_mismatch")]
    assert "differs from the ts of chain_seq 1" in report["problems"][0]["detail"]


def test_a_conversation_without_rows_is_reported(store: LedgerStore, rows: list[LedgerRow], admin: Admin) -> None:
    statement = "INSERT INTO ledger.conversations (id, created_at) VALUES (?, ?)"
    admin.tamper([(statement, ["conv-empty", _ts_param(admin, T0)])])
    assert _problems(verify(store)) == [("conv-empty", None, "created_at_mismatch")]


def _ts_param(admin: Admin, ts: datetime.datetime) -> Any:
    return format_ts(ts) if isinstance(admin, SqliteAdmin) else ts
