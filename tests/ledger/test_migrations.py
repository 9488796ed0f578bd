"""Migrations and `harness ledger migrate` (docs/ledger.md §7.4): checksums, versions, roles, and a PostgreSQL store
that never migrates by itself."""

from __future__ import annotations

import hashlib
import importlib.resources
from pathlib import Path

import psycopg
import pytest
from ledger_support import FakeClock, SqliteAdmin
from pgsupport import PgServer
from psycopg import sql

from harness.errors import InvalidInput
from harness.ledger import commands, migrations
from harness.ledger.errors import LedgerBackendError
from harness.ledger.model import LedgerEvent
from harness.ledger.settings import LedgerSettings
from harness.ledger.sqlite import statements
from harness.ledger.store import open_store
from harness.text.redact import Redactor

SETTINGS = LedgerSettings()


SHIPPED = {
    "sqlite": [(1, "initial"), (2, "deletion_integrity"), (3, "result_sidecars"), (4, "open_calls")],
    "postgres": [
        (1, "initial"),
        (2, "deletion_integrity"),
        (3, "tail_order"),
        (4, "result_sidecars"),
        (5, "open_calls"),
    ],
}
SQLITE_VERSION, PG_VERSION = len(SHIPPED["sqlite"]), len(SHIPPED["postgres"])
PG_APPLIED = [{"version": v, "name": name} for v, name in SHIPPED["postgres"]]


def test_shipped_migrations_and_checksums() -> None:
    for backend in migrations.BACKENDS:
        shipped = migrations.shipped(backend)
        assert [(m.version, m.name) for m in shipped] == SHIPPED[backend]
        folder = importlib.resources.files("harness.ledger.migrations").joinpath(backend)
        for migration in shipped:
            data = folder.joinpath(f"{migration.version:04d}_{migration.name}.sql").read_bytes()
            assert migration.checksum == hashlib.sha256(data).hexdigest()
        assert migrations.target_version(backend) == len(SHIPPED[backend])


def test_pending_refuses_changed_text_and_newer_schemas() -> None:
    shipped = migrations.shipped("sqlite")
    first = shipped[0]
    assert migrations.pending("sqlite", []) == list(shipped)
    assert migrations.pending("sqlite", [migrations.Applied(1, "initial", first.checksum)]) == list(shipped[1:])
    done = [migrations.Applied(m.version, m.name, m.checksum) for m in shipped]
    assert migrations.pending("sqlite", done) == []
    with pytest.raises(LedgerBackendError, match="checksum mismatch"):
        migrations.pending("sqlite", [migrations.Applied(1, "initial", "0" * 64)])
    with pytest.raises(LedgerBackendError, match="newer than this harness"):
        migrations.pending("sqlite", [*done, migrations.Applied(SQLITE_VERSION + 1, "x", "")])
    with pytest.raises(ValueError):
        migrations.shipped("oracle")


def test_sqlite_statement_splitting_keeps_trigger_bodies() -> None:
    parts = list(statements(migrations.shipped("sqlite")[0].sql))
    triggers = [p for p in parts if "CREATE TRIGGER" in p]
    assert len(triggers) == 8
    assert all(p.rstrip().endswith("END;") for p in triggers)
    assert any("CREATE TABLE tool_invocations" in p for p in parts)


class TestSqliteVersions:
    def test_a_newer_schema_is_refused(self, tmp_path: Path, redactor: Redactor) -> None:
        path = tmp_path / "ledger.sqlite3"
        open_store(str(path), redactor=redactor, clock=FakeClock(), settings=SETTINGS).close()
        SqliteAdmin(path).tamper(
            [
                (
                    "INSERT INTO schema_migrations VALUES (?, 'future', ?, '2026-01-01T00:00:00.000000Z', NULL)",
                    [SQLITE_VERSION + 1, "a" * 64],
                )
            ]
        )
        for create in (True, False):
            with pytest.raises(LedgerBackendError, match="newer than this harness"):
                open_store(str(path), redactor=redactor, clock=FakeClock(), settings=SETTINGS, create=create)

    def test_a_changed_migration_is_refused(self, tmp_path: Path, redactor: Redactor) -> None:
        path = tmp_path / "ledger.sqlite3"
        open_store(str(path), redactor=redactor, clock=FakeClock(), settings=SETTINGS).close()
        SqliteAdmin(path).tamper([("UPDATE schema_migrations SET checksum = ?", ["b" * 64])])
        with pytest.raises(LedgerBackendError, match="checksum mismatch"):
            open_store(str(path), redactor=redactor, clock=FakeClock(), settings=SETTINGS)

    def test_an_empty_file_is_migrated_by_a_writer_and_read_as_empty(self, tmp_path: Path, redactor: Redactor) -> None:
        path = tmp_path / "ledger.sqlite3"
        path.touch(mode=0o600)
        reader = open_store(str(path), redactor=redactor, clock=FakeClock(), settings=SETTINGS, create=False)
        assert reader.schema_version() == 0 and reader.heads() == []
        writer = open_store(str(path), redactor=redactor, clock=FakeClock(), settings=SETTINGS)
        assert writer.schema_version() == SQLITE_VERSION
        writer.close()


@pytest.fixture
def fresh_db(pg_server: PgServer) -> str:
    return pg_server.create_database("harness_ledger_mig")


def _schema_exists(pg_server: PgServer, dbname: str) -> bool:
    with pg_server.admin(dbname) as conn:
        return bool(conn.execute("SELECT to_regnamespace('ledger') IS NOT NULL").fetchone()[0])


@pytest.mark.pg
class TestPostgres:
    def test_migrate_with_an_admin_dsn(self, pg_server: PgServer, fresh_db: str, redactor: Redactor) -> None:
        owner = pg_server.reserve_role_name("harness_ledger_owner")
        app = pg_server.reserve_role_name("harness_ledger_app")
        login = pg_server.create_role("harness_ledger_login", login=True)
        dsn, admin = pg_server.dsn_for(fresh_db, login), pg_server.dsn_for(fresh_db)
        options = {"admin_dsn": admin, "owner_role": owner, "app_role": app, "grant_app_to": [login]}

        dry = commands.migrate(dsn, clock=FakeClock(), settings=SETTINGS, redactor=redactor, dry_run=True, **options)
        assert dry == {
            "backend": "postgresql",
            "from_version": 0,
            "to_version": PG_VERSION,
            "applied": PG_APPLIED,
            "roles": {"owner": owner, "app": app, "created": [owner, app]},
            "dry_run": True,
        }
        assert not _schema_exists(pg_server, fresh_db)

        done = commands.migrate(dsn, clock=FakeClock(), settings=SETTINGS, redactor=redactor, **options)
        assert done["applied"] == PG_APPLIED
        assert done["roles"] == {"owner": owner, "app": app, "created": [owner, app]}
        again = commands.migrate(dsn, clock=FakeClock(), settings=SETTINGS, redactor=redactor, **options)
        assert (again["from_version"], again["applied"], again["roles"]["created"]) == (PG_VERSION, [], [])

        with pg_server.admin(fresh_db) as conn:
            member = conn.execute("SELECT pg_has_role(%s, %s, 'MEMBER')", (login, app)).fetchone()[0]
            can_login = conn.execute("SELECT rolcanlogin FROM pg_roles WHERE rolname = %s", (owner,)).fetchone()[0]
            applied_by = {r[0] for r in conn.execute("SELECT applied_by FROM ledger.schema_migrations")}
        assert member is True and can_login is False and applied_by == {"postgres"}
        store = open_store(dsn, redactor=redactor, clock=FakeClock(), settings=SETTINGS)
        assert store.insert(LedgerEvent("c", "1", "k", "search_events", "start")).inserted
        store.close()

    def test_the_store_never_migrates(self, pg_server: PgServer, fresh_db: str, redactor: Redactor) -> None:
        with pytest.raises(
            LedgerBackendError, match=f"ledger schema 0, harness needs {PG_VERSION}: run harness ledger migrate"
        ):
            open_store(pg_server.dsn_for(fresh_db), redactor=redactor, clock=FakeClock(), settings=SETTINGS)
        assert not _schema_exists(pg_server, fresh_db)

    def test_a_newer_or_changed_schema_is_refused(self, pg_server: PgServer, fresh_db: str, redactor: Redactor) -> None:
        dsn = pg_server.dsn_for(fresh_db)
        commands.migrate(dsn, clock=FakeClock(), settings=SETTINGS, redactor=redactor)
        with pg_server.admin(fresh_db) as conn:
            conn.execute(
                "INSERT INTO ledger.schema_migrations (version, name, checksum) VALUES (%s, 'x', %s)",
                (PG_VERSION + 1, "c" * 64),
            )
        with pytest.raises(LedgerBackendError, match="newer than this harness"):
            open_store(dsn, redactor=redactor, clock=FakeClock(), settings=SETTINGS)
        with pytest.raises(LedgerBackendError, match="newer"):
            commands.migrate(dsn, clock=FakeClock(), settings=SETTINGS, redactor=redactor)

    def test_migrate_as_the_ledger_role(self, pg_server: PgServer, fresh_db: str, redactor: Redactor) -> None:
        """Without --admin-dsn the DSN's role owns everything and only existing roles get grants."""
        migrator = pg_server.create_role("harness_ledger_migrator", login=True)
        app = pg_server.create_role("harness_ledger_app")
        missing_app = pg_server.reserve_role_name("harness_ledger_app_missing")
        with pg_server.admin(fresh_db) as conn:
            conn.execute(
                sql.SQL("GRANT CREATE ON DATABASE {} TO {}").format(sql.Identifier(fresh_db), sql.Identifier(migrator))
            )
        dsn = pg_server.dsn_for(fresh_db, migrator)
        report = commands.migrate(dsn, clock=FakeClock(), settings=SETTINGS, redactor=redactor, app_role=app)
        assert report["roles"] == {"owner": migrator, "app": app, "created": []}
        with pg_server.admin(fresh_db) as conn:
            owner = conn.execute(
                "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'ledger.tool_invocations'::regclass"
            ).fetchone()[0]
            granted = conn.execute(
                "SELECT has_table_privilege(%s, 'ledger.tool_invocations', 'INSERT')", (app,)
            ).fetchone()[0]
        assert owner == migrator and granted is True
        other = commands.migrate(
            dsn, clock=FakeClock(), settings=SETTINGS, redactor=redactor, app_role=missing_app, dry_run=True
        )
        assert other["roles"] == {"owner": migrator, "app": None, "created": []}

    def test_refusals(self, pg_server: PgServer, fresh_db: str, redactor: Redactor) -> None:
        dsn = pg_server.dsn_for(fresh_db)
        with pytest.raises(InvalidInput, match="role name"):
            commands.migrate(dsn, clock=FakeClock(), settings=SETTINGS, redactor=redactor, owner_role="Robert'); DROP")
        with pytest.raises(LedgerBackendError, match="does not exist"):
            commands.migrate(
                dsn,
                clock=FakeClock(),
                settings=SETTINGS,
                redactor=redactor,
                admin_dsn=dsn,
                grant_app_to=["no_such_login_x1"],
            )
        assert not _schema_exists(pg_server, fresh_db)

    def test_an_unreachable_server_is_unavailable(self, redactor: Redactor) -> None:
        dsn = "postgresql://app:s3cret-password@127.0.0.1:1/ledger"
        with pytest.raises(LedgerBackendError) as caught:
            open_store(dsn, redactor=redactor, clock=FakeClock(), settings=LedgerSettings(connect_timeout_s=1))
        assert "s3cret-password" not in str(caught.value)
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(dsn, connect_timeout=1)
