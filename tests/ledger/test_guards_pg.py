"""Append-only guarantees on PostgreSQL (docs/ledger.md §7.2, docs/ledger.md §14): roles, ALWAYS triggers, the definer-rights probe,
tombstones."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Iterator

import psycopg
import pytest
from ledger_support import FakeClock, PgAdmin, PgLedger, new_pg_upgrade
from pgsupport import PgServer
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from harness.ledger import commands, migrations
from harness.ledger.errors import LedgerBackendError
from harness.ledger.model import LedgerEvent, end_event
from harness.ledger.settings import LedgerSettings
from harness.ledger.store import LedgerStore, open_store
from harness.ledger.verify import verify
from harness.text.redact import Redactor

pytestmark = pytest.mark.pg

TABLES = ("tool_invocations", "conversations", "tombstones")


@pytest.fixture
def backend() -> str:
    return "postgresql"


@pytest.fixture
def filled(store: LedgerStore, pg_ledger: PgLedger) -> Iterator[LedgerStore]:
    """Two conversations with a finished call each, and a tombstone from a third one."""
    for cid in ("conv-a", "conv-b", "conv-gone"):
        row = store.insert(LedgerEvent(cid, "1", "call-1", "search_events", "start", arguments="{}")).row
        store.insert(end_event(row, ended_at=row.ts + datetime.timedelta(seconds=1), duration_ms=1000, status="ok"))
    PgAdmin(pg_ledger.admin_dsn, pg_ledger.owner_role).delete_conversation("conv-gone")
    yield store


def _export(store: LedgerStore) -> str:
    return "".join(commands.export_lines(store))


def _expect_42501(conn: psycopg.Connection, statement: str) -> str:
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(statement)
    assert caught.value.sqlstate == "42501", caught.value
    return str(caught.value)


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("verb", ["UPDATE ledger.{t} SET {c} = {c}", "DELETE FROM ledger.{t}", "TRUNCATE ledger.{t}"])
def test_the_app_role_cannot_change_data(filled: LedgerStore, pg_ledger: PgLedger, table: str, verb: str) -> None:
    before = _export(filled)
    column = "conversation_id" if table != "conversations" else "id"
    with psycopg.connect(pg_ledger.dsn, autocommit=True) as conn:
        message = _expect_42501(conn, verb.format(t=table, c=column))
    assert "permission denied" in message
    assert _export(filled) == before


def test_app_role_privileges_are_exactly_select_and_insert(filled: LedgerStore, pg_ledger: PgLedger) -> None:
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT t, p, has_table_privilege(%s, 'ledger.' || t, p) FROM unnest(%s::text[]) t,"
            " unnest(ARRAY['SELECT','INSERT','UPDATE','DELETE','TRUNCATE','REFERENCES','TRIGGER']) p",
            (pg_ledger.app_role, [*TABLES, "schema_migrations"]),
        ).fetchall()
        granted = {(t, p) for t, p, ok in rows if ok}
        assert granted == {
            ("tool_invocations", "SELECT"),
            ("tool_invocations", "INSERT"),
            ("conversations", "SELECT"),
            ("conversations", "INSERT"),
            ("tombstones", "SELECT"),
            ("schema_migrations", "SELECT"),
        }
        public = conn.execute(
            "SELECT count(*) FROM information_schema.role_table_grants"
            " WHERE table_schema = 'ledger' AND grantee = 'PUBLIC'"
        ).fetchone()[0]
        assert public == 0
        schema_public = conn.execute("SELECT has_schema_privilege('public', 'ledger', 'USAGE')").fetchone()[0]
        assert schema_public is False


@pytest.mark.parametrize("replica", [False, True], ids=["origin", "replica"])
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE ledger.tool_invocations SET seq = seq",
        "DELETE FROM ledger.tool_invocations WHERE conversation_id = 'conv-a'",
        "TRUNCATE ledger.tool_invocations CASCADE",
        "TRUNCATE ledger.result_sidecars",
        "UPDATE ledger.conversations SET created_at = created_at",
        "TRUNCATE ledger.conversations CASCADE",
        "UPDATE ledger.schema_migrations SET name = name",
        "DELETE FROM ledger.schema_migrations",
    ],
)
def test_triggers_bind_superusers_even_in_replica_mode(
    filled: LedgerStore, pg_ledger: PgLedger, statement: str, replica: bool
) -> None:
    before = _export(filled)
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        if replica:
            conn.execute("SET session_replication_role = replica")
        assert "append-only" in _expect_42501(conn, statement)
    assert _export(filled) == before


def test_every_ledger_trigger_is_enabled_always(filled: LedgerStore, pg_ledger: PgLedger) -> None:
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT c.relname, t.tgname, t.tgenabled FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'ledger' AND NOT t.tgisinternal"
        ).fetchall()
    assert len(rows) == 13
    assert ("tool_invocations", "tool_invocations_track_open_call", "A") in rows
    assert {enabled for _, _, enabled in rows} == {"A"}


def test_trigger_functions_are_definer_rights_with_a_pinned_search_path(filled: LedgerStore, pg_ledger: PgLedger) -> None:
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT p.proname, p.prosecdef, p.proconfig, pg_get_userbyid(p.proowner) FROM pg_proc p"
            " JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'ledger' ORDER BY 1"
        ).fetchall()
        owners = conn.execute(
            "SELECT DISTINCT pg_get_userbyid(relowner) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'ledger'"
        ).fetchall()
        schema_owner = conn.execute(
            "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'ledger'"
        ).fetchone()[0]
    assert [r[0] for r in rows] == ["record_tombstone", "refuse_mutation", "refuse_reused_id", "track_open_call"]
    for _, definer, config, owner in rows:
        assert definer is True
        assert config == ["search_path=pg_catalog, pg_temp"]
        assert owner == pg_ledger.owner_role
    assert owners == [(pg_ledger.owner_role,)] and schema_owner == pg_ledger.owner_role


def test_the_cascade_probe_cannot_be_fooled(filled: LedgerStore, pg_ledger: PgLedger) -> None:
    """Row-level security hides every parent from the prober, yet its standalone delete is still refused."""
    prober = pg_ledger.server.create_role("harness_ledger_probe", login=True)
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        ident = sql.Identifier(prober)
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA ledger TO {}").format(ident))
        conn.execute(sql.SQL("GRANT SELECT, DELETE ON ledger.tool_invocations TO {}").format(ident))
        conn.execute(sql.SQL("GRANT SELECT ON ledger.conversations TO {}").format(ident))
        conn.execute("ALTER TABLE ledger.conversations ENABLE ROW LEVEL SECURITY")
    before = _export(filled)
    with psycopg.connect(pg_ledger.server.dsn_for(pg_ledger.dbname, prober), autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM ledger.conversations").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM ledger.tool_invocations").fetchone()[0] == 4
        assert "append-only" in _expect_42501(conn, "DELETE FROM ledger.tool_invocations")
    assert _export(filled) == before


def test_deletion_leaves_a_tombstone(filled: LedgerStore, pg_ledger: PgLedger) -> None:
    heads = {h.conversation_id: h for h in filled.heads()}
    PgAdmin(pg_ledger.admin_dsn, pg_ledger.owner_role).delete_conversation("conv-a")
    assert filled.list_by_conversation("conv-a") == []
    stone = [t for t in filled.tombstones() if t.conversation_id == "conv-a"]
    assert len(stone) == 1
    assert (stone[0].row_count, stone[0].final_chain_seq, stone[0].final_row_hash) == (2, 2, heads["conv-a"].row_hash)
    # session_user: SET ROLE does not hide who logged in.
    assert stone[0].deleted_by == conninfo_to_dict(pg_ledger.admin_dsn)["user"]
    assert [h.conversation_id for h in filled.heads()] == ["conv-b"]
    assert len(filled.list_by_conversation("conv-b")) == 2
    assert verify(filled)["ok"] is True


@pytest.mark.parametrize("as_owner", [True, False], ids=["owner", "superuser"])
@pytest.mark.parametrize("statement", ["UPDATE ledger.tombstones SET row_count = 0", "DELETE FROM ledger.tombstones"])
def test_tombstones_are_immutable(filled: LedgerStore, pg_ledger: PgLedger, statement: str, as_owner: bool) -> None:
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        if as_owner:
            conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(pg_ledger.owner_role)))
        assert "append-only" in _expect_42501(conn, statement)
        assert conn.execute("SELECT count(*) FROM ledger.tombstones").fetchone()[0] == 1


def test_a_role_that_could_mutate_gets_a_warning(
    filled: LedgerStore, pg_ledger: PgLedger, redactor: Redactor, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="harness.ledger"):
        privileged = open_store(pg_ledger.admin_dsn, redactor=redactor, clock=FakeClock(), settings=LedgerSettings())
        privileged.close()
        assert "can UPDATE, DELETE or TRUNCATE" in caplog.text
        caplog.clear()
        plain = open_store(pg_ledger.dsn, redactor=redactor, clock=FakeClock(), settings=LedgerSettings())
        plain.close()
        assert caplog.text == ""


def test_a_login_without_insert_is_unavailable(filled: LedgerStore, pg_ledger: PgLedger, redactor: Redactor) -> None:
    reader = pg_ledger.server.create_role("harness_ledger_reader", login=True)
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA ledger TO {}").format(sql.Identifier(reader)))
        conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA ledger TO {}").format(sql.Identifier(reader)))
    store = open_store(
        pg_ledger.server.dsn_for(pg_ledger.dbname, reader),
        redactor=redactor,
        clock=FakeClock(),
        settings=LedgerSettings(),
    )
    try:
        with pytest.raises(LedgerBackendError, match="permission denied"):
            store.insert(LedgerEvent("conv-new", "1", "c", "search_events", "start"))
        assert len(store.list_by_conversation("conv-a")) == 2
    finally:
        store.close()


def _replica(conn: psycopg.Connection) -> psycopg.Connection:
    conn.execute("SET session_replication_role = replica")
    return conn


def test_replica_mode_cannot_delete_a_conversation_whose_rows_would_stay(filled: LedgerStore, pg_ledger: PgLedger) -> None:
    """The cascade does not run in replica mode, so the delete that would orphan the rows is itself refused."""
    before = _export(filled)
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        message = _expect_42501(_replica(conn), "DELETE FROM ledger.conversations WHERE id = 'conv-a'")
        assert "session_replication_role" in message
        assert conn.execute("SELECT count(*) FROM ledger.tombstones").fetchone()[0] == 1
    assert _export(filled) == before
    assert verify(filled)["ok"] is True


@pytest.mark.parametrize("replica", [False, True], ids=["origin", "replica"])
def test_a_deleted_conversation_id_is_never_recreated(filled: LedgerStore, pg_ledger: PgLedger, replica: bool) -> None:
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        if replica:
            _replica(conn)
        message = _expect_42501(
            conn, "INSERT INTO ledger.conversations (id, created_at) VALUES ('conv-gone', clock_timestamp())"
        )
        assert "conv-gone was deleted" in message
        assert conn.execute("SELECT count(*) FROM ledger.conversations WHERE id = 'conv-gone'").fetchone()[0] == 0


def test_a_cascade_still_deletes_the_whole_conversation_in_one_statement(filled: LedgerStore, pg_ledger: PgLedger) -> None:
    """A writable CTE that deletes the conversation and chosen rows in one statement is still a standalone delete."""
    with psycopg.connect(pg_ledger.admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(pg_ledger.owner_role)))
        _expect_42501(
            conn,
            "WITH c AS (DELETE FROM ledger.conversations WHERE id = 'conv-a' RETURNING id)"
            " DELETE FROM ledger.tool_invocations WHERE conversation_id IN (SELECT id FROM c) AND chain_seq = 2",
        )
        conn.execute("DELETE FROM ledger.conversations WHERE id = 'conv-a'")
        left = conn.execute("SELECT count(*) FROM ledger.tool_invocations WHERE conversation_id = 'conv-a'").fetchone()
        assert left == (0,)
    assert verify(filled)["ok"] is True


def test_an_upgraded_ledger_refuses_the_replica_mode_rewrite(
    pg_server: PgServer, redactor: Redactor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger migrated by the previous release (schema 1), where a superuser already deleted a conversation row in
    replica mode, leaving its rows: after `migrate`, its rows cannot be deleted one by one and the id cannot come
    back. Before the fix both succeeded, which let the chosen rows vanish without a trace."""
    ledger = new_pg_upgrade(pg_server, "u")
    dsn, admin_dsn = ledger.dsn, ledger.admin_dsn

    first = migrations.shipped("postgres")[:1]
    with monkeypatch.context() as previous_release:
        previous_release.setattr(migrations, "shipped", lambda backend: first)
        assert ledger.migrate(redactor)["to_version"] == 1
        store = open_store(dsn, redactor=redactor, clock=FakeClock(), settings=LedgerSettings())
        for n in range(1, 4):
            store.insert(LedgerEvent("conv-x", str(n), f"call-{n}", "search_events", "start"))
        store.close()
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            _replica(conn).execute("DELETE FROM ledger.conversations WHERE id = 'conv-x'")
    report = ledger.migrate(redactor)
    assert (report["from_version"], report["to_version"]) == (1, migrations.target_version("postgres"))
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        _replica(conn)
        assert "append-only" in _expect_42501(
            conn, "DELETE FROM ledger.tool_invocations WHERE conversation_id = 'conv-x' AND chain_seq = 2"
        )
        assert "conv-x was deleted" in _expect_42501(
            conn, "INSERT INTO ledger.conversations (id, created_at) VALUES ('conv-x', clock_timestamp())"
        )
        assert conn.execute("SELECT count(*) FROM ledger.tool_invocations").fetchone()[0] == 3
