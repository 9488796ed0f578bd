"""bench/cold_start_bench.py runs end to end on a tiny store and prints its one JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.procs import clean_env

BENCH = Path(__file__).resolve().parents[2] / "bench" / "cold_start_bench.py"


@pytest.mark.slow
def test_quick_cold_start_bench_prints_one_json_report() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300, env=clean_env(), check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["bench"] == "cold_start"
    assert [r["name"] for r in report["results"]] == [
        "cli_version_cold_median",
        "python_import_harness_cold_median",
        "python_import_redactor_cold_median",
        "python_libraries_floor_cold_median",
        "cli_search_events_cold_median",
        "cli_check_baseline_cold_median",
    ]
    for row in report["results"]:
        assert {"name", "value", "unit", "target", "meets_target", "baseline", "ratio"} <= set(row)
        assert row["value"] > 0 and row["baseline"] > 0 and row["ratio"] > 0
    reads = report["results"][4:]
    assert all(isinstance(row["meets_target"], bool) and row["over_version"] > 0 for row in reads)
    assert all(row["over_libraries_floor"] > 0 for row in reads)
