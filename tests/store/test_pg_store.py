"""The PostgreSQL store's own guarantees (issue 12): migrate with owner and app roles, append-only tables, the
schema check that stops `serve`, DSN handling, all-or-nothing batches and concurrent writers that lose and
duplicate nothing. The answers themselves are checked on both backends by the parametrized suites."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import psycopg
import pytest
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)
from runners import run_cli

from harness.config import ConfigError, Overrides, load_settings
from harness.errors import InvalidInput, UpstreamUnavailable
from harness.store.backend import pg_connect_kwargs
from harness.store.pg import schema
from harness.store.pg.store import PgStore, open_pg_store
from harness.store.query import RecordFilter
from tests.e2e.procs import clean_env, harness_argv

SETTINGS = load_settings(Overrides(workspace=Path("/nonexistent")), environ={})
CONNECT = pg_connect_kwargs(SETTINGS)


def _event(record_id: str, actor: str = "baron") -> dict[str, str]:
    return {"id": record_id, "actor": actor, "timestamp": "2026-04-10T09:00:00Z"}


@pytest.fixture
def dsn(pg_server: PgServer) -> str:  # noqa: F811
    """An empty database, not migrated."""
    return pg_server.dsn_for(pg_server.create_database("harness_pgstore_u"))


def _open(dsn: str) -> PgStore:
    return open_pg_store(dsn, connect=CONNECT, pool_max=2, redact=str)


def test_an_unmigrated_store_names_the_remedy_and_serve_exits(dsn: str, tmp_path: Path) -> None:
    with pytest.raises(UpstreamUnavailable, match="store schema 0, harness needs 1: run harness store migrate"):
        _open(dsn)
    assert run_cli(["--workspace", str(tmp_path), "init", "--empty"]).exit_code == 0
    proc = subprocess.run(
        harness_argv("--workspace", str(tmp_path), "serve"),
        env=clean_env(HARNESS_STORE_URL=dsn), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        check=False,
    )
    assert proc.returncode == 3
    assert json.loads(proc.stdout)["error"]["message"].endswith("run harness store migrate")
    migrated = run_cli(["--workspace", str(tmp_path), "--store", dsn, "store", "migrate"])
    assert (migrated.exit_code, json.loads(migrated.stdout)["applied"]) == (0, ["0001_initial"])
    again = run_cli(["--workspace", str(tmp_path), "--store", dsn, "store", "migrate"])
    assert json.loads(again.stdout)["applied"] == []
    _open(dsn).close()


def test_store_migrate_without_a_postgres_store_is_invalid_input(tmp_path: Path) -> None:
    result = run_cli(["--workspace", str(tmp_path), "store", "migrate"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["message"].startswith("--store: store migrate needs a PostgreSQL store")


def test_a_dsn_with_a_password_is_refused_in_harness_toml_but_taken_from_the_environment(tmp_path: Path) -> None:
    secret = "postgresql://app:s3cret@db.example/store"
    (tmp_path / "harness.toml").write_text(f'[store]\nurl = "{secret}"\n')
    with pytest.raises(ConfigError, match=r"\[store\] url") as refused:
        load_settings(Overrides(workspace=tmp_path), environ={})
    assert "s3cret" not in refused.value.message
    (tmp_path / "harness.toml").write_text("")
    assert load_settings(Overrides(workspace=tmp_path), environ={"HARNESS_STORE_URL": secret}).store_url == secret
    flag = load_settings(Overrides(workspace=tmp_path, store_url=secret), environ={})
    assert flag.store_url == secret and secret not in repr(flag)
    with pytest.raises(ConfigError, match="HARNESS_STORE_URL"):
        load_settings(Overrides(workspace=tmp_path), environ={"HARNESS_STORE_URL": "host=db dbname=x"})


def test_roles_app_may_insert_and_select_only_and_records_are_append_only(
    pg_server: PgServer, tmp_path: Path  # noqa: F811
) -> None:
    database = pg_server.create_database("harness_pgstore_r")
    owner = pg_server.reserve_role_name("harness_pgstore_owner")
    app = pg_server.reserve_role_name("harness_pgstore_app")
    login = pg_server.create_role("harness_pgstore_login", login=True)
    admin = pg_server.dsn_for(database)
    app_dsn = pg_server.dsn_for(database, user=login)
    report = schema.migrate(
        app_dsn, connect=CONNECT, admin_dsn=admin, owner_role=owner, app_role=app, grant_app_to=[login], redact=str
    )
    assert (report.owner, report.app, sorted(report.created)) == (owner, app, sorted([owner, app]))

    store = _open(app_dsn)
    try:
        assert store.append_batch("events", [_event("e1"), _event("e2")]).added == 2
        with store.snapshot() as view:
            assert view.select("events", RecordFilter(actor="BARON"), 10).total == 2
        # The app role may not VACUUM the owner's tables: PostgreSQL skips each with a warning, the caller goes on.
        skipped = store.refresh_statistics()
        assert len(skipped) == 5 and all("skipping" in warning for warning in skipped), skipped
    finally:
        store.close()
    with psycopg.connect(app_dsn, autocommit=True) as conn:
        for statement in ("UPDATE store.events SET actor = ''", "DELETE FROM store.events", "TRUNCATE store.events"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
    # Even the schema's owner (here a superuser) cannot change or remove a record: the triggers refuse.
    with psycopg.connect(admin, autocommit=True) as conn:
        for statement in (
            "UPDATE store.events SET actor = ''",
            "DELETE FROM store.batches",
            "TRUNCATE store.findings",
            "DELETE FROM store.schema_migrations",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                conn.execute(statement)
        assert conn.execute("SELECT count(*) FROM store.events").fetchone()[0] == 2


@pytest.fixture
def migrated(dsn: str) -> str:
    schema.migrate(dsn, connect=CONNECT, redact=str)
    return dsn


def test_a_refused_batch_writes_nothing_and_the_newest_baseline_wins(migrated: str) -> None:
    store = _open(migrated)
    try:
        first = store.append_batch("events", [_event("e1"), _event("E2")])
        head = store.head()
        assert (first.added, head) == (2, first.commit)
        with pytest.raises(InvalidInput, match='id "e2" already stored with different content'):
            store.append_batch("events", [_event("e3"), _event("e2", actor="mallory")])
        assert store.head() == head
        with store.snapshot() as view:
            assert [r["id"] for r in view.records("events")] == ["e1", "E2"]
        assert store.append_batch("events", [_event("e1"), _event("e3")]).skipped_duplicates == 1
        older, newer = {"known_actors": ["a"]}, {"known_actors": ["b"]}
        assert store.append_batch("baseline", [older]).added == 1
        assert store.append_batch("baseline", [older]).added == 0
        assert store.append_batch("baseline", [newer]).added == 1
        with store.snapshot() as view:
            baseline = view.latest_baseline()
            assert baseline is not None and baseline.record["known_actors"] == ["b"]
            assert store.last_change(view.commit, "events") == "2"
    finally:
        store.close()


def test_concurrent_writers_lose_and_duplicate_nothing_and_readers_see_prefixes(migrated: str) -> None:
    writers, batches = 4, 15
    stores = [_open(migrated) for _ in range(writers + 1)]
    errors: list[BaseException] = []
    gaps: list[tuple[int, int]] = []
    done = threading.Event()

    def write(w: int) -> None:
        try:
            for b in range(batches):
                # Each batch repeats one record of another writer's: whoever commits it first stores it.
                shared = _event(f"shared-{b}")
                stores[w].append_batch("events", [_event(f"w{w}-b{b}-{i}") for i in range(3)] + [shared])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def read() -> None:
        # Every committed state a reader can see holds positions 1..k with none missing.
        with psycopg.connect(migrated, autocommit=True) as conn:
            while not done.is_set():
                count, top = conn.execute("SELECT count(*), coalesce(max(seq), 0) FROM store.events").fetchone()
                if count != top:
                    gaps.append((count, top))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    reader = threading.Thread(target=read)
    reader.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    reader.join()
    try:
        assert errors == [] and gaps == []
        with psycopg.connect(migrated) as conn:
            seqs = [row[0] for row in conn.execute("SELECT seq FROM store.events ORDER BY seq")]
            batch_numbers = [row[0] for row in conn.execute("SELECT n FROM store.batches ORDER BY n")]
            ids = [row[0] for row in conn.execute("SELECT id FROM store.events")]
        expected = writers * batches * 3 + batches
        assert seqs == list(range(1, expected + 1))
        assert len(ids) == len(set(ids)) == expected
        assert batch_numbers == list(range(1, len(batch_numbers) + 1))
        assert stores[0].head() == str(len(batch_numbers))
    finally:
        for store in stores:
            store.close()


def test_store_copy_resumes_verifies_and_copies_back(migrated: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.store import Store, copy

    monkeypatch.setattr(copy, "CHUNK", 3)
    source = Store(tmp_path / "src")
    source.append_batch("events", [_event(f"e{i}", actor=f"a{i % 3}") for i in range(8)])
    source.append_batch("findings", [{"id": "f1", "evidence": {"event_id": "e1"}}])
    source.append_batch("baseline", [{"known_actors": ["a0"]}])
    destination = _open(migrated)
    try:
        # A copy stopped after its first commit: the first three events are there.
        destination.append_batch("events", [_event(f"e{i}", actor=f"a{i % 3}") for i in range(3)])
        report = copy.copy_store(source, destination)
        assert report["verified"] and report["mismatched"] == [] and report["statistics_warnings"] == []
        with psycopg.connect(migrated) as conn:
            # The copy ended by VACUUM (ANALYZE): the planner's statistics and the visibility map are current.
            refreshed = conn.execute(
                "SELECT count(*) FROM pg_stat_user_tables WHERE schemaname = 'store'"
                " AND relname <> 'schema_migrations' AND last_vacuum IS NOT NULL AND last_analyze IS NOT NULL"
            ).fetchone()[0]
        assert refreshed == 5
        assert report["streams"]["events"] == {
            "copied": 5, "present_before": 3, "records": 8, "sha256": copy.digest(source, "events")[1]
        }
        assert destination.head() == "5"  # 1 + two chunks of events + findings + baseline
        back = Store(tmp_path / "back")
        assert copy.copy_store(destination, back)["verified"]
        for stream in ("events", "findings", "baseline"):
            assert copy.digest(back, stream) == copy.digest(source, stream)
        # A destination holding other records is reported, not repaired.
        source.append_batch("events", [_event("late")])
        back.append_batch("events", [_event("other")])
        stale = copy.copy_store(source, back)
        assert (stale["verified"], stale["mismatched"]) == (False, ["events"])
    finally:
        destination.close()


def test_store_copy_command_exits_1_on_a_mismatch(migrated: str, tmp_path: Path) -> None:
    from harness.store import Store

    Store(tmp_path / "a").append_batch("events", [_event("e1")])
    Store(tmp_path / "b").append_batch("events", [_event("e2")])
    ok = run_cli(["--workspace", str(tmp_path), "store", "copy", "--from", str(tmp_path / "a"), "--to", migrated])
    assert (ok.exit_code, json.loads(ok.stdout)["verified"]) == (0, True)
    bad = run_cli(["--workspace", str(tmp_path), "store", "copy", "--from", str(tmp_path / "b"), "--to", migrated])
    assert (bad.exit_code, json.loads(bad.stdout)["mismatched"]) == (1, ["events"])
