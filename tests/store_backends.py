"""The store tests over both backends (issue 12): the git store and the PostgreSQL store.

A test module runs once per backend with `pytestmark = pytest.mark.usefixtures("store_backend")` (or by taking the
fixture). Under "postgres" every workspace made by `bind` names a fresh, migrated database in its harness.toml
(`[store] url`, a DSN without a password), so in-process CLI calls, subprocesses and servers all use it; open a
workspace's store with `workspace_store`, whichever backend it has. PostgreSQL comes from tests/pgsupport.py and
is required under HARNESS_REQUIRE_PG=1.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pgsupport import PgServer, session_server

from harness.config import Overrides, load_settings
from harness.store.backend import EventStore, open_event_store, pg_connect_kwargs
from harness.store.pg import schema
from harness.store.replay import ReplayView
from harness.store.streams import STREAMS

BACKENDS = ("git", "postgres")
# Database names of this suite's stores (docs: one prefix per suite, dropped when the run ends).
DB_PREFIX = "harness_pgstore_t"


class PgStores:
    """Empty migrated PostgreSQL stores. Creating and dropping a database costs a checkpoint each, so databases
    are reused: one released (its workspace's test or module ended) is emptied and handed out again."""

    def __init__(self, server: PgServer) -> None:
        self.server = server
        self._free: list[str] = []
        self._bound: list[str] = []
        self._all: list[str] = []

    def fresh_dsn(self) -> str:
        """The DSN of an empty, migrated store."""
        if self._free:
            name = self._free.pop()
            _empty(self.server.dsn_for(name))
        else:
            name = self.server.create_database(DB_PREFIX)
            settings = load_settings(Overrides(workspace=Path("/nonexistent")), environ={})
            schema.migrate(self.server.dsn_for(name), connect=pg_connect_kwargs(settings), redact=str)
            self._all.append(name)
        self._bound.append(name)
        return self.server.dsn_for(name)

    def mark(self) -> int:
        """A point in the binding history (see `release_since`)."""
        return len(self._bound)

    def release_since(self, mark: int) -> None:
        """Hand the databases bound after `mark` back for reuse."""
        self._free += self._bound[mark:]
        del self._bound[mark:]

    def drop_all(self) -> None:
        """Drop every database made."""
        for name in self._all:
            self.server.drop_database(name)
        self._all.clear()
        self._free.clear()
        self._bound.clear()


_TABLES = schema.RECORD_TABLES


def _empty(dsn: str) -> None:
    """Empty a store in one transaction: its append-only triggers are switched off around the TRUNCATE only."""
    with psycopg.connect(dsn) as conn:
        for name in _TABLES:
            conn.execute(f"ALTER TABLE store.{name} DISABLE TRIGGER {name}_refuse_truncate")
        conn.execute(f"TRUNCATE {', '.join(f'store.{name}' for name in _TABLES)}")
        for name in _TABLES:
            conn.execute(f"ALTER TABLE store.{name} ENABLE ALWAYS TRIGGER {name}_refuse_truncate")


class StoreBackend:
    """One backend under test: `bind` points a workspace at a fresh store of this backend."""

    def __init__(self, name: str, pg: PgStores | None) -> None:
        self.name = name
        self._pg = pg

    @property
    def is_pg(self) -> bool:
        return self.name == "postgres"

    def fresh_dsn(self) -> str:
        """A new empty PostgreSQL store (postgres backend only)."""
        assert self._pg is not None
        return self._pg.fresh_dsn()

    def bind(self, workspace: Path) -> None:
        """Make `workspace` (its harness.toml created if missing) use a fresh store of this backend."""
        if not self.is_pg:
            return
        workspace.mkdir(parents=True, exist_ok=True)
        config = workspace / "harness.toml"
        text = config.read_text(encoding="utf-8") if config.exists() else ""
        config.write_text(f'{text}\n[store]\nurl = "{self.fresh_dsn()}"\n', encoding="utf-8")


_GIT = StoreBackend("git", None)
_current: list[StoreBackend] = [_GIT]
# Whether the running test asked for `store_backend`. The session-scoped fixture outlives the tests that asked for
# it (pytest tears a parametrized session fixture down only when another parameter is needed), so without this a
# test that never asked would make its workspaces on whichever backend ran last.
_running: list[bool] = [False]


def current() -> StoreBackend:
    """The backend of the running test: git unless the test uses `store_backend`."""
    return _current[-1] if _running[0] else _GIT


def enter_test(item: pytest.Item) -> None:
    """Called before each test's fixtures are set up (tests/conftest.py)."""
    _running[0] = "store_backend" in getattr(item, "fixturenames", ())


@pytest.fixture(scope="session", params=BACKENDS)
def store_backend(request: pytest.FixtureRequest) -> Iterator[StoreBackend]:
    """Each test using it runs once per store backend; helpers that make workspaces follow `current()`."""
    pg = PgStores(session_server()) if request.param == "postgres" else None
    backend = StoreBackend(request.param, pg)
    _current.append(backend)
    try:
        yield backend
    finally:
        _current.remove(backend)
        if pg is not None:
            pg.drop_all()


@contextmanager
def released_after() -> Iterator[None]:
    """PostgreSQL stores bound inside the block are reused once it ends (the autouse fixtures of tests/conftest.py
    wrap every module and every test)."""
    pg = current()._pg
    mark = pg.mark() if pg is not None else 0
    try:
        yield
    finally:
        if pg is not None and current()._pg is pg:
            pg.release_since(mark)


def workspace_store(workspace: Path, **git_options: Any) -> EventStore:
    """The store `workspace` is configured with (its `[store] url`, else its git store); `git_options` are Store's
    segment limits, ignored by PostgreSQL."""
    settings = load_settings(Overrides(workspace=workspace), environ={})
    if not settings.store_url:
        from harness.store import Store

        return Store(settings.store_path, index_path=settings.index_path, **git_options)
    return open_event_store(settings, str)


def replay_of(store: EventStore) -> ReplayView:
    """The replay oracle over a store's records at its head: the git store's full replay, or for PostgreSQL a
    ReplayView of every stream read back in stream order (so the SQL filters meet the Python evaluator)."""
    from harness.store import Store

    if isinstance(store, Store):
        return store.replay()
    with store.snapshot() as view:
        return ReplayView(view.commit, {name: list(view.records(name)) for name in STREAMS})


def git_only(reason: str) -> None:
    """Skip the PostgreSQL run of a test about the git store's own layout (`reason` says what it checks)."""
    if current().is_pg:
        pytest.skip(f"git store only: {reason}")


def stored_records(workspace: Path, stream: str = "events") -> list[dict[str, Any]]:
    """Every record of a workspace's stream in stream order, read back in full (the replay oracle's reading)."""
    store = workspace_store(workspace)
    try:
        return list(replay_of(store).records(stream))
    finally:
        store.close()


def stored_head(workspace: Path) -> str:
    """The workspace store's newest commit ("" when empty)."""
    store = workspace_store(workspace)
    try:
        return store.head()
    finally:
        store.close()
