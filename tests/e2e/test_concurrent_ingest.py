"""Several `harness ingest` processes at once over overlapping files lose and duplicate nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from procs import clean_env, harness_argv


def _events(start: int, stop: int) -> str:
    return "".join(
        json.dumps({"id": f"e-{n:05d}", "timestamp": "2026-04-10T09:00:00Z", "actor": f"a{n % 7}", "type": "t"}) + "\n"
        for n in range(start, stop)
    )


def test_four_processes_ingesting_overlapping_batches(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    subprocess.run(harness_argv("--workspace", str(workspace), "init", "--empty"), check=True,
                   capture_output=True, env=clean_env(), timeout=60)
    files = []
    for worker in range(4):
        path = tmp_path / f"batch-{worker}.jsonl"
        path.write_text(_events(worker * 150, worker * 150 + 300))  # each overlaps the next by 150
        files.append(path)
    procs = [
        subprocess.Popen(harness_argv("--workspace", str(workspace), "ingest", "events", str(path)),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
        for path in files
    ]
    summaries = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        summaries.append(json.loads(out))
    assert sum(s["added"] for s in summaries) == 750
    assert all(s["added"] + s["skipped_duplicates"] == s["records"] == 300 for s in summaries)

    listed = subprocess.run(
        harness_argv("--workspace", str(workspace), "search_events", "--limit", "2000"),
        capture_output=True, text=True, env=clean_env(), timeout=60, check=True,
    )
    ids = [event["id"] for event in json.loads(listed.stdout)["events"]]
    assert sorted(ids) == [f"e-{n:05d}" for n in range(750)]
