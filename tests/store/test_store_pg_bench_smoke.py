"""bench/store_pg_bench.py runs end to end on a tiny store against the test server and prints its JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)

BENCH = Path(__file__).resolve().parents[2] / "bench" / "store_pg_bench.py"


def test_quick_bench_prints_one_json_report(pg_server: PgServer) -> None:  # noqa: F811
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--dsn", pg_server.dsn_for()],
        capture_output=True, text=True, timeout=300, cwd=BENCH.parent,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["bench"] == "store_pg"
    names = [r["name"] for r in report["results"]]
    assert names == ["ingest_wall_git", "ingest_wall_pg", "search_events_p50_git", "search_events_p50_pg"]
    assert all(r["value"] > 0 for r in report["results"])


def test_existing_store_mode_names_the_missing_option() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--pg-1m", "postgresql://postgres@127.0.0.1:1/none"],
        capture_output=True, text=True, timeout=60, cwd=BENCH.parent,
    )
    assert done.returncode == 2
    assert "--git-1m: needs at least one of --pg-1m / --pg-10m" in done.stderr
    assert not done.stdout


def test_the_bulk_loader_rebuilds_every_index_and_its_store_reads_back(pg_server: PgServer) -> None:  # noqa: F811
    import psycopg

    from harness.store.pg import schema
    from tests.store.test_pg_store import CONNECT

    dsn = pg_server.dsn_for(pg_server.create_database("harness_pgstore_load"))
    schema.migrate(dsn, connect=CONNECT, redact=str)
    with psycopg.connect(dsn) as conn:
        migrated = conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'events' ORDER BY 1").fetchall()
    done = subprocess.run(
        [sys.executable, str(BENCH.parent / "store_pg_load.py"), "--dsn", dsn, "--events", "3000", "--check"],
        capture_output=True, text=True, timeout=300, cwd=BENCH.parent,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["events"], report["checked"], report["problems"]) == (3000, True, [])
    with psycopg.connect(dsn) as conn:
        # The indexes dropped for the COPY are back, exactly as the migration defines them.
        assert conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'events' ORDER BY 1").fetchall() == migrated
    again = subprocess.run(
        [sys.executable, str(BENCH.parent / "store_pg_load.py"), "--dsn", dsn, "--events", "10"],
        capture_output=True, text=True, timeout=300, cwd=BENCH.parent,
    )
    assert again.returncode == 1 and "the store is not empty" in again.stderr
