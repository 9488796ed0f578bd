"""bench/store_bench.py runs end to end on a tiny store and prints its JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "store_bench.py"


def test_quick_bench_prints_one_json_report() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["bench"] == "store" and set(report["machine"]) == {"cpus", "git", "platform", "python"}
    names = [r["name"] for r in report["results"]]
    assert names == ["ingest_wall", "ingest_cpu", "ingest_peak_rss", "order_index_build_floor", "query_actor_type_p50", "query_speedup_vs_full_replay",
                     "query_storage_read_kib_per_call",
                     "catch_up_after_300", "catch_up_written", "append_one_at_3000"]
    for row in report["results"]:
        assert set(row) == {"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}
        assert isinstance(row["meets_target"], bool) and row["value"] >= 0
    by_name = {r["name"]: r for r in report["results"]}
    # The catch-up's bytes (the kernel's count, 0 on a filesystem without a block device) sit beside the index's size.
    assert by_name["catch_up_written"]["baseline"] > 0
    assert by_name["catch_up_after_300"]["baseline"] > 0


def test_scale_rows_print_the_warm_and_first_touch_passes_and_the_bytes_read() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--quick", "--scale-events", "6000"], capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    rows = {r["name"]: r for r in json.loads(done.stdout)["results"]}
    small = rows["query_actor_type_p50"]["value"]
    warm, first = rows["query_actor_type_p50_scale"], rows["query_actor_type_p50_scale_first_touch"]
    assert warm["baseline"] == round(small, 4) and warm["value"] > 0
    assert first["baseline"] == warm["value"] and first["value"] > 0
    assert rows["query_storage_read_kib_per_call_scale"]["unit"] == "KiB"
    assert {"ingest_wall_scale", "ingest_cpu_scale", "ingest_peak_rss_scale"} <= set(rows)
