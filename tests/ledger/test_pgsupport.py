"""The shared PostgreSQL test support (tests/pgsupport.py): both ways of getting a server, and the skip/fail rule."""

from __future__ import annotations

import psycopg
import pytest
from pgsupport import (
    ENV_DSN,
    ENV_REQUIRE,
    PgServer,
    PgUnavailable,
    acquire_server,
    find_initdb,
    skip_or_fail,
    with_params,
)


def _exists(server: PgServer, catalog: str, column: str, name: str) -> bool:
    with server.admin() as conn:
        return conn.execute(f"SELECT 1 FROM {catalog} WHERE {column} = %s", (name,)).fetchone() is not None


@pytest.mark.pg
def test_the_env_path_creates_and_drops_what_it_made(pg_server: PgServer) -> None:
    server = acquire_server({ENV_DSN: pg_server.dsn})
    assert server.source == "env"
    db = server.create_database("harness_pgsupport")
    login = server.create_role("harness_pgsupport_login", login=True)
    reserved = server.reserve_role_name("harness_pgsupport_later")
    with server.admin() as conn:
        conn.execute(f'CREATE ROLE "{reserved}" NOLOGIN')
    with psycopg.connect(server.dsn_for(db, login)) as conn:
        assert conn.execute("SELECT current_user, current_database()").fetchone() == (login, db)
    assert db.startswith("harness_pgsupport_") and len(db) == len("harness_pgsupport_") + 8
    server.stop()
    assert not _exists(pg_server, "pg_database", "datname", db)
    for role in (login, reserved):
        assert not _exists(pg_server, "pg_roles", "rolname", role)
    # The env server itself is not stopped: it belongs to whoever runs it.
    with psycopg.connect(pg_server.dsn) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.skipif(find_initdb() is None, reason="no PostgreSQL server binaries installed")
def test_the_throwaway_cluster_path() -> None:
    server = acquire_server({})
    assert server.source == "throwaway"
    try:
        db = server.create_database()
        with psycopg.connect(server.dsn_for(db)) as conn:
            assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (True,)
            assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
    finally:
        server.stop()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.dsn, connect_timeout=2)


def test_no_server_gives_the_reason() -> None:
    with pytest.raises(PgUnavailable, match="no PostgreSQL server binaries match /nonexistent"):
        acquire_server({}, initdb_glob="/nonexistent/*/bin/initdb")
    with pytest.raises(PgUnavailable, match=f"cannot connect with {ENV_DSN}"):
        acquire_server({ENV_DSN: "postgresql://postgres@127.0.0.1:1/postgres"})


def test_skip_unless_required() -> None:
    with pytest.raises(pytest.skip.Exception, match="PostgreSQL unavailable: because"):
        skip_or_fail("because", {})
    with pytest.raises(pytest.fail.Exception, match=f"PostgreSQL is required \\({ENV_REQUIRE}=1\\): because"):
        skip_or_fail("because", {ENV_REQUIRE: "1"})


def test_with_params_builds_uris() -> None:
    base = "postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable"
    assert with_params(base, dbname="x", user="app") == "postgresql://app@127.0.0.1:5432/x?sslmode=disable"
    assert with_params("host=/run/pg dbname=d user=u") == "postgresql://u@/d?host=%2Frun%2Fpg"
    assert with_params("postgresql://u:p%40ss@h/d") == "postgresql://u:p%40ss@h/d"
