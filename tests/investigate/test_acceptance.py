"""docs/investigate.md §11: the acceptance checks 1-12, each command a real `harness --workspace W ...` process."""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from store_backends import StoreBackend, workspace_store

from harness.investigate.search_events import NOTE_WINDOW_DROPPED
from harness.text import canonjson
from tests.e2e.procs import clean_env, harness_argv

pytestmark = pytest.mark.slow

EV_LINES = [
    (
        '{"ID":"evt-1","Source":"azure","EventType":"container_restart","Actor":"deploy-svc",'
        '"Timestamp":"2026-04-10T02:05:00Z","Action":"restart","Target":"web-01",'
        '"Metadata":{"maintenance_window":true,"window_id":"mw-7"}}'
    ),
    (
        '{"id":"evt-2","source":"azure","event-type":"container_restart","actor":"deploy-svc",'
        '"timestamp":"2026-04-10T04:10:00+02:00","action":"restart","target":"web-02",'
        '"metadata":{"maintenance_window":true}}'
    ),
    (
        '{"-id":"evt-3","-source":"github","-type":"push","-actor":"baron","-timestamp":"2026-04-10T09:00:00Z",'
        '"payload":{"ref":"main"}}'
    ),
    (
        '{"Id":"evt-4","source":"azure","type":"login","actor":"baron","timestamp":"2026-04-09T12:00:00.250Z",'
        '"payload":{"ip":"203.0.113.5","geo":"US"}}'
    ),
]
FI = (
    '[{"Id":"finding-evt-1","Source":"detector:unusual-timing","Severity":"medium","Type":"unusual-timing",'
    '"Actor":"deploy-svc","Timestamp":"2026-04-10T02:30:00Z","Reason":"activity at 02:00 UTC",'
    '"Evidence":{"event_id":"evt-1","hour_utc":2}}]'
)
BAD = '{"id":"EVT-4","source":"azure","type":"login","actor":"mallory","timestamp":"2026-04-09T12:00:00Z"}'
EMBEDDED_SHA256 = hashlib.sha256(
    importlib.resources.files("harness.rules").joinpath("operator-decisions.yaml").read_bytes()
).hexdigest()

# Checks 4-11: the read commands whose stdout must not change when the index is deleted (check 12).
READS: dict[str, list[str]] = {
    "4": [
        "search_events",
        "--actor",
        "DEPLOY-SVC",
        "--finding-family",
        "unusual-timing",
        "--finding-metadata",
        '{"maintenance_window":"true"}',
    ],
    "5 dropped": ["search_events", "--actor", "deploy-svc", "--since", "2026-05-01"],
    "5 applied": ["search_events", "--actor", "deploy-svc", "--since", "2026-04-10T02:06:00Z"],
    "6": ["search_events", "--ids", "evt-"],
    "7": ["check_baseline", "--entity", "deploy-svc", "--event-type", "container_restart"],
    "8": ["check_baseline", "--entity", "BARON", "--source", "fr"],
    "9": [
        "lookup_rules",
        "--finding-id",
        "finding-evt-1",
        "--finding-family",
        "unusual-timing",
        "--maintenance-window",
        "true",
    ],
    "10": ["search_findings", "--ids", "evt-1"],
    "11": ["get_raw_event", "--id", "FINDING-EVT-1"],
}


@dataclass
class Run:
    exit_code: int
    stdout: str

    @property
    def document(self) -> Any:
        return json.loads(self.stdout)


def harness(cwd: Path, *args: str) -> Run:
    """`harness --workspace W ARGS` as its own process in `cwd`; stdout is one compact, sorted JSON document."""
    argv = harness_argv("--workspace", "W", *args)
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=clean_env(), timeout=120, check=False)
    assert proc.stdout == canonjson.dumps(json.loads(proc.stdout)) + "\n", proc.stdout
    return Run(proc.returncode, proc.stdout)


def read_all(cwd: Path) -> dict[str, Run]:
    """Checks 4-11, run side by side (they only read)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = pool.map(lambda args: harness(cwd, *args), READS.values())
        return dict(zip(READS, runs, strict=True))


def _head(workspace: Path) -> str:
    store = workspace_store(workspace)
    try:
        return store.head()
    finally:
        store.close()


def _event_ids(run: Run) -> list[str]:
    return [event["id"] for event in run.document["events"]]


def test_acceptance_checks_1_to_12(tmp_path: Path, store_backend: StoreBackend) -> None:
    assert harness(tmp_path, "init", "--empty").exit_code == 0
    store_backend.bind(tmp_path / "W")
    (tmp_path / "ev.jsonl").write_text("\n".join(EV_LINES) + "\n")
    (tmp_path / "fi.json").write_text(FI)
    (tmp_path / "bad.jsonl").write_text(BAD + "\n")

    # 1
    first = harness(tmp_path, "ingest", "events", "ev.jsonl").document
    assert (first["added"], first["skipped_duplicates"], first["records"]) == (4, 0, 4)
    again = harness(tmp_path, "ingest", "events", "ev.jsonl").document
    assert (again["added"], again["skipped_duplicates"], again["commit"]) == (0, 4, "")

    # 2
    head = _head(tmp_path / "W")
    bad = harness(tmp_path, "ingest", "events", "bad.jsonl")
    assert bad.exit_code == 2
    assert bad.document["error"]["code"] == "invalid_input"
    assert bad.document["error"]["message"].startswith('bad.jsonl:1: id "EVT-4" already stored with different content')
    assert _head(tmp_path / "W") == head

    # 3
    assert harness(tmp_path, "ingest", "findings", "fi.json").document["added"] == 1
    built = harness(tmp_path, "baseline", "build").document
    assert (built["appended"], built["events_read"]) == (True, 4)
    assert harness(tmp_path, "baseline", "build").document["appended"] is False

    runs = read_all(tmp_path)
    exits = {name: run.exit_code for name, run in runs.items()}
    assert exits == {name: 2 if name == "6" else 0 for name in READS}

    # 4
    four = runs["4"].document
    assert _event_ids(runs["4"]) == ["evt-1", "evt-2"]
    assert four["events"][1]["timestamp"] == "2026-04-10T02:10:00Z"
    assert [rule["id"] for rule in four["matched_rules"]] == ["R-001"]
    assert four["filter_applied"] == {
        "actor": "DEPLOY-SVC",
        "effective": "none",
        "ip": "",
        "since": "",
        "source": "",
        "target": "",
        "type": "",
        "until": "",
    }
    assert (four["notes"], four["total"], four["truncated"]) == ("", 2, False)
    assert canonjson.dumps(four["events"][0]) == (
        '{"action":"restart","actor":"deploy-svc","id":"evt-1","metadata":{"maintenance_window":"true",'
        '"window_id":"mw-7"},"source":"azure","target":"web-01","timestamp":"2026-04-10T02:05:00Z",'
        '"type":"container_restart"}'
    )

    # 5
    dropped = runs["5 dropped"].document
    assert _event_ids(runs["5 dropped"]) == ["evt-1", "evt-2"]
    assert dropped["filter_applied"]["effective"] == "dropped"
    assert dropped["filter_applied"]["since"] == "2026-05-01T00:00:00Z"
    assert dropped["notes"] == NOTE_WINDOW_DROPPED
    assert _event_ids(runs["5 applied"]) == ["evt-2"]
    assert runs["5 applied"].document["filter_applied"]["effective"] == "applied"

    # 6
    assert runs["6"].document["error"]["code"] == "invalid_input"
    assert runs["6"].document["error"]["message"] == (
        'id "evt-" is ambiguous: prefix matches 4 stored ids: evt-1, evt-2, evt-3, evt-4. '
        "Supply a longer prefix or the exact id."
    )

    # 7
    assert runs["7"].stdout == (
        '{"event_type":"container_restart","frequency":2,"frequency_by_type":{"container_restart":2},'
        '"frequency_for_type":2,"known":true,"last_seen":"2026-04-10T02:10:00Z","notes":"",'
        '"relationships":{"deploy-svc:web-01":{"count":1,"first_seen":"2026-04-10T02:05:00Z",'
        '"last_seen":"2026-04-10T02:05:00Z"},"deploy-svc:web-02":{"count":1,"first_seen":"2026-04-10T02:10:00Z",'
        '"last_seen":"2026-04-10T02:10:00Z"}},"roles":[]}\n'
    )

    # 8
    eight = runs["8"].document
    # last_seen is the last activity of any kind (the push of evt-3), not the last login (evt-4).
    assert (eight["known"], eight["last_seen"], eight["frequency"]) == (False, "2026-04-10T09:00:00Z", 2)
    assert eight["frequency_by_type"] == {"login": 1, "push": 1}
    assert eight["notes"] == (
        'entity is in the baseline but source "fr" is not one of its known geos (US), so known is false'
    )

    # 9
    nine = runs["9"].document
    assert [rule["id"] for rule in nine["rules"]] == ["R-001"]
    assert (nine["corpus_sha256"], nine["notes"]) == (EMBEDDED_SHA256, "")

    # 10
    ten = runs["10"].document
    assert ten["total"] == 1 and len(ten["findings"]) == 1
    assert ten["findings"][0]["event_ids"] == ["evt-1"]
    assert ten["findings"][0]["evidence"] == {"event_id": "evt-1", "hour_utc": 2}

    # 11
    assert runs["11"].stdout == (
        '{"found":true,"id":"evt-1","notes":"","payload":{"action":"restart","metadata":{"maintenance_window":true,'
        '"window_id":"mw-7"},"target":"web-01"},"redacted":false,"truncated":false}\n'
    )

    # 12 (PostgreSQL has no index file: the rerun reads the same tables again)
    index = tmp_path / "W" / "store.index.sqlite3"
    assert index.exists() != store_backend.is_pg
    index.unlink(missing_ok=True)
    rerun = read_all(tmp_path)
    assert index.exists() != store_backend.is_pg
    assert {name: run.stdout for name, run in rerun.items()} == {name: run.stdout for name, run in runs.items()}
    assert {name: run.exit_code for name, run in rerun.items()} == exits
