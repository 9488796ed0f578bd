"""bench/serve_bench.py runs end to end against a real server and a stalled upstream, printing its JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "serve_bench.py"


def test_quick_bench_prints_one_json_report() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["bench"] == "serve"
    names = [r["name"] for r in report["results"]]
    assert names == ["search_events_p99_beside_8_stalled_github_actor", "server_peak_rss_8_clients"]
    for result in report["results"]:
        assert set(result) == {"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}
        assert isinstance(result["meets_target"], bool) and result["value"] > 0 and result["baseline"] > 0
