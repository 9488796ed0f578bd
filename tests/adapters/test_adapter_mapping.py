"""Each format's table and code map real-shaped vendor records onto the event model, field by field."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import cloudtrail_samples
import github_samples
import okta_samples
import pytest

from harness.adapters import ADAPTERS, EVENT_TYPES, AdapterError, choose
from harness.text.geo import country_code
from harness.adapters.timestamps import event_time
from harness.store.models import decode_event

SAMPLES = {"cloudtrail": cloudtrail_samples.CASES, "okta": okta_samples.CASES, "github-audit": github_samples.CASES}
CASES = [(name, index, rec, ev) for name, cases in SAMPLES.items() for index, (rec, ev) in enumerate(cases)]


def test_every_format_has_at_least_30_samples_covering_the_issue_s_kinds() -> None:
    for name, cases in SAMPLES.items():
        assert len(cases) >= 30, name
        kinds = {ev["type"] for _, ev in cases}
        assert {"login", "login_failure", "user_created", "api_call" if name == "cloudtrail" else "other"} <= kinds
        assert kinds & {"member_added", "collaborator_added"} and kinds & {"role_assignment", "permission_change"}
        assert any(ev["id"].endswith("-sha256-") for _, ev in cases), "a record without a vendor id"


@pytest.mark.parametrize(("name", "index", "record", "expected"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_each_record_maps_every_field(name: str, index: int, record: dict[str, Any], expected: dict[str, Any]) -> None:
    original = copy.deepcopy(record)
    event = ADAPTERS[name].to_event(record)
    assert record == original  # the adapter never mutates its input
    raw = event["payload"].pop("raw")
    assert raw == original
    if expected["id"].endswith("-sha256-"):
        assert re.fullmatch(re.escape(expected["id"]) + "[0-9a-f]{32}", event["id"])
        assert ADAPTERS[name].to_event(copy.deepcopy(original))["id"] == event["id"]  # a content hash, not random
        expected = {**expected, "id": event["id"]}
    assert event == expected
    assert event["type"] in EVENT_TYPES
    stored = decode_event({**event, "payload": {**event["payload"], "raw": raw}})  # the store accepts it as is
    assert stored["payload"]["raw"] == original


@pytest.mark.parametrize("name", list(SAMPLES))
def test_auto_detection_recognizes_each_format_alone(name: str) -> None:
    records = [rec for rec, _ in SAMPLES[name]]
    assert choose(records) == name
    assert all(choose(rec) == name for rec in records)


def test_auto_detection_of_envelopes_and_of_the_harness_shape() -> None:
    ct = [rec for rec, _ in cloudtrail_samples.CASES]
    assert choose({"Records": ct}) == "cloudtrail"
    assert choose({"Events": [{"EventId": "x", "CloudTrailEvent": json.dumps(ct[0])}]}) == "cloudtrail"
    assert choose({"QueryResultRows": [[{"eventID": "x"}]], "QueryStatus": "FINISHED"}) == "cloudtrail"
    assert choose({"id": "e1", "Timestamp": "2026-04-10T09:00:00Z"}) == "harness"
    assert choose({"events": [{"id": "e1", "timestamp": "2026-04-10T09:00:00Z"}]}) == "harness"
    with pytest.raises(AdapterError) as caught:
        choose({"time": "2026-04-10T09:00:00Z", "category": "SignInLogs"})
    assert str(caught.value) == "no format recognizes this input (tried cloudtrail, okta, github-audit, harness)"


def test_lookup_events_items_map_their_embedded_record() -> None:
    rec, expected = cloudtrail_samples.CASES[0]
    item = {
        "EventId": rec["eventID"],
        "EventName": "ConsoleLogin",
        "ReadOnly": "false",
        "EventTime": 1775811660.0,
        "EventSource": "signin.amazonaws.com",
        "Username": "alice",
        "Resources": [],
        "CloudTrailEvent": json.dumps(rec),
    }
    event = ADAPTERS["cloudtrail"].to_event(item)
    assert event["payload"]["raw"] == rec
    assert event["id"] == expected["id"] and event["type"] == "login" and event["actor"] == "alice"
    with pytest.raises(AdapterError, match='^field "CloudTrailEvent": is not JSON'):
        ADAPTERS["cloudtrail"].to_event({**item, "CloudTrailEvent": "{not json"})


def test_lake_rows_with_rendered_nested_columns() -> None:
    row = [
        {"eventID": "9a1b-lake"},
        {"eventTime": "2026-04-10 09:00:00.000"},
        {"eventName": "AttachUserPolicy"},
        {"eventSource": "iam.amazonaws.com"},
        {"eventType": "AwsApiCall"},
        {"recipientAccountId": "111122223333"},
        {"sourceIPAddress": "203.0.113.10"},
        {
            "userIdentity": "{type=AssumedRole, principalid=AROAX:carol, arn=arn:aws:sts::111122223333:assumed-role/"
            "OrgAdmin/carol, accountid=111122223333, sessioncontext={sessionissuer={type=Role, "
            "username=OrgAdmin}, attributes={mfaauthenticated=true}}, invokedby=null}"
        },
        {"requestParameters": "{userName=bob, policyArn=arn:aws:iam::aws:policy/AdministratorAccess}"},
    ]
    event = ADAPTERS["cloudtrail"].to_event(row)
    assert (event["id"], event["timestamp"], event["type"], event["actor"]) == (
        "cloudtrail-9a1b-lake",
        "2026-04-10T09:00:00Z",
        "permission_change",
        "carol",
    )
    assert event["payload"]["target"] == "bob"
    assert event["payload"]["metadata"]["role"] == "AdministratorAccess"
    assert event["payload"]["metadata"]["actor_role"] == "OrgAdmin"
    assert event["payload"]["raw"]["userIdentity"]["sessioncontext"]["sessionissuer"]["username"] == "OrgAdmin"


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("2026-04-10T09:00:00Z", "2026-04-10T09:00:00Z"),
        ("2026-04-10T11:00:00.123456789+02:00", "2026-04-10T09:00:00.123456Z"),
        ("2026-04-10T09:00:00", "2026-04-10T09:00:00Z"),
        ("2026-04-10 09:00:00.000", "2026-04-10T09:00:00Z"),
        ("2026-04-10 09:00:00+01:00", "2026-04-10T08:00:00Z"),
        (1775811600, "2026-04-10T09:00:00Z"),
        (1775811600000, "2026-04-10T09:00:00Z"),
        (1775811600.5, "2026-04-10T09:00:00.5Z"),
        ("1775811600123", "2026-04-10T09:00:00.123Z"),
    ],
)
def test_vendor_times(value: Any, stored: str) -> None:
    assert event_time(value, "t") == stored


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, 'field "t": is required'),
        (True, 'field "t": expected an RFC 3339 time'),
        (
            "yesterday",
            'field "t": expected an RFC 3339 time, a UTC time without offset, or epoch seconds or '
            'milliseconds, got "yesterday"',
        ),
        ("2026-02-30T00:00:00Z", 'field "t": expected'),
        (10**17, 'field "t": epoch time 100000000000000000 is outside years 0001..9999'),
    ],
)
def test_unreadable_vendor_times_name_the_field(value: Any, message: str) -> None:
    with pytest.raises(AdapterError) as caught:
        event_time(value, "t")
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("name", "mutate", "message"),
    [
        ("cloudtrail", lambda r: r.pop("eventTime"), 'field "eventTime": is required'),
        ("cloudtrail", lambda r: r.pop("userIdentity"), 'field "userIdentity": expected an object, got null'),
        (
            "cloudtrail",
            lambda r: r.update(userIdentity={"type": "IAMUser"}),
            'field "userIdentity": has no user name, session, principal id or invoking service',
        ),
        ("cloudtrail", lambda r: r.update(eventID="has space"), 'field "eventID": is not usable as an event id'),
        ("okta", lambda r: r.update(actor={"type": "User"}), 'field "actor.alternateId": is required'),
        ("okta", lambda r: r.update(published="10/04/2026"), 'field "published": expected an RFC 3339 time'),
        ("github-audit", lambda r: [r.pop("@timestamp"), r.pop("created_at")], 'field "@timestamp": is required'),
    ],
)
def test_unmappable_records_name_the_vendor_field(name: str, mutate: Any, message: str) -> None:
    record = copy.deepcopy(SAMPLES[name][0][0])
    mutate(record)
    with pytest.raises(AdapterError) as caught:
        ADAPTERS[name].to_event(record)
    assert str(caught.value).startswith(message)


def test_country_codes_from_names_and_codes() -> None:
    assert [country_code(v) for v in ("United States", "US", "us", "USA", "Russia", "Germany", "Atlantis", "")] == [
        "US",
        "US",
        "US",
        "US",
        "RU",
        "DE",
        "",
        "",
    ]


def test_every_table_names_only_vocabulary_types() -> None:
    for fmt in ADAPTERS.values():
        assert set(fmt.table.types.values()) | set(fmt.table.fallback_types.values()) <= set(EVENT_TYPES)
        assert fmt.table.format == fmt.name and fmt.table.source == fmt.source


def test_auto_refuses_a_document_two_formats_claim() -> None:
    both = {
        "published": "2026-04-10T09:00:00Z",
        "eventType": "x",
        "actor": {"id": "1"},
        "action": "x",
        "created_at": 1775811600000,
    }
    with pytest.raises(AdapterError) as caught:
        choose(both)
    assert str(caught.value) == "several formats recognize this input (okta, github-audit); name one with --format"
