"""bench/investigate_bench.py runs end to end on a tiny store and prints its one JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.procs import clean_env

BENCH = Path(__file__).resolve().parents[2] / "bench" / "investigate_bench.py"


@pytest.mark.slow
def test_quick_bench_prints_one_json_report() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["bench"] == "investigate"
    assert set(report["machine"]) == {"cpus", "platform", "processor", "python"}
    assert [r["name"] for r in report["results"]] == [
        "search_events_actor_type_median",
        "search_events_speedup_vs_full_replay",
        "cli_help_cold_start_median",
        "mcp_stdio_check_baseline_p50",
        "mcp_stdio_search_events_actor_type_p50",
        "mcp_stdio_sdk_floor_check_baseline_p50",
        "mcp_stdio_sdk_floor_search_events_actor_type_p50",
        "search_events_2000_events_in_process",
        "search_events_window_day",
        "search_events_window_year",
    ]
    for row in report["results"]:
        assert set(row) - {"matched", "count_ms"} == {"name", "value", "unit", "target", "meets_target", "baseline",
                                                     "ratio"}
        paged = row["name"] in {"search_events_2000_events_in_process", "search_events_window_day",
                                "search_events_window_year"}
        assert ("count_ms" in row) == paged and row.get("count_ms", 1) > 0
        assert isinstance(row["meets_target"], bool)
        assert row["value"] > 0 and row["baseline"] > 0 and row["ratio"] > 0
