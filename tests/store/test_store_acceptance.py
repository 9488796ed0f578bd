"""docs/investigate.md §11 checks 1-3 and 12 at the store level: ingest, baseline build, and byte-identical
reads after the index is deleted."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from store_backends import StoreBackend, replay_of, workspace_store
from store_support import EV_LINES, canonical

from harness.errors import InvalidInput
from harness.store import RecordFilter, build_baseline
from harness.store.ingest import ingest_files
from harness.store.query import StoreView

FI = ('[{"Id":"finding-evt-1","Source":"detector:unusual-timing","Severity":"medium","Type":"unusual-timing",'
      '"Actor":"deploy-svc","Timestamp":"2026-04-10T02:30:00Z","Reason":"activity at 02:00 UTC",'
      '"Evidence":{"event_id":"evt-1","hour_utc":2}}]')


def _reads(view: StoreView) -> str:
    page = view.select("events", RecordFilter(actor="DEPLOY-SVC"), 200)
    dropped = view.select("events", RecordFilter(actor="deploy-svc", since=1_777_593_600_000_000), 200)
    applied = view.select("events", RecordFilter(actor="deploy-svc", since=1_775_786_760_000_000), 200)
    try:
        view.resolve("events", "evt-")
        ambiguity = ""
    except InvalidInput as exc:
        ambiguity = exc.message
    findings = view.select("findings", RecordFilter(ids=view.resolve_filter("findings", ["evt-1"])), 200)
    raw = view.get("events", view.resolve("events", "FINDING-EVT-1")[0])
    baseline = view.latest_baseline()
    return canonical([view.commit, page.total, page.records, dropped.total, applied.records, ambiguity,
                      findings.records, raw, baseline.record if baseline else None])


def test_checks_1_to_3_and_12(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_backend: StoreBackend) -> None:
    monkeypatch.chdir(tmp_path)
    Path("ev.jsonl").write_text("\n".join(EV_LINES) + "\n")
    Path("fi.json").write_text(FI)
    store_backend.bind(tmp_path / "W")
    store = workspace_store(tmp_path / "W")
    err = io.StringIO()
    first = ingest_files(store, "events", ["ev.jsonl"], stderr=err)
    assert (first["added"], first["skipped_duplicates"], first["records"]) == (4, 0, 4)
    again = ingest_files(store, "events", ["ev.jsonl"], stderr=err)
    assert (again["added"], again["skipped_duplicates"], again["commit"]) == (0, 4, "")
    assert ingest_files(store, "findings", ["fi.json"], stderr=err)["added"] == 1
    built = build_baseline(store)
    assert (built["appended"], built["events_read"]) == (True, 4)
    assert build_baseline(store)["appended"] is False
    assert err.getvalue() == ""

    with store.snapshot() as view:
        before = _reads(view)
    decoded = json.loads(before)
    assert [r["id"] for r in decoded[2]] == ["evt-1", "evt-2"]
    assert decoded[2][1]["timestamp"] == "2026-04-10T02:10:00Z"
    assert decoded[3] == 0 and [r["id"] for r in decoded[4]] == ["evt-2"]
    assert decoded[5] == ('id "evt-" is ambiguous: prefix matches 4 stored ids: evt-1, evt-2, evt-3, evt-4. '
                          "Supply a longer prefix or the exact id.")
    assert decoded[6][0]["event_ids"] == ["evt-1"]
    assert decoded[7]["payload"] == {"action": "restart", "metadata": {"maintenance_window": True, "window_id": "mw-7"},
                                     "target": "web-01"}
    # last_seen is the last activity of any kind: the push of evt-3, after the login of evt-4.
    assert decoded[8]["known_users"]["baron"]["last_seen"] == "2026-04-10T09:00:00Z"

    (tmp_path / "W" / "store.index.sqlite3").unlink(missing_ok=store_backend.is_pg)
    again = workspace_store(tmp_path / "W")
    with again.snapshot() as view:
        assert _reads(view) == before
    assert _reads(replay_of(store)) == before
    store.close()
    again.close()
