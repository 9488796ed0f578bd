"""The list-page bench runs end to end with --quick and prints its JSON report (bench/ui_list_bench.py)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "ui_list_bench.py"


def test_ui_list_bench_quick() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # 2,000 conversations of 10 rows, one in 1,000 without its last end.
    assert report["bench"] == "ui_list" and (report["rows"], report["calls_in_flight"]) == (19_998, 2)
    names = [r["name"] for r in report["results"]]
    assert names == ["list_page_first", "list_page_middle_keyset", "list_page_filter_status_error",
                     "list_page_filter_tool_principal", "list_page_filter_text", "list_page_filter_in_flight"]
    for result in report["results"]:
        assert math.isfinite(result["value"]) and result["baseline"] > 0 and result["ratio"] > 0
