"""`harness ingest events --format NAME` through the real CLI into a real git store, then read back."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path
from typing import Any

import cloudtrail_samples
import pytest
from adapter_samples import SAMPLES
from doors import call_both
from runners import run_cli
from store_backends import stored_head, stored_records

from harness.adapters import cloudtrail
from harness.investigate.views import METADATA_ALLOWLIST
from tests.investigate.ops_support import make_workspace

# Every test runs on the git store and on PostgreSQL (tests/store_backends.py).
pytestmark = pytest.mark.usefixtures("store_backend")


def pairs(name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each (vendor record, expected event), a record that fans out once per event."""
    return [(rec, ev) for rec, evs in SAMPLES[name] for ev in (evs if isinstance(evs, list) else [evs])]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("HARNESS_ROOT", "HARNESS_CONVERSATION_ID", "HARNESS_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return make_workspace(tmp_path)


def records(name: str) -> list[dict[str, Any]]:
    return [rec for rec, _ in SAMPLES[name]]


def write_native(name: str, directory: Path) -> Path:
    """Each format in the shape its vendor delivers: a gzipped CloudTrail S3 log file, an Okta API page (array),
    GitHub's streaming format (one record per line), Entra through diagnostic settings (`{"records": [...]}`), a
    Google Reports API page, a Slack Audit Logs API page, a Cloud Logging sink file (one LogEntry per line), an
    array of OCSF events."""
    if name == "cloudtrail":
        path = directory / "111122223333_CloudTrail_us-east-1_20260410T0900Z_abc.json.gz"
        path.write_bytes(gzip.compress(json.dumps({"Records": records(name)}).encode()))
    elif name == "okta":
        path = directory / "okta-logs-page1.json"
        path.write_text(json.dumps(records(name), indent=2))
    elif name == "google-workspace":
        path = directory / "reports-activities-page1.json"
        path.write_text(json.dumps({"kind": "admin#reports#activities", "etag": '"p1"', "items": records(name)}))
    elif name == "slack-audit":
        path = directory / "slack-audit-logs.json"
        path.write_text(json.dumps({"entries": records(name), "response_metadata": {"next_cursor": ""}}))
    elif name == "gcp-audit":
        path = directory / "cloudaudit.googleapis.com_activity_20260410.json"
        path.write_text("".join(json.dumps(rec) + "\n" for rec in records(name)))
    elif name == "ocsf":
        path = directory / "ocsf-events.json"
        path.write_text(json.dumps(records(name)))
    elif name == "m365":  # a Management Activity API content blob
        path = directory / "m365-audit-general-content.json"
        path.write_text(json.dumps(records(name)))
    elif name == "azure-activity":  # a REST API page
        path = directory / "activity-log-page1.json"
        path.write_text(json.dumps({"value": records(name), "nextLink": None}))
    elif name in ("entra-signin", "entra-audit"):
        path = directory / f"{name}-PT1H.json"
        path.write_text(json.dumps({"records": records(name)}))
    else:
        path = directory / "github-audit-stream.jsonl"
        path.write_text("".join(json.dumps(rec) + "\n" for rec in records(name)))
    return path


def ingest(ws: Path, *args: str, stdin: bytes | None = None, monkeypatch: pytest.MonkeyPatch | None = None) -> Any:
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    return run_cli(["--workspace", str(ws), "ingest", "events", *args])


def stored(ws: Path) -> dict[str, dict[str, Any]]:
    return {rec["id"]: rec for rec in stored_records(ws)}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_each_format_ingests_and_reads_back_through_both_front_doors(ws: Path, name: str) -> None:
    path = write_native(name, ws.parent)
    result = ingest(ws, "--format", name, str(path))
    assert result.exit_code == 0, result.stdout
    count = len(pairs(name))
    summary = result.json()
    assert (summary["records"], summary["added"], summary["skipped_duplicates"], summary["rejected"]) == (
        count,
        count,
        0,
        0,
    )
    by_id = stored(ws)
    answer = call_both(ws, "search_events", {"limit": 500})
    views = answer.document["events"]
    assert [view["timestamp"] for view in views] == sorted(view["timestamp"] for view in views)
    assert len(views) == count
    for (rec, expected), view in zip(pairs(name), views, strict=True):
        event = by_id[view["id"]]
        assert event["payload"]["raw"] == rec
        if not expected["id"].endswith("-sha256-"):
            assert view["id"] == expected["id"]
        assert (view["type"], view["actor"], view["source"], view["timestamp"]) == (
            expected["type"],
            expected["actor"],
            expected["source"],
            expected["timestamp"],
        )
        assert (view["action"], view["target"]) == (expected["payload"]["action"], expected["payload"]["target"])
        shown = {k: v for k, v in expected["payload"]["metadata"].items() if k in METADATA_ALLOWLIST}
        assert view["metadata"] == shown
        assert event["org"] == expected["org"]
    actor = pairs(name)[0][1]["actor"]
    found = call_both(ws, "search_events", {"actor": actor.upper(), "limit": 500}).document["events"]
    assert found and all(view["actor"] == actor for view in found)


def test_baseline_built_from_vendor_events_knows_actors_and_login_geos(ws: Path) -> None:
    for name in SAMPLES:
        assert ingest(ws, "--format", name, str(write_native(name, ws.parent))).exit_code == 0
    assert run_cli(["--workspace", str(ws), "baseline", "build"]).exit_code == 0
    for entity in (
        "alice",
        "jane@example.com",
        "newdev",
        "carol@example.com",
        "admin@example.com",
        "grace@example.com",
    ):
        answer = call_both(ws, "check_baseline", {"entity": entity}).document
        assert answer["known"] is True, (entity, answer)
    jane = call_both(ws, "check_baseline", {"entity": "jane@example.com", "source": "US"}).document
    assert jane["known"] is True


def test_auto_picks_each_format_per_file_and_says_so(ws: Path) -> None:
    paths = [write_native(name, ws.parent) for name in SAMPLES]
    harness_file = ws.parent / "own.jsonl"
    harness_file.write_text('{"id":"own-1","timestamp":"2026-04-10T09:00:00Z","actor":"me","type":"login"}\n')
    lookup = ws.parent / "lookup-events.json"
    first = cloudtrail_samples.CASES[0][0]
    lookup.write_text(
        json.dumps(
            {"Events": [{"EventId": first["eventID"], "CloudTrailEvent": json.dumps(first)}], "NextToken": "abc"},
            indent=4,
        )
    )
    result = ingest(ws, "--format", "auto", *map(str, paths), str(harness_file), str(lookup))
    assert result.exit_code == 0, result.stdout
    assert result.stderr.splitlines() == [
        *(f"ingest: {path}: format {name} (auto)" for path, name in zip(paths, SAMPLES, strict=True)),
        f"ingest: {harness_file}: format harness (auto)",
        f"ingest: {lookup}: format cloudtrail (auto)",
    ]
    total = sum(len(pairs(name)) for name in SAMPLES)
    summary = result.json()
    assert (summary["records"], summary["added"], summary["skipped_duplicates"]) == (total + 2, total + 1, 1)


@pytest.mark.parametrize("name", list(SAMPLES))
def test_auto_picks_each_format_from_json_lines_of_every_shape_it_reads(ws: Path, name: str) -> None:
    """Every sample record, one a line: each format's shapes (Graph, Log Analytics rows, diagnostic envelopes,
    audit search items, ...) in one file, recognized from its first line."""
    path = ws.parent / f"{name}-export.jsonl"
    path.write_text("".join(json.dumps(rec) + "\n" for rec in records(name)))
    result = ingest(ws, "--format", "auto", str(path))
    assert result.exit_code == 0, result.stdout
    assert result.stderr == f"ingest: {path}: format {name} (auto)\n"
    assert (result.json()["added"], result.json()["rejected"]) == (len(pairs(name)), 0)


def test_auto_refuses_an_unrecognized_file_with_the_formats_tried(ws: Path) -> None:
    odd = ws.parent / "app-service.json"
    odd.write_text(json.dumps([{"time": "2026-04-10T09:00:00Z", "category": "AppServiceHTTPLogs", "properties": {}}]))
    result = ingest(ws, "--format", "auto", str(odd))
    assert result.exit_code == 2
    assert result.json()["error"]["message"] == (
        f"{odd}: no format recognizes this input (tried cloudtrail, okta, github-audit, entra-signin, entra-audit, "
        "azure-activity, m365, google-workspace, slack-audit, gcp-audit, ocsf, harness)"
    )
    assert stored_head(ws) == ""


def test_errors_name_file_record_and_field_and_write_nothing(ws: Path) -> None:
    okta = records("okta")
    lines = ws.parent / "okta.jsonl"
    lines.write_text("".join(json.dumps(rec) + "\n" for rec in okta[:2]) + json.dumps({**okta[2], "published": None}))
    page = ws.parent / "okta.json"
    page.write_text(json.dumps([okta[0], okta[1], {**okta[2], "actor": {}}]))
    ct = records("cloudtrail")
    s3 = ws.parent / "ct.jsonl"
    s3.write_text(json.dumps({"Records": ct[:2]}) + "\n" + json.dumps({"Records": [{**ct[2], "eventTime": "soon"}]}))
    broken = ws.parent / "gh.jsonl"
    broken.write_text(json.dumps(records("github-audit")[0]) + "\n{not json\n")
    expected = {
        lines: f'{lines}:3: field "published": is required',
        page: f'{page}[2]: field "actor.alternateId": is required (no alternateId, displayName or id)',
        s3: f'{s3}:2[0]: field "eventTime": expected an RFC 3339 time, a UTC time without offset, or epoch seconds '
        'or milliseconds, got "soon"',
        broken: f"{broken}:2: malformed JSON at line 1 column 2",
    }
    for path, message in expected.items():
        name = {"okta": "okta", "ct": "cloudtrail", "gh": "github-audit"}[path.stem]
        result = ingest(ws, "--format", name, str(path))
        assert result.exit_code == 2
        assert result.json()["error"]["message"].startswith(message), path
    assert stored_head(ws) == ""


def test_rejects_file_takes_the_refused_records_and_the_counts_add_up(ws: Path) -> None:
    gh = records("github-audit")
    data = ws.parent / "gh.jsonl"
    bad_time = {**gh[3], "@timestamp": "later"}
    data.write_text(
        "\n".join(
            [json.dumps(gh[0]), json.dumps(gh[1]), "{oops", json.dumps(bad_time), json.dumps(gh[0]), json.dumps(gh[2])]
        )
        + "\n"
    )
    rejects = ws.parent / "rejects.jsonl"
    result = ingest(ws, "--format", "github-audit", "--rejects", str(rejects), str(data))
    assert result.exit_code == 0, result.stdout
    summary = result.json()
    assert (summary["records"], summary["added"], summary["skipped_duplicates"], summary["rejected"]) == (6, 3, 1, 2)
    assert summary["records"] == summary["added"] + summary["skipped_duplicates"] + summary["rejected"]
    refused = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [r["location"] for r in refused] == [f"{data}:3", f"{data}:4"]
    assert refused[0]["record"] == "{oops" and refused[0]["reason"].startswith("malformed JSON")
    assert refused[1]["record"] == bad_time and refused[1]["reason"].startswith('field "@timestamp": expected')
    assert len(stored(ws)) == 3


def test_reingest_after_a_mapping_change_reports_duplicates(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_native("cloudtrail", ws.parent)
    count = len(SAMPLES["cloudtrail"])
    assert ingest(ws, "--format", "cloudtrail", str(path)).json()["added"] == count
    monkeypatch.setitem(cloudtrail.TABLE.types, "ConsoleLogin", "admin_action")
    again = ingest(ws, "--format", "cloudtrail", str(path))
    assert again.exit_code == 0, again.stdout
    assert (again.json()["added"], again.json()["skipped_duplicates"], again.json()["rejected"]) == (0, count, 0)
    first = cloudtrail_samples.CASES[0][0]
    changed = ws.parent / "changed.json"
    changed.write_text(json.dumps({"Records": [{**first, "sourceIPAddress": "192.0.2.1"}]}))
    refused = ingest(ws, "--format", "cloudtrail", str(changed))
    assert refused.json()["error"]["message"] == (
        f'{changed}:1[0]: id "cloudtrail-{first["eventID"]}" already stored with different content'
    )


def test_stdin_plain_and_gzipped(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    okta = json.dumps(records("okta")).encode()
    result = ingest(ws, "--format", "okta", "-", stdin=okta, monkeypatch=monkeypatch)
    assert result.json()["added"] == len(SAMPLES["okta"])
    gh = "".join(json.dumps(rec) + "\n" for rec in records("github-audit")).encode()
    result = ingest(ws, "--format", "auto", "-", stdin=gzip.compress(gh), monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.stdout
    assert result.json()["added"] == len(SAMPLES["github-audit"])
    assert result.stderr == "ingest: <stdin>: format github-audit (auto)\n"


def test_truncated_gzip_is_refused_naming_the_file(ws: Path) -> None:
    path = ws.parent / "cut.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"Records": records("cloudtrail")}).encode())[:200])
    result = ingest(ws, "--format", "cloudtrail", str(path))
    assert result.exit_code == 2
    assert result.json()["error"]["message"].startswith(f"{path}: unreadable gzip data")


def test_format_is_refused_for_other_streams_and_unknown_names(ws: Path) -> None:
    result = ingest(ws, "--format", "splunk", "x.json")
    assert result.exit_code == 2
    assert result.json()["error"]["message"].startswith("format: Invalid value for '--format'")
    findings = run_cli(["--workspace", str(ws), "ingest", "findings", "--format", "okta", "x.json"])
    assert findings.exit_code == 2


def test_a_fanned_out_activity_is_refused_whole_and_the_counts_add_up(ws: Path) -> None:
    activities = records("google-workspace")
    broken = {**activities[2], "events": [activities[2]["events"][0], {"type": "login"}]}
    data = ws.parent / "reports.jsonl"
    data.write_text("".join(json.dumps(rec) + "\n" for rec in (activities[1], broken, activities[31])))
    plain = ingest(ws, "--format", "google-workspace", str(data))
    assert plain.exit_code == 2
    assert plain.json()["error"]["message"] == f'{data}:2: field "events.1.name": is required'
    assert stored_head(ws) == ""
    rejects = ws.parent / "rejects.jsonl"
    result = ingest(ws, "--format", "google-workspace", "--rejects", str(rejects), str(data))
    assert result.exit_code == 0, result.stdout
    summary = result.json()
    assert (summary["records"], summary["added"], summary["skipped_duplicates"], summary["rejected"]) == (5, 4, 0, 1)
    refused = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [(r["location"], r["record"]) for r in refused] == [(f"{data}:2", broken)]
    assert sorted(stored(ws)) == sorted(
        ev["id"] for ev in [*SAMPLES["google-workspace"][1][1], *SAMPLES["google-workspace"][31][1]]
    )
    again = ingest(ws, "--format", "google-workspace", "--rejects", str(rejects), str(data))
    assert (again.json()["added"], again.json()["skipped_duplicates"], again.json()["rejected"]) == (0, 4, 1)
