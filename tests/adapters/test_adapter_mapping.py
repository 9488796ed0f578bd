"""Each format's table and code map real-shaped vendor records onto the event model, field by field."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import cloudtrail_samples
import entra_signin_samples
import m365_samples
import ocsf_samples
import pytest
from adapter_samples import SAMPLES

from harness.adapters import ADAPTERS, EVENT_TYPES, AdapterError, choose
from harness.adapters.timestamps import event_time
from harness.store.models import decode_event
from harness.text.geo import country_code

# Each case as (record, its events): a format that fans out lists several events per record.
CASES = [
    (name, index, rec, evs if isinstance(evs, list) else [evs])
    for name, cases in SAMPLES.items()
    for index, (rec, evs) in enumerate(cases)
]


SIGN_IN_ONLY = {"entra-signin"}  # a sign-in log holds sign-ins only; the other kinds are in its audit log
AUDIT_ONLY = {"entra-audit"}  # and the audit log holds no sign-ins
RESOURCE_ONLY = {"azure-activity"}  # control-plane calls on resources: no sign-ins, users or memberships


def test_every_format_has_at_least_30_samples_covering_the_issue_s_kinds() -> None:
    for name in SAMPLES:
        cases = [(rec, evs) for fmt, _, rec, evs in CASES if fmt == name]
        assert len(cases) >= 30, name
        kinds = {ev["type"] for _, evs in cases for ev in evs}
        assert any(ev["id"].endswith("-sha256-") for _, evs in cases for ev in evs), "a record without a vendor id"
        if name in SIGN_IN_ONLY:
            assert kinds == {"login", "login_failure"}, name
            continue
        if name in RESOURCE_ONLY:
            assert {"role_assignment", "role_removal", "permission_change", "api_call", "config_change"} <= kinds
            continue
        required = {"login", "login_failure", "user_created", "api_call" if name in ("cloudtrail", "gcp-audit") else "other"}
        assert required - ({"login", "login_failure"} if name in AUDIT_ONLY else set()) <= kinds
        assert kinds & {"member_added", "collaborator_added"} and kinds & {"role_assignment", "permission_change"}


@pytest.mark.parametrize(("name", "index", "record", "expected"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_each_record_maps_every_field(
    name: str, index: int, record: dict[str, Any], expected: list[dict[str, Any]]
) -> None:
    original = copy.deepcopy(record)
    events = ADAPTERS[name].events(record)
    assert record == original  # the adapter never mutates its input
    assert len(events) == len(expected)
    again = ADAPTERS[name].events(copy.deepcopy(original))
    for event, want, repeat in zip(events, expected, again, strict=True):
        raw = event["payload"].pop("raw")
        assert raw == original
        if want["id"].endswith("-sha256-"):
            assert re.fullmatch(re.escape(want["id"]) + "[0-9a-f]{32}", event["id"])
            assert repeat["id"] == event["id"]  # a content hash, not random
            want = {**want, "id": event["id"]}
        assert event == want
        assert event["type"] in EVENT_TYPES
        stored = decode_event({**event, "payload": {**event["payload"], "raw": raw}})  # the store accepts it as is
        assert stored["payload"]["raw"] == original
    assert len({event["id"] for event in events}) == len(events)  # fanned-out events never share an id


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
        choose({"time": "2026-04-10T09:00:00Z", "category": "AppServiceHTTPLogs"})
    assert str(caught.value) == (
        "no format recognizes this input (tried cloudtrail, okta, github-audit, entra-signin, entra-audit, "
        "azure-activity, m365, google-workspace, slack-audit, gcp-audit, ocsf, harness)"
    )


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
        ("google-workspace", lambda r: r.update(actor={"callerType": "USER"}), 'field "actor.email": is required'),
        ("google-workspace", lambda r: r["events"].append({"type": "x"}), 'field "events.1.name": is required'),
        ("google-workspace", lambda r: r.update(events=[]), 'field "events": expected a non-empty array'),
        ("google-workspace", lambda r: r["id"].pop("time"), 'field "id.time": is required'),
        ("slack-audit", lambda r: r.update(actor={"type": "user", "user": {}}), 'field "actor.user": is required'),
        ("slack-audit", lambda r: r.update(date_create="yesterday"), 'field "date_create": expected an RFC 3339'),
        ("gcp-audit", lambda r: [r.pop("timestamp"), r.pop("receiveTimestamp")], 'field "timestamp": is required'),
        ("ocsf", lambda r: r.pop("time"), 'field "time": is required'),
        ("ocsf", lambda r: r["metadata"].update(uid="two words"), 'field "metadata.uid": is not usable as an event id'),
        (
            "entra-signin",
            lambda r: [r.pop(k) for k in ("userPrincipalName", "userId")],
            'field "userPrincipalName": is required',
        ),
        ("entra-signin", lambda r: r.pop("createdDateTime"), 'field "createdDateTime": is required'),
        ("entra-signin", lambda r: r.update(id=7.5), 'field "id": expected a string, got a number'),
        (
            "entra-audit",
            lambda r: r.update(initiatedBy={"user": None, "app": None}),
            'field "initiatedBy": is required',
        ),
        ("entra-audit", lambda r: r.pop("activityDateTime"), 'field "activityDateTime": is required'),
        ("azure-activity", lambda r: r.pop("eventTimestamp"), 'field "eventTimestamp": is required'),
        ("m365", lambda r: r.pop("UserId"), 'field "UserId": is required'),
        ("m365", lambda r: r.update(CreationTime="10/04/2026 09:01"), 'field "CreationTime": expected an RFC 3339'),
        ("azure-activity", lambda r: r.update(eventDataId="a b"), 'field "eventDataId": is not usable as an event id'),
    ],
)
def test_unmappable_records_name_the_vendor_field(name: str, mutate: Any, message: str) -> None:
    record = copy.deepcopy(SAMPLES[name][0][0])
    mutate(record)
    with pytest.raises(AdapterError) as caught:
        ADAPTERS[name].events(record)
    assert str(caught.value).startswith(message)


def test_entra_sign_in_is_the_same_event_from_graph_and_from_its_diagnostic_envelope() -> None:
    graph = entra_signin_samples.CASES[1][0]
    blob = {"records": [entra_signin_samples.envelope(2, graph)]}
    assert choose(blob) == choose(graph) == "entra-signin"
    ((suffix, wrapped),) = ADAPTERS["entra-signin"].records(blob)
    bare, enveloped = ADAPTERS["entra-signin"].to_event(graph), ADAPTERS["entra-signin"].to_event(wrapped)
    assert suffix == "[0]"
    keys = ("id", "timestamp", "type", "actor")
    assert [bare[k] for k in keys] == [enveloped[k] for k in keys] == [
        "entra-signin-66ea54eb-6301-4ee5-be62-ff5a759b0002",
        "2026-04-10T09:02:00Z",
        "login_failure",
        "jane@contoso.com",
    ]
    assert enveloped["payload"]["metadata"]["error_code"] == "50126"


def test_m365_audit_search_items_map_their_embedded_record() -> None:
    rec, expected = m365_samples.CASES[1]
    item = {
        "RecordType": "AzureActiveDirectoryStsLogon",
        "CreationDate": "2026-04-10T09:02:00",
        "UserIds": rec["UserId"],
        "Operations": rec["Operation"],
        "AuditData": json.dumps(rec),
        "ResultIndex": 1,
        "ResultCount": 1,
        "Identity": rec["Id"],
    }
    assert choose([item]) == "m365"
    event = ADAPTERS["m365"].to_event(item)
    assert event["payload"]["raw"] == rec
    assert (event["id"], event["type"], event["actor"]) == (expected["id"], "login_failure", "jane@contoso.com")
    with pytest.raises(AdapterError, match='^field "AuditData": is not JSON'):
        ADAPTERS["m365"].to_event({**item, "AuditData": "{not json"})


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


def test_ocsf_source_follows_the_vendor_and_falls_back_to_ocsf() -> None:
    record = copy.deepcopy(ocsf_samples.CASES[0][0])
    sources = {}
    for vendor, product in [
        ("Microsoft", "Microsoft 365"),
        ("Microsoft", "Defender"),
        ("GitHub", "Audit Log"),
        ("Slack", "Audit Logs"),
        ("Palo Alto Networks", "Cortex"),
    ]:
        record["metadata"]["product"] = {"vendor_name": vendor, "name": product}
        sources[(vendor, product)] = ADAPTERS["ocsf"].to_event(record)["source"]
    assert list(sources.values()) == ["m365", "ocsf", "github", "slack", "ocsf"]
    assert ADAPTERS["ocsf"].to_event(record)["id"].startswith("ocsf-")
