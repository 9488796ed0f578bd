"""Shared PostgreSQL test support (docs/architecture.md "The two commands").

A superuser server comes from HARNESS_TEST_PG_DSN, else from a throwaway cluster started with the installed
server binaries (as the `postgres` system user when running as root, since initdb refuses root), else the
tests are skipped with a visible reason; under HARNESS_REQUIRE_PG=1 they fail instead. Every database and
role a run creates carries a random suffix and is dropped afterwards.

Use the `pg_server` fixture (import it into a conftest) and `PgServer.create_database` / `create_role`.
"""

from __future__ import annotations

import atexit
import dataclasses
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NoReturn
from urllib.parse import quote, urlencode

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

ENV_DSN = "HARNESS_TEST_PG_DSN"
ENV_REQUIRE = "HARNESS_REQUIRE_PG"
INITDB_GLOB = "/usr/lib/postgresql/*/bin/initdb"
SERVER_USER = "postgres"
_START_TIMEOUT_S = 60


class PgUnavailable(Exception):
    """No PostgreSQL server could be obtained; the message is the visible skip reason."""


def random_suffix() -> str:
    """A short random suffix for database and role names."""
    return secrets.token_hex(4)


def with_params(dsn: str, **params: str) -> str:
    """The DSN, as a postgresql:// URI, with some connection parameters replaced (dbname, user, ...)."""
    merged = {key: str(value) for key, value in conninfo_to_dict(dsn).items()}
    merged.update(params)
    user, password = merged.pop("user", ""), merged.pop("password", "")
    host, port, dbname = merged.pop("host", ""), merged.pop("port", ""), merged.pop("dbname", "")
    userinfo = quote(user, safe="") + (":" + quote(password, safe="") if password else "")
    if host.startswith("/"):
        merged["host"], host = host, ""
    netloc = (userinfo + "@" if userinfo else "") + host + (":" + port if port else "")
    query = "?" + urlencode(merged) if merged else ""
    return f"postgresql://{netloc}/{quote(dbname, safe='')}{query}"


@dataclasses.dataclass
class _Cluster:
    root: Path
    bindir: Path
    run_as: str | None

    def pg_ctl(self, *args: str) -> None:
        _run([str(self.bindir / "pg_ctl"), "-D", str(self.root / "data"), *args], self.run_as, self.root)

    def stop(self) -> None:
        try:
            self.pg_ctl("-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _run(cmd: list[str], run_as: str | None, cwd: Path) -> None:
    result = subprocess.run(
        cmd, user=run_as, cwd=cwd, capture_output=True, text=True, timeout=_START_TIMEOUT_S, check=False
    )
    if result.returncode != 0:
        raise PgUnavailable(f"{Path(cmd[0]).name} failed ({result.returncode}): {result.stderr.strip()[-400:]}")


class PgServer:
    """A reachable PostgreSQL server with a superuser DSN; tracks what the run creates so it can drop it."""

    def __init__(self, dsn: str, source: str, cluster: _Cluster | None = None) -> None:
        self.dsn = dsn
        self.source = source
        self._cluster = cluster
        self._databases: list[str] = []
        self._roles: list[str] = []
        self._lock = threading.Lock()

    def dsn_for(self, dbname: str | None = None, user: str | None = None) -> str:
        """A DSN to `dbname` (default the maintenance database) as `user` (default the superuser)."""
        params = {}
        if dbname is not None:
            params["dbname"] = dbname
        if user is not None:
            params["user"] = user
        return with_params(self.dsn, **params)

    def admin(self, dbname: str | None = None) -> psycopg.Connection:
        """An autocommit superuser connection."""
        return psycopg.connect(self.dsn_for(dbname), autocommit=True)

    def create_database(self, prefix: str = "harness_test", template: str | None = None) -> str:
        """Create a randomly suffixed database (optionally from a template) and track it for dropping."""
        name = f"{prefix}_{random_suffix()}"
        query = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template is not None:
            query = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(template))
        with self.admin() as conn:
            conn.execute(query)
        with self._lock:
            self._databases.append(name)
        return name

    def drop_database(self, name: str) -> None:
        """Drop a database, disconnecting its sessions."""
        with self.admin() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        with self._lock:
            if name in self._databases:
                self._databases.remove(name)

    def create_role(self, prefix: str, *, login: bool = False) -> str:
        """Create a randomly suffixed role (NOLOGIN unless `login`) and track it for dropping."""
        name = self.reserve_role_name(prefix)
        with self.admin() as conn:
            conn.execute(sql.SQL("CREATE ROLE {} " + ("LOGIN" if login else "NOLOGIN")).format(sql.Identifier(name)))
        return name

    def reserve_role_name(self, prefix: str) -> str:
        """A randomly suffixed role name that code under test will create; it is dropped at cleanup."""
        name = f"{prefix}_{random_suffix()}"
        with self._lock:
            self._roles.append(name)
        return name

    def cleanup(self) -> None:
        """Drop every tracked database, then every tracked role."""
        with self._lock:
            databases, roles = list(self._databases), list(self._roles)
        for name in databases:
            self.drop_database(name)
        with self.admin() as conn:
            for name in reversed(roles):
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))
        with self._lock:
            self._roles.clear()

    def stop(self) -> None:
        """Clean up; stop and delete the cluster if this run started it."""
        try:
            self.cleanup()
        finally:
            if self._cluster is not None:
                self._cluster.stop()
                self._cluster = None


def _probe(dsn: str) -> None:
    try:
        with psycopg.connect(dsn, connect_timeout=5) as conn:
            if not conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
                raise PgUnavailable(f"{ENV_DSN} must name a superuser")
    except psycopg.Error as exc:
        raise PgUnavailable(f"cannot connect with {ENV_DSN}: {str(exc).strip().splitlines()[0]}") from exc


def find_initdb(pattern: str = INITDB_GLOB) -> Path | None:
    """The newest installed initdb matching `pattern`, if any."""
    found = sorted(glob.glob(pattern), key=lambda p: [int(x) if x.isdigit() else 0 for x in Path(p).parts])
    return Path(found[-1]) if found else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_throwaway_cluster(initdb: Path) -> PgServer:
    """initdb a cluster in a temporary directory and start it on a free loopback port (trust auth)."""
    run_as = None
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(SERVER_USER)
        except KeyError as exc:
            raise PgUnavailable(f"running as root and there is no {SERVER_USER!r} system user for initdb") from exc
        run_as = SERVER_USER
    root = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    if run_as is not None:
        os.chown(root, entry.pw_uid, entry.pw_gid)
    cluster = _Cluster(root, initdb.parent, run_as)
    try:
        _run(
            [
                str(initdb),
                "-D",
                str(root / "data"),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            run_as,
            root,
        )
        port = _free_port()
        options = f"-p {port} -c listen_addresses=127.0.0.1 -k {root} -c fsync=off -c max_connections=200"
        cluster.pg_ctl("-l", str(root / "server.log"), "-o", options, "-w", "-t", str(_START_TIMEOUT_S), "start")
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return PgServer(f"postgresql://postgres@127.0.0.1:{port}/postgres", "throwaway", cluster)


def acquire_server(environ: Mapping[str, str] = os.environ, *, initdb_glob: str = INITDB_GLOB) -> PgServer:
    """A server from HARNESS_TEST_PG_DSN, else a throwaway cluster; raises PgUnavailable with the reason."""
    dsn = environ.get(ENV_DSN, "")
    if dsn:
        _probe(dsn)
        return PgServer(dsn, "env")
    initdb = find_initdb(initdb_glob)
    if initdb is None:
        raise PgUnavailable(f"{ENV_DSN} is unset and no PostgreSQL server binaries match {initdb_glob}")
    return start_throwaway_cluster(initdb)


def skip_or_fail(reason: str, environ: Mapping[str, str] = os.environ) -> NoReturn:
    """Skip with the reason, or fail under HARNESS_REQUIRE_PG=1."""
    if environ.get(ENV_REQUIRE) == "1":
        pytest.fail(f"PostgreSQL is required ({ENV_REQUIRE}=1): {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL unavailable: {reason}")


_session: PgServer | None = None
_session_error: str | None = None
_session_lock = threading.Lock()


def session_server() -> PgServer:
    """The process-wide server, obtained once and stopped at exit; skips or fails when there is none."""
    global _session, _session_error
    with _session_lock:
        if _session is None and _session_error is None:
            try:
                _session = acquire_server()
            except PgUnavailable as exc:
                _session_error = str(exc)
            else:
                atexit.register(_session.stop)
        if _session is None:
            skip_or_fail(_session_error or "unknown reason")
        return _session


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The run's PostgreSQL server (shared by every conftest that imports this fixture)."""
    yield session_server()
