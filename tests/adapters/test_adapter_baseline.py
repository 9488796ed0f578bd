"""`harness baseline build` over each format's ingested records, then what check_baseline answers about them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from adapter_samples import SAMPLES
from runners import run_cli
from test_adapter_ingest import ingest, pairs, write_native
from test_adapter_ingest import ws as ws  # the fixture

from harness.text.rfc3339 import parse_timestamp
from tests.investigate.ops_support import call

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
        key: {"count": len(times), "first_seen": min(times, key=parse_timestamp), "last_seen": max(times, key=parse_timestamp)}
        for key, times in seen.items()
    }


def baseline_answer(ws: Path, entity: str, **extra: str) -> dict[str, Any]:
    answer = call(ws, "check_baseline", {"entity": entity, **extra})
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
