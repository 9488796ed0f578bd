"""Ledger test fixtures: a real redactor, a fake clock, SQLite files and PostgreSQL databases with real roles."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from ledger_support import KNOWN_SECRET, FakeClock, PgAdmin, PgLedger, SqliteAdmin, open_test_store
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)

from harness.ledger.commands import migrate
from harness.ledger.settings import LedgerSettings
from harness.ledger.store import LedgerStore
from harness.text.redact import KnownSecrets, Redactor, build_redactor


@pytest.fixture(scope="session")
def redactor() -> Redactor:
    return build_redactor(KnownSecrets.from_environment({"HARNESS_TEST_LEDGER_TOKEN": KNOWN_SECRET}))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@dataclasses.dataclass(frozen=True)
class _PgTemplate:
    dbname: str
    owner_role: str
    app_role: str
    login_role: str


@pytest.fixture(scope="session")
def pg_ledger_template(pg_server: PgServer, redactor: Redactor) -> _PgTemplate:  # noqa: F811
    """A migrated template database (owner/app roles, an app login); each test clones it."""
    owner = pg_server.reserve_role_name("harness_ledger_owner_t")
    app = pg_server.reserve_role_name("harness_ledger_app_t")
    login = pg_server.create_role("harness_ledger_login_t", login=True)
    dbname = pg_server.create_database("harness_ledger_tmpl")
    migrate(
        pg_server.dsn_for(dbname, login),
        clock=FakeClock(),
        settings=LedgerSettings(),
        redactor=redactor,
        admin_dsn=pg_server.dsn_for(dbname),
        owner_role=owner,
        app_role=app,
        grant_app_to=[login],
    )
    return _PgTemplate(dbname, owner, app, login)


@pytest.fixture
def pg_ledger(pg_server: PgServer, pg_ledger_template: _PgTemplate) -> Iterator[PgLedger]:  # noqa: F811
    tmpl = pg_ledger_template
    dbname = pg_server.create_database("harness_ledger", template=tmpl.dbname)
    yield PgLedger(
        pg_server,
        dbname,
        pg_server.dsn_for(dbname, tmpl.login_role),
        pg_server.dsn_for(dbname),
        tmpl.owner_role,
        tmpl.app_role,
        tmpl.login_role,
    )
    pg_server.drop_database(dbname)


BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def ledger_target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A fresh ledger of the parametrized backend: a SQLite path or the app login's DSN."""
    if backend == "sqlite":
        return str(tmp_path / "ledger.sqlite3")
    return str(request.getfixturevalue("pg_ledger").dsn)


@pytest.fixture
def store(ledger_target: str, redactor: Redactor, clock: FakeClock) -> Iterator[LedgerStore]:
    opened = open_test_store(ledger_target, redactor, clock)
    yield opened
    opened.close()


@pytest.fixture
def admin(backend: str, ledger_target: str, request: pytest.FixtureRequest) -> SqliteAdmin | PgAdmin:
    """Raw access to the same ledger as `store`, bypassing it."""
    if backend == "sqlite":
        return SqliteAdmin(Path(ledger_target))
    pg: PgLedger = request.getfixturevalue("pg_ledger")
    return PgAdmin(pg.admin_dsn, pg.owner_role)
