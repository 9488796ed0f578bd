"""bench/adapters_bench.py runs end to end on a small file and prints its JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "adapters_bench.py"


def test_quick_bench_prints_one_json_report() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["bench"] == "adapters"
    assert [r["name"] for r in report["results"]] == ["cloudtrail_ingest_peak_rss", "cloudtrail_ingest_wall"]
    for result in report["results"]:
        assert result["events"] == 2000 and result["value"] > 0 and result["baseline"] > 0
