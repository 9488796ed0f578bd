"""Fixtures of the ledger view's tests: ledgers on SQLite and PostgreSQL, the view served by uvicorn on loopback in
this process (so a test can read the CSP reports it received), and Debian's Chromium driven through Playwright."""

from __future__ import annotations

import dataclasses
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from e2e.procs import free_port
from ledger.ledger_support import FakeClock, PgAdmin, SqliteAdmin
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)

from harness.ledger.commands import migrate
from harness.ledger.settings import LedgerSettings
from harness.ledger.store import LedgerStore, open_store
from harness.serve.origins import HostPolicy
from harness.text.redact import KnownSecrets, build_redactor
from harness.ui.app import LedgerView, standalone_app

CHROMIUM = os.environ.get("HARNESS_TEST_CHROMIUM", "/usr/bin/chromium")
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)]


@dataclasses.dataclass
class Ledger:
    """A writable store for the test to fill, the workspace of its sidecars, and raw access to tamper with it."""

    store: LedgerStore
    workspace: Path
    admin: Any
    target: str


@pytest.fixture(params=BACKENDS)
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledger]:
    redactor = build_redactor(KnownSecrets())
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    if request.param == "sqlite":
        target = str(workspace / "ledger.sqlite3")
        store = open_store(target, redactor=redactor, clock=FakeClock(), settings=LedgerSettings())
        yield Ledger(store, workspace, SqliteAdmin(Path(target)), target)
        store.close()
        return
    server: PgServer = request.getfixturevalue("pg_server")
    owner, app = server.reserve_role_name("harness_ui_owner"), server.reserve_role_name("harness_ui_app")
    login = server.create_role("harness_ui_login", login=True)
    dbname = server.create_database("harness_ui")
    target = server.dsn_for(dbname, login)
    migrate(target, clock=FakeClock(), settings=LedgerSettings(), redactor=redactor, admin_dsn=server.dsn_for(dbname),
            owner_role=owner, app_role=app, grant_app_to=[login])
    store = open_store(target, redactor=redactor, clock=FakeClock(), settings=LedgerSettings())
    yield Ledger(store, workspace, PgAdmin(server.dsn_for(dbname), owner), target)
    store.close()
    server.drop_database(dbname)


@dataclasses.dataclass
class Served:
    base: str
    view: LedgerView


@pytest.fixture
def served(ledger: Ledger) -> Iterator[Served]:
    """The view alone (as `harness ui` serves it) over the test's ledger, on a free loopback port."""
    view = LedgerView(ledger.store, ledger.workspace)
    port = free_port()
    config = uvicorn.Config(standalone_app(view, HostPolicy(True)), host="127.0.0.1", port=port,
                            log_level="warning", log_config=None)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the view did not start")
        time.sleep(0.02)
    yield Served(f"http://127.0.0.1:{port}", view)
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """Debian's Chromium, headless; missing, it fails under HARNESS_REQUIRE_BROWSER=1 (make test and CI install it)."""
    if shutil.which(CHROMIUM) is None:
        if os.environ.get("HARNESS_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium (make test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield browser
        browser.close()
