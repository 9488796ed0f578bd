"""The ledger benches run end to end with --quick and print one JSON report each (docs/ledger.md §15)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pgsupport import PgServer

BENCH = Path(__file__).resolve().parents[2] / "bench"
ROW_KEYS = {"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}


def run(script: str, *args: str, dsn: str | None = None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_TEST_PG_DSN"}
    if dsn is not None:
        env["HARNESS_TEST_PG_DSN"] = dsn
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--quick", *args], capture_output=True, text=True, timeout=240, env=env
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report["machine"]) >= {"cpus", "platform", "python"}
    for row in report["results"]:
        assert set(row) >= ROW_KEYS
        assert math.isfinite(row["value"]) and row["baseline"] > 0 and row["ratio"] > 0
    return report


def test_sqlite_bench() -> None:
    report = run("ledger_sqlite_bench.py")
    assert report["bench"] == "ledger_sqlite"
    assert [r["name"] for r in report["results"]] == [
        "sqlite.single_row_inserts",
        "sqlite.insert_many_500",
        "sqlite.concurrent_16_callers",
        "sqlite.chain_overhead_single_row",
    ]
    assert all(isinstance(r["meets_target"], bool) for r in report["results"])


def test_pg_bench_without_a_dsn_is_skipped_with_a_reason() -> None:
    report = run("ledger_pg_bench.py")
    assert report["results"] == [] and "no PostgreSQL DSN" in report["skipped"]


def test_list_bench() -> None:
    report = run("ledger_list_bench.py", "--rows", "2000")
    assert report["bench"] == "ledger_list"
    names = [r["name"] for r in report["results"]]
    assert names[0] == "sqlite.ledger_list.all" and "sqlite.ledger_list.in_flight" in names
    assert all(r["rows"] == 2000 for r in report["results"])


@pytest.mark.pg
def test_pg_bench(pg_server: PgServer) -> None:
    report = run("ledger_pg_bench.py", "--rows", "40", dsn=pg_server.dsn)
    assert [r["name"] for r in report["results"]] == [
        "pg.start_insert_p50",
        "pg.start_insert_p99",
        "pg.one_connection_inserts",
        "pg.insert_many_pipeline",
        "pg.concurrent_16_callers",
        "pg.chain_overhead_single_row",
    ]
    with pg_server.admin() as conn:
        leftovers = conn.execute("SELECT count(*) FROM pg_database WHERE datname LIKE 'harness_bench_%'").fetchone()
    assert leftovers == (0,)


def test_verify_bench_without_a_dsn() -> None:
    report = run("verify_bench.py", "--rows", "600")
    assert [r["name"] for r in report["results"]] == ["sqlite.verify"] and report["rows"] == 600
    assert "no PostgreSQL DSN" in report["skipped"]


@pytest.mark.pg
def test_verify_bench_with_postgres(pg_server: PgServer) -> None:
    report = run("verify_bench.py", "--rows", "600", dsn=pg_server.dsn)
    assert [r["name"] for r in report["results"]] == ["sqlite.verify", "pg.verify"]
    assert report["results"][1]["target"] == "recorded" and report["results"][1]["meets_target"] is None
