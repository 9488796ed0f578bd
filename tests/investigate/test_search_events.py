"""search_events (docs/investigate.md §9.1, docs/investigate.md §2 EventView, docs/investigate.md §8) through the CLI and the in-memory MCP client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from doors import call_both
from hypothesis import given
from hypothesis import strategies as st
from listing import listed_text
from runners import run_cli

from harness.investigate import search_events, views
from harness.investigate.rulefold import no_match_note
from harness.investigate.search_events import MAX_IDS, MAX_LIMIT, NOTE_EMPTY, NOTE_WINDOW_DROPPED
from harness.rules import CorpusError, load_corpus
from harness.text.casefold import MISSING, lookup
from tests.investigate.ops_support import STORE_V, dumps, error, make_workspace

# Every test runs on the git store and on PostgreSQL (tests/store_backends.py).
pytestmark = pytest.mark.usefixtures("store_backend")

OP = "search_events"

VIEWS = {
    "e1": {
        "action": "push",
        "actor": "baron",
        "id": "e1",
        "metadata": {},
        "source": "github",
        "target": "contoso/api",
        "timestamp": "2026-04-10T09:00:00Z",
        "type": "push",
    },
    "e2": {
        "action": "",
        "actor": "ci-bot",
        "id": "e2",
        "metadata": {},
        "source": "github",
        "target": "",
        "timestamp": "2026-04-10T10:00:00Z",
        "type": "push",
    },
    "e3": {
        "action": "",
        "actor": "deploy-svc",
        "id": "e3",
        "metadata": {"maintenance_window": "true"},
        "source": "azure",
        "target": "",
        "timestamp": "2026-04-10T11:00:00Z",
        "type": "container_restart",
    },
    "e4": {
        "action": "",
        "actor": "baron",
        "id": "e4",
        "metadata": {},
        "source": "github",
        "target": "",
        "timestamp": "2026-04-10T12:00:00Z",
        "type": "delete",
    },
    "cafe1234": {
        "action": "",
        "actor": "svc-role",
        "id": "cafe1234",
        "metadata": {},
        "source": "aws",
        "target": "",
        "timestamp": "2026-04-10T13:00:00Z",
        "type": "assume_role",
    },
}
ALL = ["e1", "e2", "e3", "e4", "cafe1234"]


def embedded_rule(rule_id: str) -> dict[str, Any]:
    corpus = load_corpus(explicit=None, workspace=None, pin=None)
    return next(rule.to_json() for rule in corpus.rules if rule.id == rule_id)


def expected(
    ids: list[str],
    *,
    total: int | None = None,
    effective: str = "none",
    notes: str = "",
    rules: list[dict[str, Any]] | None = None,
    views_by_id: dict[str, dict[str, Any]] | None = None,
    **filters: str,
) -> str:
    shown = views_by_id or VIEWS
    count = len(ids) if total is None else total
    applied = {
        "actor": "",
        "source": "",
        "type": "",
        "target": "",
        "ip": "",
        "since": "",
        "until": "",
        "effective": effective,
        **filters,
    }
    return dumps(
        {
            "events": [shown[i] for i in ids],
            "matched_rules": rules or [],
            "filter_applied": applied,
            "notes": notes,
            "total": count,
            "truncated": count > len(ids),
        }
    )


@pytest.fixture(scope="module")
def ws_v(tmp_path_factory: pytest.TempPathFactory, store_backend: Any) -> Path:
    return make_workspace(tmp_path_factory.mktemp("v"), events=STORE_V)


def test_no_filter_returns_every_event_in_stream_order(ws_v: Path) -> None:
    answer = call_both(ws_v, OP, {})
    assert answer.exit_code == 0
    assert answer.text == expected(ALL)


@pytest.mark.parametrize(
    ("arguments", "ids"),
    [
        ({"actor": "BARON"}, ["e1", "e4"]),
        ({"source": "azure"}, ["e3"]),
        ({"type": "push"}, ["e1", "e2"]),
        ({"actor": "baron", "type": "delete"}, ["e4"]),
    ],
)
def test_whole_value_filters_ignore_case_and_combine(ws_v: Path, arguments: dict[str, str], ids: list[str]) -> None:
    assert call_both(ws_v, OP, arguments).text == expected(ids, **arguments)


# Where the adapters write them (payload.target, payload.metadata.ip) and where hand-written events do (payload.ip).
TARGET_IP_EVENTS = [
    {"id": "ct-1", "timestamp": "2026-04-10T09:05:00Z", "source": "aws", "type": "ConsoleLogin", "actor": "mallory",
     "payload": {"target": "signin.aws.amazon.com", "metadata": {"ip": "198.51.100.7"}}},
    {"id": "ok-1", "timestamp": "2026-04-10T09:00:00Z", "source": "okta", "type": "login", "actor": "baron",
     "payload": {"target": "Okta Dashboard", "metadata": {"ip": "2001:DB8::1"}}},
    {"id": "hs-1", "timestamp": "2026-04-10T08:00:00Z", "source": "azure", "type": "login", "actor": "baron",
     "payload": {"target": "okta dashboard", "ip": "198.51.100.7"}},
    {"id": "ct-2", "timestamp": "2026-04-10T09:10:00Z", "source": "aws", "type": "StopLogging", "actor": "mallory",
     "payload": {"target": 42, "metadata": {"ip": "198.51.100.70"}}},
]


@pytest.mark.parametrize(
    ("arguments", "ids"),
    [
        ({"target": "OKTA DASHBOARD"}, ["hs-1", "ok-1"]),
        ({"ip": "198.51.100.7"}, ["hs-1", "ct-1"]),
        ({"ip": "2001:db8::1"}, ["ok-1"]),
        ({"ip": "198.51.100"}, []),
        ({"target": "signin.aws"}, []),
        ({"target": "42"}, []),
        ({"target": "okta dashboard", "ip": "198.51.100.7", "actor": "Baron"}, ["hs-1"]),
        ({"ip": "198.51.100.7", "source": "aws", "since": "2026-04-10T09:00:00Z"}, ["ct-1"]),
    ],
)
def test_target_and_ip_filters_match_whole_values_ignoring_case(
    tmp_path: Path, arguments: dict[str, str], ids: list[str]
) -> None:
    workspace = make_workspace(tmp_path, events=TARGET_IP_EVENTS)
    answer = call_both(workspace, OP, arguments)
    assert answer.exit_code == 0
    assert [view["id"] for view in answer.document["events"]] == ids
    assert answer.document["total"] == len(ids)
    applied = answer.document["filter_applied"]
    assert (applied["target"], applied["ip"]) == (arguments.get("target", ""), arguments.get("ip", ""))


def test_target_and_ip_cli_flags_and_sanitized_echo(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, events=TARGET_IP_EVENTS)
    result = run_cli(["--workspace", str(workspace), OP, "--target", "okta dashboard", "--ip", "2001:db8::1"])
    assert result.exit_code == 0
    assert [view["id"] for view in result.json()["events"]] == ["ok-1"]
    echoed = call_both(workspace, OP, {"target": "a\u202eb", "ip": "x\u0007"}).document["filter_applied"]
    assert (echoed["target"], echoed["ip"]) == ("ab", "x")


def test_a_substring_matches_nothing(ws_v: Path) -> None:
    assert call_both(ws_v, OP, {"actor": "bar"}).text == expected([], actor="bar", notes=NOTE_EMPTY)


def test_window_applies_inclusively(ws_v: Path) -> None:
    answer = call_both(ws_v, OP, {"since": "2026-04-10T10:30:00Z", "until": "2026-04-10T11:30:00Z"})
    assert answer.text == expected(
        ["e3"], effective="applied", since="2026-04-10T10:30:00Z", until="2026-04-10T11:30:00Z"
    )
    edges = call_both(ws_v, OP, {"since": "2026-04-10T10:00:00Z", "until": "2026-04-10T12:00:00Z"})
    assert edges.text == expected(
        ["e2", "e3", "e4"], effective="applied", since="2026-04-10T10:00:00Z", until="2026-04-10T12:00:00Z"
    )


def test_an_offset_bound_is_rendered_in_utc(ws_v: Path) -> None:
    answer = call_both(ws_v, OP, {"since": "2026-04-10T12:00:00+02:00"})
    assert answer.text == expected(["e2", "e3", "e4", "cafe1234"], effective="applied", since="2026-04-10T10:00:00Z")


def test_a_date_until_means_the_last_instant_of_that_day(ws_v: Path) -> None:
    answer = call_both(ws_v, OP, {"until": "2026-04-10"})
    assert answer.text == expected(ALL, effective="applied", until="2026-04-10T23:59:59.999999Z")


def test_a_window_excluding_every_match_is_dropped(ws_v: Path) -> None:
    answer = call_both(ws_v, OP, {"actor": "baron", "since": "2026-04-15"})
    assert answer.text == expected(
        ["e1", "e4"], actor="baron", effective="dropped", since="2026-04-15T00:00:00Z", notes=NOTE_WINDOW_DROPPED
    )


def test_an_inverted_window_is_dropped(ws_v: Path) -> None:
    answer = call_both(ws_v, OP, {"since": "2026-04-11", "until": "2026-04-09"})
    assert answer.text == expected(
        ALL, effective="dropped", since="2026-04-11T00:00:00Z", until="2026-04-09T23:59:59.999999Z", notes=NOTE_WINDOW_DROPPED
    )


def test_a_window_over_an_empty_match_stays_applied(ws_v: Path) -> None:
    answer = call_both(ws_v, OP, {"actor": "nobody", "since": "2026-04-15"})
    assert answer.text == expected(
        [], actor="nobody", effective="applied", since="2026-04-15T00:00:00Z", notes=NOTE_EMPTY
    )


@pytest.mark.parametrize(
    ("requested", "ids"),
    [
        (["e4", "e1"], ["e1", "e4"]),
        (["E1"], ["e1"]),
        (["", "e3"], ["e3"]),
        ([""], ALL),
        (["finding-cafe1234"], ["cafe1234"]),
        (["caf"], []),
    ],
)
def test_ids_filter(ws_v: Path, requested: list[str], ids: list[str]) -> None:
    answer = call_both(ws_v, OP, {"ids": requested})
    assert answer.text == expected(ids, notes="" if ids else NOTE_EMPTY)


def test_ids_combine_with_the_other_filters(ws_v: Path) -> None:
    answer = call_both(ws_v, OP, {"ids": ["e1", "e2", "e4"], "type": "push"})
    assert answer.text == expected(["e1", "e2"], type="push")


def test_limit_truncates_with_a_note(ws_v: Path) -> None:
    note = (
        "showing the oldest 2 of 5 matching events; narrow the filters, move since later or raise limit "
        f"(at most {MAX_LIMIT})."
    )
    assert call_both(ws_v, OP, {"limit": 2}).text == expected(["e1", "e2"], total=5, notes=note)


# A CloudTrail-like export: DeleteTrail at 20:53 is listed after the 20:57 events (its offset makes its string sort
# after them too), two events share an instant, and a later file brings an even earlier event.
TRAIL_FILE = [
    {"Id": "ct-01", "Source": "aws", "EventType": "ConsoleLogin", "Actor": "mallory",
     "Timestamp": "2026-03-02T20:57:01Z", "Payload": {"action": "ConsoleLogin", "target": "signin.aws"}},
    {"Id": "ct-02", "Source": "aws", "EventType": "StopLogging", "Actor": "mallory",
     "Timestamp": "2026-03-02T20:57:30Z", "Payload": {"action": "StopLogging", "target": "org-trail"}},
    {"Id": "ct-03", "Source": "aws", "EventType": "CreateAccessKey", "Actor": "mallory",
     "Timestamp": "2026-03-02T20:57:30Z", "Payload": {"action": "CreateAccessKey", "target": "mallory"}},
    {"Id": "ct-04", "Source": "aws", "EventType": "DeleteTrail", "Actor": "mallory",
     "Timestamp": "2026-03-02T21:53:10+01:00", "Payload": {"action": "DeleteTrail", "target": "org-trail"}},
    {"Id": "ct-05", "Source": "aws", "EventType": "AssumeRole", "Actor": "ci-bot", "Timestamp": "2026-03-02T20:55:00Z"},
]
TRAIL_LATER_FILE = [
    {"Id": "ct-06", "Source": "aws", "EventType": "ConsoleLogin", "Actor": "mallory",
     "Timestamp": "2026-03-02T20:50:00Z"},
]


@pytest.fixture(scope="module")
def ws_trail(tmp_path_factory: pytest.TempPathFactory, store_backend: Any) -> Path:
    root = tmp_path_factory.mktemp("trail")
    workspace = root / "ws"
    assert run_cli(["--workspace", str(workspace), "init", "--empty"]).exit_code == 0
    store_backend.bind(workspace)
    for name, records in (("trail.jsonl", TRAIL_FILE), ("later.jsonl", TRAIL_LATER_FILE)):
        (root / name).write_text("".join(json.dumps(record) + "\n" for record in records))
        assert run_cli(["--workspace", str(workspace), "ingest", "events", str(root / name)]).exit_code == 0
    return workspace


@pytest.mark.parametrize(
    ("arguments", "shown", "total"),
    [
        ({}, [("ct-06", "20:50:00"), ("ct-04", "20:53:10"), ("ct-05", "20:55:00"), ("ct-01", "20:57:01"),
              ("ct-02", "20:57:30"), ("ct-03", "20:57:30")], 6),
        ({"actor": "MALLORY", "limit": 2}, [("ct-06", "20:50:00"), ("ct-04", "20:53:10")], 5),
        ({"actor": "mallory", "since": "2026-03-02T20:54:00Z", "until": "2026-03-02T20:58:00Z", "limit": 2},
         [("ct-01", "20:57:01"), ("ct-02", "20:57:30")], 3),
        ({"source": "aws", "type": "consolelogin"}, [("ct-06", "20:50:00"), ("ct-01", "20:57:01")], 2),
        ({"ids": ["ct-03", "ct-02", "ct-04"]}, [("ct-04", "20:53:10"), ("ct-02", "20:57:30"), ("ct-03", "20:57:30")],
         3),
    ],
)
def test_events_come_oldest_first_whatever_the_export_order(
    ws_trail: Path, arguments: dict[str, Any], shown: list[tuple[str, str]], total: int
) -> None:
    answer = call_both(ws_trail, OP, arguments)
    events = answer.document["events"]
    assert [(e["id"], e["timestamp"]) for e in events] == [(i, f"2026-03-02T{t}Z") for i, t in shown]
    assert (answer.document["total"], answer.document["truncated"]) == (total, total > len(shown))
    if total > len(shown):
        assert answer.document["notes"] == search_events.truncation_note(len(shown), total, "events")


def test_rules_fold_independently_of_the_events(ws_v: Path) -> None:
    answer = call_both(
        ws_v,
        OP,
        {"actor": "nobody", "finding_family": "UNUSUAL-TIMING", "finding_metadata": {"maintenanceWindow": "TRUE"}},
    )
    assert answer.text == expected([], actor="nobody", notes=NOTE_EMPTY, rules=[embedded_rule("R-001")])


def test_no_rules_without_a_family(ws_v: Path) -> None:
    arguments = {"finding_family": "", "finding_metadata": {"maintenance_window": "true"}}
    assert call_both(ws_v, OP, arguments).text == expected(ALL)


@pytest.mark.parametrize(
    "arguments",
    [
        {"finding_family": "unusual-timing", "finding_metadata": {}},
        {"finding_family": "forged-family", "finding_metadata": {"maintenance_window": "true"}},
        {"finding_family": "forged\u202efamily\u0000"},
    ],
)
def test_a_fold_matching_no_rule_says_so_as_lookup_rules_does(ws_v: Path, arguments: dict[str, Any]) -> None:
    note = no_match_note(arguments["finding_family"])
    assert call_both(ws_v, OP, arguments).text == expected(ALL, notes=note)
    lookup = call_both(ws_v, "lookup_rules", {"finding_id": "f1", **arguments})
    assert lookup.document["rules"] == [] and lookup.document["notes"] == note


def test_a_broken_workspace_corpus_becomes_a_note(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, events=STORE_V)
    (workspace / "rules").mkdir()
    (workspace / "rules" / "operator-decisions.yaml").write_text("version: 1\nrules: [\n  - id: R-1\n")
    with pytest.raises(CorpusError) as raised:
        load_corpus(explicit=None, workspace=workspace, pin=None)
    assert str(raised.value).startswith("rule corpus workspace: ")
    answer = call_both(workspace, OP, {"finding_family": "unusual-timing"})
    assert answer.exit_code == 0
    assert answer.text == expected(ALL, notes=f"rule matching skipped: {raised.value}")


def test_notes_come_in_the_specified_order(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, events=STORE_V)
    (workspace / "rules").mkdir()
    (workspace / "rules" / "operator-decisions.yaml").write_text("version: 2\nrules: []\n")
    with pytest.raises(CorpusError) as raised:
        load_corpus(explicit=None, workspace=workspace, pin=None)
    truncation = (
        "showing the oldest 1 of 2 matching events; narrow the filters, move since later or raise limit "
        f"(at most {MAX_LIMIT})."
    )
    answer = call_both(workspace, OP, {"actor": "baron", "since": "2027-01-01", "limit": 1, "finding_family": "x"})
    assert answer.text == expected(
        ["e1"],
        total=2,
        actor="baron",
        effective="dropped",
        since="2027-01-01T00:00:00Z",
        notes=f"{NOTE_WINDOW_DROPPED} rule matching skipped: {raised.value} {truncation}",
    )
    empty = call_both(workspace, OP, {"actor": "nobody", "finding_family": "x"})
    assert empty.text == expected([], actor="nobody", notes=f"rule matching skipped: {raised.value} {NOTE_EMPTY}")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"limit": 0}, "limit: must be at least 1, got 0"),
        ({"limit": MAX_LIMIT + 1}, f"limit: must be at most {MAX_LIMIT}, got {MAX_LIMIT + 1}"),
        (
            {"since": "yesterday"},
            'since: expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z or a date such as 2026-04-10, got "yesterday"',
        ),
        (
            {"since": "2026-04-10T09:00:00"},
            (
                "since: expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z or a date such as 2026-04-10, got "
                '"2026-04-10T09:00:00"'
            ),
        ),
        (
            {"until": "2026-4-1"},
            'until: expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z or a date such as 2026-04-10, got "2026-4-1"',
        ),
        (
            {"eventType": "push"},
            (
                "eventType: unknown field; the accepted fields are actor, source, type, target, ip, ids, since, until, "
                "limit, finding_family, finding_metadata"
            ),
        ),
        ({"ids": ["e1"] * (MAX_IDS + 1)}, f"ids: must have at most {MAX_IDS} items, got {MAX_IDS + 1}"),
        (
            {"finding_metadata": {"maintenance_window": True}},
            "finding_metadata.maintenance_window: expected a string, got a boolean",
        ),
        (
            {"finding_metadata": {"maintenanceWindow": "true", "maintenance_window": "true"}},
            'finding_metadata: keys "maintenanceWindow" and "maintenance_window" both normalize to "maintenance_window"',
        ),
        (
            {"finding_metadata": {f"k{i}": "v" for i in range(65)}},
            "finding_metadata: must have at most 64 entries, got 65",
        ),
        ({"finding_metadata": {"k": "v" * 1025}}, "finding_metadata.k: must be at most 1024 bytes (UTF-8), got 1025"),
        ({"actor": "a" * 257}, "actor: must be at most 256 bytes (UTF-8), got 257"),
        ({"target": "t" * 257}, "target: must be at most 256 bytes (UTF-8), got 257"),
        ({"ids": ["é" * 129]}, "ids[0]: must be at most 256 bytes (UTF-8), got 258"),
        ({"finding_family": "f" * 129}, "finding_family: must be at most 128 bytes (UTF-8), got 129"),
        (
            {"ids": ["evt-"]},
            (
                'id "evt-" is ambiguous: prefix matches 2 stored ids: evt-1, evt-2. Supply a longer prefix or '
                "the exact id."
            ),
        ),
    ],
)
def test_invalid_input_names_the_field(tmp_path: Path, arguments: dict[str, Any], message: str) -> None:
    workspace = make_workspace(
        tmp_path,
        events=[
            {"id": "evt-1", "timestamp": "2026-04-10T09:00:00Z"},
            {"id": "evt-2", "timestamp": "2026-04-10T09:00:00Z"},
        ],
    )
    answer = call_both(workspace, OP, arguments)
    assert answer.exit_code == 2
    assert answer.text == dumps(error(OP, "invalid_input", message))


def test_cli_flags_reach_the_same_answer(ws_v: Path) -> None:
    result = run_cli(
        [
            "--workspace",
            str(ws_v),
            OP,
            "--ids",
            "e4",
            "--ids",
            "E1",
            "--since",
            "2026-04-10",
            "--limit",
            "5",
            "--finding-family",
            "unusual-timing",
            "--finding-metadata",
            '{"maintenance_window": "true"}',
        ]
    )
    assert result.exit_code == 0
    assert (
        result.stdout
        == expected(["e1", "e4"], effective="applied", since="2026-04-10T00:00:00Z", rules=[embedded_rule("R-001")])
        + "\n"
    )


def test_missing_store_reads_as_empty(tmp_path: Path) -> None:
    workspace = tmp_path / "bare"
    workspace.mkdir()
    assert call_both(workspace, OP, {}).text == expected([], notes=NOTE_EMPTY)
    assert not (workspace / "store").exists()


def test_unreadable_store_is_upstream_unavailable(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "store").write_text("not a repository")
    answer = call_both(workspace, OP, {})
    assert answer.exit_code == 3
    assert answer.document["error"]["code"] == "upstream_unavailable"
    assert answer.document["error"]["message"].startswith("store unavailable: ")


# docs/investigate.md §2 EventView and docs/investigate.md §1.4 rendering, through the operation.

SPEC_PAYLOAD = {
    "action": "restart",
    "Target": "web-01\nprod",
    "role": "admin",
    "ip": "203.0.113.9",
    "metadata": {
        "maintenance_window": True,
        "operation_count": 847.0,
        "ratio": 0.5,
        "tags": ["a"],
        "caller": "",
        "role": {"x": 1},
    },
}


def _view_of(tmp_path: Path, payload: Any) -> dict[str, Any]:
    workspace = make_workspace(tmp_path, events=[{"id": "x1", "timestamp": "2026-04-10T09:00:00Z", "payload": payload}])
    answer = call_both(workspace, OP, {})
    (view,) = answer.document["events"]
    return view


def test_the_eventview_vector(tmp_path: Path) -> None:
    assert _view_of(tmp_path, SPEC_PAYLOAD) == {
        "action": "restart",
        "actor": "",
        "id": "x1",
        "source": "",
        "target": "web-01 prod",
        "timestamp": "2026-04-10T09:00:00Z",
        "type": "",
        "metadata": {"ip": "203.0.113.9", "maintenance_window": "true", "operation_count": "847"},
    }


@pytest.mark.parametrize("payload", ["just text", [1, 2], 7, None, True])
def test_a_non_object_payload_gives_empty_fields(tmp_path: Path, payload: Any) -> None:
    view = _view_of(tmp_path, payload)
    assert (view["target"], view["action"], view["metadata"]) == ("", "", {})


def test_metadata_renders_scalars_and_skips_the_rest(tmp_path: Path) -> None:
    payload = {
        "metadata": {
            "bytesRead": 1e20,
            "rows_affected": -0.0,
            "resource_count": 1e-07,
            "includes_pii": False,
            "job_id": None,
            "ticket_id": "",
            "schedule": "a\u202eb\tc",
            "location": 12,
        },
        "ip": "10.0.0.1",
        "location": "ignored: metadata decides",
        "session_name": {"nested": 1},
        "user_agent": "x" * 2000,
        "description": "not allowlisted",
        "window-id": "mw-1",
    }
    assert _view_of(tmp_path, payload)["metadata"] == {
        "bytes_read": "100000000000000000000",
        "rows_affected": "0",
        "resource_count": "0.0000001",
        "includes_pii": "false",
        "schedule": "ab c",
        "location": "12",
        "ip": "10.0.0.1",
        "user_agent": "x" * 1012 + " [truncated]",
        "window_id": "mw-1",
    }


def test_target_and_action_follow_lookup_order(tmp_path: Path) -> None:
    view = _view_of(tmp_path, {"TARGET": "first", "Target": "second", "action": 5})
    assert (view["target"], view["action"]) == ("first", "")


def test_identifiers_are_never_rewritten(tmp_path: Path) -> None:
    workspace = make_workspace(
        tmp_path,
        events=[
            {
                "id": "ID-Mixed",
                "source": "AzUre",
                "type": "Login",
                "actor": "Baron",
                "timestamp": "2026-04-10T11:00:00+02:00",
            }
        ],
    )
    (view,) = call_both(workspace, OP, {"actor": "BARON"}).document["events"]
    assert {k: view[k] for k in ("id", "source", "type", "actor", "timestamp")} == {
        "id": "ID-Mixed",
        "source": "AzUre",
        "type": "Login",
        "actor": "Baron",
        "timestamp": "2026-04-10T09:00:00Z",
    }


_keys = st.sampled_from(
    ["ip", "IP", "Ip", "source-ip", "sourceIp", "SOURCE_IP", "source_ip", "metadata", "Metadata", "role", "Role", "x"]
)


@given(st.dictionaries(_keys, st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3)), max_size=8))
def test_the_keyed_view_agrees_with_casefold_lookup(obj: dict[str, Any]) -> None:
    keyed = views._Keyed(dict(sorted(obj.items())))
    for name in ("ip", "source_ip", "metadata", "role", "x", "absent"):
        want = lookup(dict(sorted(obj.items())), name)
        got = keyed.get(name)
        assert (got is views._ABSENT) == (want is MISSING)
        if want is not MISSING:
            assert got == want


# docs/investigate.md §8 id resolution through the ids filter.

RESOLUTION_STORES = {
    "cafe": ["cafe1234"],
    "three": ["cafe1111aaaa", "cafe2222bbbb", "feedaced1111"],
    "abc": ["abc", "abc-1-2-3"],
    "abc-only": ["abc"],
    "rungs": ["evt_ab12cd34ef56", "evt_ab12cd34ef56extra"],
    "extra": ["evt_ab12cd34ef56extra"],
    "eleven": [f"evt-{i:02d}" for i in range(11)],
}
LONG_FINDING = "finding-evt_ab12cd34ef56-inj-command-injection-chain"


@pytest.fixture(scope="module")
def resolution_workspaces(tmp_path_factory: pytest.TempPathFactory, store_backend: Any) -> dict[str, Path]:
    return {
        name: make_workspace(
            tmp_path_factory.mktemp(name), events=[{"id": i, "timestamp": "2026-04-10T09:00:00Z"} for i in ids]
        )
        for name, ids in RESOLUTION_STORES.items()
    }


@pytest.mark.parametrize(
    ("store", "requested", "resolved"),
    [
        *[("cafe", r, ["cafe1234"]) for r in ("cafe1234", "CAFE1234", "finding-cafe1234", "FINDING-CAFE1234", "cafe")],
        ("cafe", "caf", []),
        ("cafe", "zzzzzzzz", []),
        ("three", "feedac", ["feedaced1111"]),
        ("three", "cafe1111aaaa", ["cafe1111aaaa"]),
        ("abc", "abc-1-2-3", ["abc-1-2-3"]),
        ("abc", "abc", ["abc"]),
        ("abc-only", "abc-1-2-3", []),
        ("rungs", LONG_FINDING, ["evt_ab12cd34ef56"]),
        ("extra", LONG_FINDING, ["evt_ab12cd34ef56extra"]),
    ],
)
def test_id_resolution_table(
    resolution_workspaces: dict[str, Path], store: str, requested: str, resolved: list[str]
) -> None:
    answer = call_both(resolution_workspaces[store], OP, {"ids": [requested]})
    assert answer.exit_code == 0
    assert [event["id"] for event in answer.document["events"]] == resolved


@pytest.mark.parametrize(
    ("store", "requested", "message"),
    [
        (
            "three",
            "cafe",
            (
                'id "cafe" is ambiguous: prefix matches 2 stored ids: cafe1111aaaa, cafe2222bbbb. Supply a longer prefix or '
                "the exact id."
            ),
        ),
        (
            "eleven",
            "evt-",
            'id "evt-" is ambiguous: prefix matches 11 stored ids (showing first 10): '
            + ", ".join(f"evt-{i:02d}" for i in range(10))
            + ". Supply a longer prefix or the exact id.",
        ),
    ],
)
def test_an_ambiguous_prefix_fails_the_call(
    resolution_workspaces: dict[str, Path], store: str, requested: str, message: str
) -> None:
    answer = call_both(resolution_workspaces[store], OP, {"ids": ["e1", requested]})
    assert answer.exit_code == 2
    assert answer.text == dumps(error(OP, "invalid_input", message))


def test_description_tells_the_agent_how_to_search() -> None:
    text = listed_text("search_events")
    for phrase in (
        "oldest first by timestamp",
        "in the order they were ingested",
        "words lookup_rules uses",
        "ignoring case",
        "never a substring",
        "one axis per call",
        "usually actors",
        '"true", not true',
        "`event_ids`",
        "feed `ids`",
        '"default": 200',
        "1..2000",
        '"maxItems": 100',
        "RFC3339",
        "2026-04-10",
        "dropped",
        '"maxProperties": 64',
        '"maxLength": 1024',
        '"maxLength": 128',
        '"maxLength": 256',
        "invalid_input",
        "upstream_unavailable",
        "get_raw_event",
    ):
        assert phrase in text, phrase
