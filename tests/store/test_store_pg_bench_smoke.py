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
