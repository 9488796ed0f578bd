"""`harness baseline build` over each format's ingested records, then what check_baseline answers about them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from adapter_samples import SAMPLES
from doors import call_both
from runners import run_cli
from test_adapter_ingest import ingest, pairs, write_native
from test_adapter_ingest import ws as ws  # the fixture

from harness.text.rfc3339 import parse_timestamp

# The login geos each format's samples give, as ISO 3166 alpha-2 codes (the records spell some as country names).
# CloudTrail, the Entra audit log, the Activity Log, Microsoft 365, Slack and Cloud Audit Logs record no login
# country, so their actors have no geos and a `source` never narrows them.
GEOS: dict[str, dict[str, list[str]]] = {
    "cloudtrail": {},
    "okta": {"jane@example.com": ["US"]},
    "github-audit": {"newdev": ["GB"]},
    "entra-signin": {
        "jane@contoso.com": ["DE", "US"],
        "bob@contoso.com": ["DE", "US"],
        "deploy-bot": ["US"],
        "11111111-aaaa-4000-8000-000000000001": ["US"],
    },
    "entra-audit": {},
    "azure-activity": {},
    "m365": {},
    "google-workspace": {"jane@example.com": ["BR", "US"], "carol@example.com": ["JP"]},
    "slack-audit": {},
    "gcp-audit": {},
    "ocsf": {"ana@example.com": ["FR"], "svc-backup": ["FR"], "alice": ["FR"], "jane@example.com": ["FR"]},
}
COUNTRY_NAMES = {"US": "United States", "DE": "Germany", "GB": "United Kingdom", "BR": "Brazil", "JP": "Japan",
                 "FR": "France"}

# The elevated role:grantee strings each format's grants give their actor; every other actor has none. The Activity
# Log names a role only by its definition GUID inside the request body, so its role assignments give no roles (the
# assignment is still a relationship).
ROLES: dict[str, dict[str, list[str]]] = {
    "cloudtrail": {
        "alice": ["administratoraccess:bob", "admins:bob", "inline-s3-write:bob"],
        "carol@example.com": ["poweruseraccess:ci-role"],
    },
    "okta": {"admin@example.com": ["super administrator:jane@example.com"]},
    "github-audit": {"octo-admin": ["admin:newdev", "admin:vendor-bob", "write:contoso", "write:vendor-bob"]},
    "entra-signin": {},
    "entra-audit": {
        "admin@contoso.com": ["global administrator:jane@contoso.com"],
        "MS-PIM": ["global administrator:jane@contoso.com"],
    },
    "azure-activity": {},
    "m365": {"admin@contoso.com": ["exchange administrator:jane@contoso.com"]},
    "google-workspace": {"admin@example.com": ["_seed_admin_role:bob@example.com"]},
    "slack-audit": {"grace@example.com": ["admin:bob@example.com", "owner:bob@example.com"]},
    "gcp-audit": {"ops@contoso.example": ["roles/owner:user:bob@contoso.example"]},
    "ocsf": {"root-admin@example.com": ["org admin:engineering", "super administrator:victor@example.com"]},
}


def expected_relationships(events: list[dict[str, Any]], entity: str) -> dict[str, dict[str, Any]]:
    """The actor:target entries naming `entity` on either side, counted from the expected events."""
    seen: dict[str, list[str]] = {}
    for event in events:
        actor, target = event["actor"], event["payload"]["target"]
        if actor and target.strip() and entity.lower() in (actor.lower(), target.lower()):
            seen.setdefault(f"{actor}:{target}", []).append(event["timestamp"])
    return {
        key: {
            "count": len(times),
            "first_seen": min(times, key=parse_timestamp),
            "last_seen": max(times, key=parse_timestamp),
        }
        for key, times in seen.items()
    }


def baseline_answer(ws: Path, entity: str, **extra: str) -> dict[str, Any]:
    answer = call_both(ws, "check_baseline", {"entity": entity, **extra})
    assert not answer.is_error, answer.text
    return answer.document


@pytest.mark.parametrize("name", list(SAMPLES))
def test_each_format_s_baseline_knows_its_actors_geos_relationships_and_roles(ws: Path, name: str) -> None:
    assert ingest(ws, "--format", name, str(write_native(name, ws.parent))).exit_code == 0
    built = run_cli(["--workspace", str(ws), "baseline", "build"])
    assert built.exit_code == 0, built.stdout
    assert built.stderr == ""  # every format names an actor for most events: no "no actor" warning
    events = [event for _, event in pairs(name)]
    assert built.json()["events_read"] == len(events)
    actors = sorted({event["actor"] for event in events if event["actor"]})
    assert set(GEOS[name]) | set(ROLES[name]) <= set(actors)
    for actor in actors:
        mine = [event for event in events if event["actor"].lower() == actor.lower()]
        answer = baseline_answer(ws, actor.upper())  # entities match ignoring case
        assert answer["known"] is True, (actor, answer)
        assert answer["last_seen"] == max((event["timestamp"] for event in mine), key=parse_timestamp)
        assert answer["frequency_by_type"] == dict(Counter(event["type"] for event in mine))
        assert answer["frequency"] == len(mine)
        assert answer["relationships"] == expected_relationships(events, actor), actor
        assert answer["roles"] == ROLES[name].get(actor, []), actor
        codes = GEOS[name].get(actor, [])
        elsewhere = baseline_answer(ws, actor, source="AQ")
        if not codes:
            assert elsewhere["known"] is True and elsewhere["notes"] == ""  # no geos: never narrowed
            continue
        assert elsewhere["known"] is False and f"({', '.join(codes)})" in elsewhere["notes"]
        for code in codes:
            for written in (code, code.lower(), COUNTRY_NAMES[code]):
                assert baseline_answer(ws, actor, source=written)["known"] is True, (actor, written)


def test_cloudtrail_baseline_knows_the_user_created_not_the_caller_s_principal_id(ws: Path) -> None:
    assert ingest(ws, "--format", "cloudtrail", str(write_native("cloudtrail", ws.parent))).exit_code == 0
    assert run_cli(["--workspace", str(ws), "baseline", "build"]).exit_code == 0
    assert baseline_answer(ws, "dave")["known"] is True  # CreateUser's requestParameters.userName
    caller = baseline_answer(ws, "AROAORGADMIN:carol@example.com")
    assert caller["known"] is False and caller["relationships"] == {}


def test_a_cloudtrail_actor_holding_colons_keeps_its_relationships(ws: Path) -> None:
    """A web-identity caller whose record lacks the optional `userName` is named by its principal id (issuer,
    application and user joined by colons), and the role it assumed is an ARN: both sides of the key hold colons."""
    principal = "accounts.google.com:1234567890-app.apps.googleusercontent.com:110987654321"
    role = "arn:aws:iam::111122223333:role/WebAppRole"
    record = {
        "eventVersion": "1.08",
        "userIdentity": {
            "type": "WebIdentityUser",
            "principalId": principal,
            "identityProvider": "accounts.google.com",
        },
        "eventTime": "2026-04-10T09:30:00Z",
        "eventSource": "sts.amazonaws.com",
        "eventName": "AssumeRoleWithWebIdentity",
        "awsRegion": "us-east-1",
        "sourceIPAddress": "198.51.100.30",
        "userAgent": "aws-sdk-js/2.1500.0",
        "requestParameters": {"roleArn": role, "roleSessionName": "web-session", "durationSeconds": 3600},
        "responseElements": {
            "assumedRoleUser": {"arn": "arn:aws:sts::111122223333:assumed-role/WebAppRole/web-session"}
        },
        "eventID": "5d0a1b2c-3e4f-4a5b-8c6d-7e8f9a0b1c2d",
        "eventType": "AwsApiCall",
        "recipientAccountId": "111122223333",
    }
    path = ws.parent / "web-identity.json"
    path.write_text(json.dumps({"Records": [record]}))
    assert ingest(ws, "--format", "cloudtrail", str(path)).exit_code == 0
    assert run_cli(["--workspace", str(ws), "baseline", "build"]).exit_code == 0
    seen = "2026-04-10T09:30:00Z"
    entry = {f"{principal}:{role}": {"count": 1, "first_seen": seen, "last_seen": seen}}
    mine = baseline_answer(ws, principal)
    assert mine["known"] is True and mine["relationships"] == entry
    assert mine["roles"] == []  # WebAppRole reads as no elevated role
    assert baseline_answer(ws, role)["relationships"] == entry
    assert baseline_answer(ws, "accounts.google.com")["relationships"] == {}
