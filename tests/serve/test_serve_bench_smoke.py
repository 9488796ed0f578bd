"""bench/serve_bench.py runs end to end against a real server and a stalled upstream, printing its JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "serve_bench.py"


def test_quick_bench_prints_one_json_report() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["bench"] == "serve"
    names = [r["name"] for r in report["results"]]
    assert names == [
        "search_events_p99_beside_8_stalled_github_actor", "server_peak_rss_8_clients",
        "check_baseline_calls_per_s_4_clients", "check_baseline_calls_per_s_8_clients",
        "cpu_per_check_baseline_call_4_clients",
    ]
    for result in report["results"]:
        assert {"name", "value", "unit", "target", "meets_target", "baseline", "ratio"} <= set(result)
        assert isinstance(result["meets_target"], bool) and result["value"] > 0 and result["baseline"] > 0
    # The 64-client row (here 8) carries every rate it was compared with, the best of them its baseline.
    rates = report["results"][-2]["rates"]
    assert set(rates) == {"check_baseline_1", "check_baseline_4", "check_baseline_8", "ping_4"}
    best = max(v for k, v in rates.items() if k.startswith("check_"))
    assert report["results"][-2]["baseline"] == pytest.approx(best, abs=0.1)
