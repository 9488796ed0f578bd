"""The PostgreSQL backend (docs/ledger.md §7.2, docs/ledger.md §7.4, docs/ledger.md §10): pooled connections, advisory-lock writes, owner/app roles."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import itertools
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
import psycopg_pool
from psycopg import sql

from harness.ledger import catalog, chain, migrations
from harness.ledger.dialect import Dialect, as_is
from harness.ledger.errors import LedgerBackendError, LedgerError, LedgerIntegrityError
from harness.ledger.records import Clock
from harness.ledger.redaction_boundary import LedgerRedactor
from harness.ledger.settings import LedgerSettings
from harness.ledger.sqlcore import Guess, Hasher, SqlStore, WriteOutcome, WriteWork, send_guess
from harness.ledger.sqlread import SqlSnapshot
from harness.text import canonjson

T = TypeVar("T")
log = logging.getLogger("harness.ledger")

APPLICATION_NAME = "triage-harness"
DEFAULT_OWNER_ROLE = "harness_ledger_owner"
DEFAULT_APP_ROLE = "harness_ledger_app"
# pg_advisory_lock key of the migration runner: the first 8 bytes of SHA-256("triage-harness.ledger.migrate").
MIGRATION_LOCK_KEY = 0x2F0A6C55D3B4E1A7
LEDGER_TABLES = (
    "conversations",
    "tool_invocations",
    "result_sidecars",
    "open_calls",
    "tombstones",
    "schema_migrations",
)
_ROLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_RETRIED_CONSTRAINTS = ("tool_invocations_chain", "tool_invocations_call_key", "conversations_pkey")
_UTC = datetime.UTC
_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('triage-harness.ledger:' || %s, 0))"


# Every ledger object as it bears on the guards. Owners are compared with the schema owner (role names are
# configurable), and CHECK constraints by name and state only: their deparsed text may vary between releases.
CATALOG_SQL = """SELECT 'relation'::text, c.relname::text,
       'kind=' || c.relkind::text || ' rls=' || c.relrowsecurity::text || ' force_rls=' || c.relforcerowsecurity::text
       || ' owned_by_schema_owner=' || (c.relowner = n.nspowner)::text
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'ledger' AND c.relkind <> 'i'
UNION ALL
SELECT 'column', c.relname || '.' || a.attname,
       format_type(a.atttypid, a.atttypmod) || ' not_null=' || a.attnotnull::text
       || ' identity=' || a.attidentity::text || ' collation=' || coalesce(co.collname, '')
       || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_collation co ON co.oid = a.attcollation
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE n.nspname = 'ledger' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'constraint', c.relname || '.' || k.conname,
       'type=' || k.contype::text || ' validated=' || k.convalidated::text || ' deferrable=' || k.condeferrable::text
       || CASE WHEN k.contype = 'c' THEN '' ELSE ' ' || pg_get_constraintdef(k.oid) END
  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'ledger' AND k.contype <> 'n'
UNION ALL
SELECT 'index', i.relname,
       pg_get_indexdef(x.indexrelid) || ' valid=' || x.indisvalid::text || ' ready=' || x.indisready::text
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
 WHERE n.nspname = 'ledger'
UNION ALL
SELECT 'trigger',
       c.relname || '.'
       || CASE WHEN t.tgisinternal THEN coalesce(k.conname::text, '') || '/' || p.proname ELSE t.tgname::text END,
       'enabled=' || t.tgenabled::text || ' type=' || t.tgtype::text || ' function=' || pn.nspname || '.' || p.proname
       || CASE WHEN t.tgisinternal THEN ' internal' ELSE ' ' || pg_get_triggerdef(t.oid) END
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_namespace pn ON pn.oid = p.pronamespace
  LEFT JOIN pg_constraint k ON k.oid = t.tgconstraint
 WHERE n.nspname = 'ledger'
UNION ALL
SELECT 'function', p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')',
       'language=' || l.lanname || ' definer=' || p.prosecdef::text || ' volatility=' || p.provolatile::text
       || ' returns=' || format_type(p.prorettype, NULL)
       || ' config=' || coalesce(array_to_string(p.proconfig, ';'), '')
       || ' owned_by_schema_owner=' || (p.proowner = n.nspowner)::text
       || ' source_sha256=' || encode(sha256(convert_to(p.prosrc, 'UTF8')), 'hex')
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
 WHERE n.nspname = 'ledger'
UNION ALL
SELECT 'rule', c.relname || '.' || r.rulename, pg_get_ruledef(r.oid)
  FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'ledger'
UNION ALL
SELECT 'policy', c.relname || '.' || y.polname, 'command=' || y.polcmd::text || ' permissive=' || y.polpermissive::text
  FROM pg_policy y JOIN pg_class c ON c.oid = y.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'ledger'"""


def _ts_from_db(value: datetime.datetime) -> datetime.datetime:
    return value.astimezone(_UTC)


def _meta_from_db(value: Any) -> str:
    # jsonb comes back parsed and reordered: re-serialize canonically, which reproduces the stored text.
    return canonjson.dumps(value)


DIALECT = Dialect(
    name="postgresql",
    prefix="ledger.",
    param="%s",
    meta_cast="::jsonb",
    principal_sql="s.meta -> 'caller' ->> 'principal'",
    skip_conflicts=False,
    id_to_db=as_is,
    ts_to_db=as_is,
    bool_to_db=bool,
    id_from_db=as_is,
    ts_from_db=_ts_from_db,
    bool_from_db=as_is,
    meta_from_db=_meta_from_db,
    hash_from_db=bytes,
    catalog_sql=CATALOG_SQL,
    tail_key_sql="tail_xid",
    tail_param_sql="?::text::xid8",
    tail_ready_sql="tail_xid < pg_snapshot_xmin(pg_current_snapshot())",
)


def connection_kwargs(settings: LedgerSettings) -> dict[str, Any]:
    """Session settings of every ledger connection; synchronous_commit is never lowered."""
    options = (
        f"-c statement_timeout={settings.statement_timeout_ms} -c lock_timeout={settings.lock_timeout_ms}"
        " -c idle_in_transaction_session_timeout=30000 -c TimeZone=UTC"
        # Implicit transactions (docs/ledger.md §10, the one-round-trip write) rely on this default; it overrides role settings.
        " -c default_transaction_isolation=read\\ committed"
    )
    return {
        "autocommit": True,
        "application_name": APPLICATION_NAME,
        "connect_timeout": settings.connect_timeout_s,
        "options": options,
    }


def _describe(exc: BaseException, redact: Callable[[str], str]) -> str:
    # Driver messages may quote the DSN or user names; they pass the redactor like any other text.
    return redact(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)


def _unavailable(problem: str) -> LedgerBackendError:
    return LedgerBackendError(f"PostgreSQL ledger unavailable: {problem}")


def _mapped(exc: BaseException, redact: Callable[[str], str]) -> LedgerError:
    if isinstance(exc, psycopg.IntegrityError):
        return LedgerIntegrityError(f"ledger constraint failed: {_describe(exc, redact)}")
    return _unavailable(_describe(exc, redact))


def open_pool(
    dsn: str,
    kwargs: dict[str, Any],
    *,
    max_size: int,
    timeout_s: float,
    name: str,
    unavailable: Callable[[str], Exception],
) -> psycopg_pool.ConnectionPool:
    """The ledger's or the store's pool of at most `max_size` connections, open once one connection is made;
    `unavailable(problem)` is raised when none can be made within `timeout_s`."""
    pool = psycopg_pool.ConnectionPool(
        dsn, kwargs=kwargs, min_size=1, max_size=max_size, open=False, timeout=timeout_s, name=name
    )
    try:
        pool.open(wait=True, timeout=timeout_s)
    except psycopg_pool.PoolTimeout as exc:
        pool.close()
        raise unavailable("the connection pool could not connect") from exc
    return pool


@contextmanager
def pooled(
    pool: psycopg_pool.ConnectionPool, unavailable: Callable[[str], Exception]
) -> Iterator[psycopg.Connection[Any]]:
    """A connection of `pool` for the block; `unavailable(problem)` when the pool hands none out in its timeout."""
    try:
        with pool.connection() as conn:
            yield conn
    except psycopg_pool.PoolTimeout as exc:
        raise unavailable("no pooled connection within the timeout") from exc


def applied_migrations(cur: psycopg.Cursor[Any], schema: str) -> list[migrations.Applied]:
    """The rows of `schema`.schema_migrations, the ledger's or the store's ([] before the first migration)."""
    cur.execute("SELECT to_regclass(%s) IS NOT NULL", (f"{schema}.schema_migrations",))
    if not cur.fetchone()[0]:
        return []
    cur.execute(
        sql.SQL("SELECT version, name, checksum FROM {} ORDER BY version").format(
            sql.Identifier(schema, "schema_migrations")
        )
    )
    return [migrations.Applied(*row) for row in cur.fetchall()]


def _applied(cur: psycopg.Cursor[Any]) -> list[migrations.Applied]:
    return applied_migrations(cur, "ledger")


def _check_schema(cur: psycopg.Cursor[Any]) -> int:
    applied = _applied(cur)
    current = max((a.version for a in applied), default=0)
    needed = migrations.target_version("postgres")
    if migrations.pending("postgres", applied) or current != needed:
        raise migrations.schema_mismatch(current, needed)
    return current


def _warn_on_excess_privileges(cur: psycopg.Cursor[Any]) -> None:
    cur.execute(
        # CASE: a table of a later schema than the database's is skipped before its privileges are asked about.
        "SELECT t FROM unnest(%s::text[]) AS t WHERE CASE WHEN to_regclass('ledger.' || t) IS NULL THEN false"
        " ELSE has_table_privilege('ledger.' || t, 'UPDATE') OR has_table_privilege('ledger.' || t, 'DELETE')"
        " OR has_table_privilege('ledger.' || t, 'TRUNCATE') END",
        (list(LEDGER_TABLES),),
    )
    tables = [row[0] for row in cur.fetchall()]
    if tables:
        log.warning(
            "the ledger role can UPDATE, DELETE or TRUNCATE %s; connect as a member of the app role instead",
            ", ".join(f"ledger.{t}" for t in tables),
        )


class _ConnectionLost(Exception):
    """The connection broke during a write: it may or may not have committed."""


class PostgresStore(SqlStore):
    """A PostgreSQL ledger in schema `ledger`; each write is one READ COMMITTED transaction under advisory locks."""

    guesses = True

    def __init__(
        self,
        pool: psycopg_pool.ConnectionPool,
        *,
        redactor: LedgerRedactor,
        clock: Clock,
        settings: LedgerSettings,
        redaction_version: int,
        readonly: bool = False,
        hasher: Hasher = chain.hash_values,
    ) -> None:
        super().__init__(
            dialect=DIALECT,
            redactor=redactor,
            clock=clock,
            settings=settings,
            redaction_version=redaction_version,
            hasher=hasher,
        )
        self._pool = pool
        self._readonly = readonly
        self._cursor_names = itertools.count(1)

    def _connection(self) -> contextlib.AbstractContextManager[psycopg.Connection[Any]]:
        return pooled(self._pool, _unavailable)

    def _write_once(self, conversation_ids: Sequence[str], work: WriteWork[T], *, implicit: bool = False) -> T:
        """One write transaction in pipeline mode: the locks, then `work`; committed when the pipeline syncs.

        `implicit` leaves out BEGIN and COMMIT: the statements up to the pipeline's one Sync then run as the
        protocol's implicit transaction (READ COMMITTED, the session default set at connect), all or nothing.
        Only for work that never raises after sending a write, since the exit's Sync commits what was sent.
        """
        with self._connection() as conn:
            try:
                # What `work` reads travels with the locks in one round trip, the rest with the commit in a
                # second one (or none). A failed statement makes the server skip what is queued up to the Sync.
                with conn.pipeline():
                    cur = conn.cursor()
                    if not implicit:
                        cur.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
                    for conversation_id in sorted(conversation_ids):
                        cur.execute(_LOCK, (conversation_id,))
                    result = work(conn)
                    if not implicit:
                        cur.execute("COMMIT")
            except BaseException as exc:
                if conn.broken and isinstance(exc, psycopg.OperationalError):
                    # With the commit pipelined behind the inserts, a lost connection leaves the outcome unknown.
                    raise _ConnectionLost(str(exc)) from exc
                if not conn.broken:
                    conn.rollback()
                raise
            return result

    def _give_up(self, exc: Exception, *, last: bool) -> None:
        """Raise the error a failed write attempt maps to, unless docs/ledger.md §10 allows another try."""
        redact = self._redactor.redact
        if isinstance(exc, _ConnectionLost):
            # The row-id rule of docs/ledger.md §8.2 recognizes a commit that had in fact succeeded.
            if last:
                raise LedgerBackendError(f"PostgreSQL ledger unavailable: {redact(str(exc))}") from exc
        elif isinstance(exc, psycopg.errors.UniqueViolation):
            # A chain_seq, call-key or conversation conflict means a writer bypassed the lock: one retry with
            # fresh probes chains after its row, returns the stored row, or reuses its conversation.
            if last or exc.diag.constraint_name not in _RETRIED_CONSTRAINTS:
                raise LedgerIntegrityError(f"chain conflict persisted: {_describe(exc, redact)}") from exc
        else:
            raise _mapped(exc, redact) from exc

    def _run_write(
        self,
        conversation_ids: Sequence[str],
        full_sync: bool,
        work: WriteWork[WriteOutcome],
        guess: Guess | None,
    ) -> WriteOutcome:
        if self._readonly:
            raise LedgerBackendError("the PostgreSQL ledger was opened read-only")
        tries = 2
        if guess is not None:
            try:
                # The lock and the conditional insert: one round trip, one implicit transaction.
                landed = self._write_once(
                    conversation_ids, functools.partial(send_guess, d=DIALECT, guess=guess), implicit=True
                )
                if landed.rowcount == 1:
                    return guess.outcome()
                # The head moved or the key is taken: nothing was written, and the full path keeps both its tries.
            except (_ConnectionLost, psycopg.Error) as exc:
                self._give_up(exc, last=False)
                tries = 1
        for attempt in range(tries):
            try:
                return self._write_once(conversation_ids, work)
            except (_ConnectionLost, psycopg.Error) as exc:
                self._give_up(exc, last=attempt == tries - 1)
        raise AssertionError("unreachable")

    @contextmanager
    def snapshot(self) -> Iterator[SqlSnapshot]:
        """A REPEATABLE READ READ ONLY transaction on a pooled connection."""
        redact = self._redactor.redact
        with self._connection() as conn:
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            except psycopg.Error as exc:
                raise _mapped(exc, redact) from exc

            def fetch(query: str, params: Sequence[Any]) -> list[Any]:
                try:
                    with conn.cursor() as cur:
                        cur.execute(query, params)
                        return cur.fetchall()
                except psycopg.Error as exc:
                    raise _mapped(exc, redact) from exc

            def stream(query: str, params: Sequence[Any]) -> Iterator[Any]:
                try:
                    with conn.cursor(name=f"ledger_rows_{next(self._cursor_names)}") as cur:
                        cur.itersize = 5000
                        cur.execute(query, params)
                        yield from cur
                except psycopg.Error as exc:
                    raise _mapped(exc, redact) from exc

            try:
                yield SqlSnapshot(DIALECT, fetch, stream)
            finally:
                if not conn.broken:
                    conn.rollback()

    def schema_version(self) -> int:
        """The highest applied migration."""
        with self._connection() as conn:
            try:
                applied = _applied(conn.cursor())
            except psycopg.Error as exc:
                raise _mapped(exc, self._redactor.redact) from exc
        return max((a.version for a in applied), default=0)

    def expected_catalog(self) -> frozenset[catalog.SchemaObject]:
        """The catalog the shipped migrations create, as recorded next to them."""
        return catalog.recorded_postgres(migrations.target_version("postgres"))

    def close(self) -> None:
        """Close the pool."""
        self._pool.close()


def open_postgres_store(
    dsn: str,
    *,
    redactor: LedgerRedactor,
    clock: Clock,
    settings: LedgerSettings,
    redaction_version: int,
    readonly: bool = False,
    hasher: Hasher = chain.hash_values,
) -> PostgresStore:
    """Connect, check the schema version (never migrating) and the role's privileges, and open the pool."""
    kwargs = connection_kwargs(settings)
    try:
        with psycopg.connect(dsn, **kwargs) as conn:
            cur = conn.cursor()
            _check_schema(cur)
            _warn_on_excess_privileges(cur)
    except psycopg.Error as exc:
        raise _mapped(exc, redactor.redact) from exc
    pool = open_pool(
        dsn,
        kwargs,
        max_size=settings.pool_max,
        timeout_s=settings.connect_timeout_s,
        name="triage-harness-ledger",
        unavailable=_unavailable,
    )
    return PostgresStore(
        pool,
        redactor=redactor,
        clock=clock,
        settings=settings,
        redaction_version=redaction_version,
        readonly=readonly,
        hasher=hasher,
    )


@dataclasses.dataclass(frozen=True)
class MigrationReport:
    """What `harness ledger migrate` or `harness store migrate` did (or, with dry_run, would do) on PostgreSQL."""

    from_version: int
    to_version: int
    applied: list[migrations.Migration]
    owner: str | None
    app: str | None
    created: list[str]
    dry_run: bool


@dataclasses.dataclass(frozen=True)
class PgSchema:
    """What the one migration runner needs to know of a PostgreSQL schema it migrates (the ledger's, the store's)."""

    name: str
    shipped: Callable[[], Sequence[migrations.Migration]]
    # pg_advisory_lock key that serializes the schema's migration runs.
    lock_key: int
    # Grants the app role its privileges on the schema's tables.
    grant_app: Callable[[psycopg.Cursor[Any], str], None]

    def bootstrap(self) -> str:
        """The schema_migrations table, created before the first migration so that it can record it."""
        return f"""CREATE TABLE IF NOT EXISTS {self.name}.schema_migrations (
  version integer PRIMARY KEY CHECK (version >= 1),
  name text NOT NULL,
  checksum text NOT NULL CHECK (length(checksum) = 64),
  applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  applied_by text NOT NULL DEFAULT session_user
)"""


def _check_role_name(name: str) -> str:
    if _ROLE_NAME.fullmatch(name) is None:
        raise ValueError(f"role name {name!r} must match {_ROLE_NAME.pattern}")
    return name


def _role_exists(cur: psycopg.Cursor[Any], name: str) -> bool:
    cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,))
    return cur.fetchone() is not None


def _grant_app(cur: psycopg.Cursor[Any], app: str) -> None:
    app_id = sql.Identifier(app)
    cur.execute("REVOKE ALL ON SCHEMA ledger FROM PUBLIC")
    cur.execute(sql.SQL("GRANT USAGE ON SCHEMA ledger TO {}").format(app_id))
    cur.execute(sql.SQL("GRANT SELECT, INSERT ON ledger.conversations, ledger.tool_invocations TO {}").format(app_id))
    # Tables of later schemas, absent where a migration stopped early or a test runs the upgrade path. open_calls is
    # read only: the track_open_call trigger keeps it with definer rights.
    for table, rights in (("result_sidecars", "SELECT, INSERT"), ("open_calls", "SELECT")):
        cur.execute("SELECT to_regclass(%s) IS NOT NULL", (f"ledger.{table}",))
        if cur.fetchone()[0]:
            cur.execute(
                sql.SQL("GRANT {} ON {} TO {}").format(sql.SQL(rights), sql.Identifier("ledger", table), app_id)
            )
    cur.execute(sql.SQL("GRANT SELECT ON ledger.tombstones, ledger.schema_migrations TO {}").format(app_id))


def migrate_postgres(
    dsn: str,
    *,
    settings: LedgerSettings,
    admin_dsn: str | None = None,
    owner_role: str = DEFAULT_OWNER_ROLE,
    app_role: str = DEFAULT_APP_ROLE,
    grant_app_to: Sequence[str] = (),
    dry_run: bool = False,
    redact: Callable[[str], str],
) -> MigrationReport:
    """Apply the missing migrations under pg_advisory_lock; with `admin_dsn`, also create roles and own as the owner.

    Driver errors become LedgerBackendError with their text passed through `redact`.
    """
    try:
        return migrate_schema(
            LEDGER_SCHEMA,
            dsn,
            connection_kwargs(settings),
            admin_dsn=admin_dsn,
            owner_role=owner_role,
            app_role=app_role,
            grant_app_to=grant_app_to,
            dry_run=dry_run,
        )
    except psycopg.Error as exc:
        raise LedgerBackendError(f"PostgreSQL ledger migration failed: {_describe(exc, redact)}") from exc


def migrate_schema(
    target: PgSchema,
    dsn: str,
    connect: dict[str, Any],
    *,
    admin_dsn: str | None,
    owner_role: str,
    app_role: str,
    grant_app_to: Sequence[str],
    dry_run: bool,
) -> MigrationReport:
    """The one `migrate` of the ledger's and the store's PostgreSQL schemas: under the schema's advisory lock, apply
    its missing migrations; with `admin_dsn`, also create the missing roles, own the schema as `owner_role` and grant
    `app_role`. `connect` is the connection keywords. A bad role name is a ValueError; driver errors propagate for
    the caller to word, and a refused plan is a LedgerBackendError."""
    owner, app = _check_role_name(owner_role), _check_role_name(app_role)
    logins = [_check_role_name(name) for name in grant_app_to]
    with psycopg.connect(admin_dsn or dsn, **connect) as conn:
        cur = conn.cursor()
        cur.execute("SELECT pg_advisory_lock(%s)", (target.lock_key,))
        try:
            return _migrate_locked(cur, target, owner, app, logins, admin=admin_dsn is not None, dry_run=dry_run)
        finally:
            if not conn.broken:
                cur.execute("RESET ROLE")
                cur.execute("SELECT pg_advisory_unlock(%s)", (target.lock_key,))


def _apply_as_owner(
    cur: psycopg.Cursor[Any],
    schema: str,
    owner: str,
    created: Sequence[str],
    todo: Sequence[migrations.Migration],
    *,
    admin: bool,
    bootstrap: str,
) -> None:
    """With `admin`, create the roles found missing and make `owner` own `schema`, then apply `todo` in order as the owner, each migration
    in its own transaction with its checksum row in `schema`.schema_migrations."""
    owner_id = sql.Identifier(owner)
    if admin:
        for name in created:
            cur.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(name)))
        cur.execute("SELECT pg_has_role(current_user, %s, 'MEMBER')", (owner,))
        if not cur.fetchone()[0]:
            cur.execute(sql.SQL("GRANT {} TO CURRENT_USER").format(owner_id))
        cur.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {} AUTHORIZATION {}").format(sql.Identifier(schema), owner_id))
        cur.execute(sql.SQL("SET ROLE {}").format(owner_id))
    else:
        cur.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    cur.execute(bootstrap)
    insert = sql.SQL("INSERT INTO {} (version, name, checksum) VALUES (%s, %s, %s)").format(
        sql.Identifier(schema, "schema_migrations")
    )
    for step in todo:
        cur.execute("BEGIN")
        try:
            cur.execute(step.sql)
            cur.execute(insert, (step.version, step.name, step.checksum))
            cur.execute("COMMIT")
        except BaseException:
            cur.connection.rollback()
            raise


def _migrate_locked(
    cur: psycopg.Cursor[Any], target: PgSchema, owner: str, app: str, logins: list[str], *, admin: bool, dry_run: bool
) -> MigrationReport:
    applied = applied_migrations(cur, target.name)
    from_version = max((a.version for a in applied), default=0)
    shipped = target.shipped()
    todo = migrations.still_to_apply(shipped, applied, target.name)
    to_version = len(shipped)
    if admin:
        created = [name for name in (owner, app) if not _role_exists(cur, name)]
        granted: str | None = app
    else:
        cur.execute("SELECT current_user")
        owner = cur.fetchone()[0]
        created = []
        granted = app if _role_exists(cur, app) else None
    for login in logins:
        if not _role_exists(cur, login):
            raise LedgerBackendError(f"--grant-app-to: role {login} does not exist")
    if dry_run:
        return MigrationReport(from_version, to_version, todo, owner, granted, created, True)
    _apply_as_owner(cur, target.name, owner, created, todo, admin=admin, bootstrap=target.bootstrap())
    if granted is not None:
        target.grant_app(cur, app)
    cur.execute("RESET ROLE")
    for login in logins:
        cur.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(app), sql.Identifier(login)))
    return MigrationReport(from_version, to_version, todo, owner, granted, created, False)


LEDGER_SCHEMA = PgSchema(
    name="ledger", shipped=lambda: migrations.shipped("postgres"), lock_key=MIGRATION_LOCK_KEY, grant_app=_grant_app
)
