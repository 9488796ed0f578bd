"""check_baseline (docs/investigate.md §9.3): every vector over baseline B, through the CLI and the MCP client,
with B stored as the last baseline record and given as a --baseline file."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from doors import Answer, as_flags
from listing import listed_text
from mcp import Client
from store_backends import git_only

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.mcp_server import build_server
from harness.surface import OPERATIONS
from harness.text import canonjson
from tests.investigate.baseline_support import (  # noqa: F401 - fixtures
    BASELINE_B,
    clean_env_fixture,
    store_baseline,
    workspace_fixture,
    write_baseline_file,
)

NO_BASELINE = (
    "no baseline is available (no baseline record in the store and no --baseline file); every entity reads as unknown"
)

# Every test runs on the git store and on PostgreSQL (tests/store_backends.py).
pytestmark = pytest.mark.usefixtures("store_backend")
ABSENT = "entity not found in the baseline"

DEPLOY_SVC_RELATIONSHIPS = {
    "admin-user:deploy-svc": {"count": 2, "first_seen": "", "last_seen": ""},
    "deploy-svc:arn:aws:s3:::logs": {"count": 4, "first_seen": "2026-03-01", "last_seen": "2026-04-01"},
}


def answer(**fields: Any) -> dict[str, Any]:
    """The full output object: every key present, the given ones overriding the empty defaults."""
    out: dict[str, Any] = {
        "known": False,
        "last_seen": "",
        "frequency": 0,
        "frequency_by_type": {},
        "frequency_for_type": 0,
        "event_type": "",
        "roles": [],
        "relationships": {},
        "notes": "",
    }
    out.update(fields)
    return out


DEPLOY_SVC = answer(
    known=True,
    frequency=45,
    frequency_by_type={"container_restart": 40, "image_push": 5},
    roles=["deployer", "restarter"],
    relationships=DEPLOY_SVC_RELATIONSHIPS,
)
BARON = answer(known=True, last_seen="2026-04-09T12:00:00Z")

VECTORS: list[tuple[dict[str, str], dict[str, Any]]] = [
    (
        {"entity": "deploy-svc", "event_type": "container_restart"},
        {**DEPLOY_SVC, "frequency_for_type": 40, "event_type": "container_restart"},
    ),
    (
        {"entity": "DEPLOY-SVC", "event_type": "CONTAINER_RESTART"},
        {**DEPLOY_SVC, "frequency_for_type": 40, "event_type": "CONTAINER_RESTART"},
    ),
    ({"entity": "baron"}, BARON),
    ({"entity": "baron", "source": "gb"}, BARON),
    (
        {"entity": "ci-bot", "source": "FR"},
        answer(
            last_seen="2026-04-10T00:00:00Z",
            notes='entity is in the baseline but source "FR" is not one of its known geos (US), so known is false',
        ),
    ),
    ({"entity": "quiet-user", "source": "FR"}, answer(known=True)),
    ({"entity": "deploy-svc", "source": "azure"}, DEPLOY_SVC),
    ({"entity": "mallory"}, answer(notes=ABSENT)),
]


def expected_text(document: dict[str, Any]) -> str:
    return canonjson.dumps(document)


@pytest.fixture(params=["stored", "file"])
def with_b(request: pytest.FixtureRequest, workspace: Path, tmp_path: Path) -> Callable[..., Answer]:
    """A caller of check_baseline over B, B being the last stored record or a --baseline file."""
    baseline_file = None
    if request.param == "stored":
        store_baseline(workspace, BASELINE_B)
    else:
        baseline_file = write_baseline_file(tmp_path / "b.json", BASELINE_B)

    def call(door: Callable[..., Answer], arguments: dict[str, Any]) -> Answer:
        return door(workspace, "check_baseline", arguments, baseline=baseline_file, encode=as_flags)

    return call


@pytest.mark.parametrize(("arguments", "expected"), VECTORS, ids=[str(a) for a, _ in VECTORS])
def test_vectors_over_baseline_b(
    with_b: Callable[..., Answer], door: Callable[..., Answer], arguments: dict[str, str], expected: dict[str, Any]
) -> None:
    result = with_b(door, arguments)
    assert not result.is_error
    assert result.text == expected_text(expected)
    assert result.exit_code in (0, None)


@pytest.mark.parametrize("entity", ["deploy-svc", "baron", "mallory"])
def test_without_any_baseline_every_entity_is_unknown(
    workspace: Path, door: Callable[..., Answer], entity: str
) -> None:
    result = door(workspace, "check_baseline", {"entity": entity, "event_type": "push"}, encode=as_flags)
    assert result.text == expected_text(answer(event_type="push", notes=NO_BASELINE))


def test_an_initialized_store_without_a_baseline_record_reads_as_no_baseline(
    workspace: Path, door: Callable[..., Answer]
) -> None:
    from store_backends import workspace_store

    store = workspace_store(workspace)
    store.append_batch("events", [{"id": "e1", "actor": "baron", "timestamp": "2026-04-10T09:00:00Z"}])
    store.close()
    assert door(workspace, "check_baseline", {"entity": "baron"}, encode=as_flags).document["notes"] == NO_BASELINE


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"entity": ""}, "entity: must not be empty"),
        (
            {"entity": "deploy-svc", "eventType": "push"},
            ("eventType: unknown field; the accepted fields are entity, source, event_type"),
        ),
        ({}, "entity: is required"),
        ({"entity": "x" * 257}, "entity: must be at most 256 bytes (UTF-8), got 257"),
        ({"entity": "x", "source": "é" * 129}, "source: must be at most 256 bytes (UTF-8), got 258"),
    ],
)
def test_bad_arguments_are_invalid_input(
    with_b: Callable[..., Answer], door: Callable[..., Answer], arguments: dict[str, Any], message: str
) -> None:
    result = with_b(door, arguments)
    assert result.is_error
    assert result.document == {"error": {"code": "invalid_input", "message": message, "operation": "check_baseline"}}
    assert result.exit_code in (2, None)


def test_an_unreadable_store_is_upstream_unavailable(workspace: Path, door: Callable[..., Answer]) -> None:
    git_only("a store directory that is not a git repository")
    (workspace / "store").mkdir()
    (workspace / "store" / "stray.txt").write_text("not a repository")
    result = door(workspace, "check_baseline", {"entity": "baron"}, encode=as_flags)
    assert result.document == {
        "error": {
            "code": "upstream_unavailable",
            "message": "store unavailable: not a git repository",
            "operation": "check_baseline",
        }
    }
    assert result.exit_code in (3, None)


def _over(baseline: dict[str, Any], tmp_path: Path, door: Callable[..., Answer], **arguments: str) -> dict[str, Any]:
    workspace = tmp_path / "ws2"
    workspace.mkdir(exist_ok=True)
    path = write_baseline_file(tmp_path / "other.json", baseline)
    result = door(workspace, "check_baseline", arguments, baseline=path, encode=as_flags)
    assert not result.is_error, result.text
    return result.document


def test_profiles_differing_in_case_are_merged(tmp_path: Path, door: Callable[..., Answer]) -> None:
    baseline = {
        "known_users": {
            "Baron": {"known_geos": ["DE"], "last_seen": "2026-04-11T08:00:00+02:00"},
            "baron": {"known_geos": ["US"], "last_seen": "2026-04-10T09:00:00Z"},
        }
    }
    assert _over(baseline, tmp_path, door, entity="BARON", source="de") == answer(
        known=True, last_seen="2026-04-11T06:00:00Z"
    )
    narrowed = _over(baseline, tmp_path, door, entity="baron", source="FR")
    assert narrowed["notes"] == (
        'entity is in the baseline but source "FR" is not one of its known geos (DE, US), so known is false'
    )


def test_a_known_actor_without_a_profile_is_never_narrowed(tmp_path: Path, door: Callable[..., Answer]) -> None:
    baseline = {"known_actors": ["svc"], "known_users": {"svc2": {"known_geos": ["US"]}}}
    assert _over(baseline, tmp_path, door, entity="SVC", source="FR") == answer(known=True)


def test_a_profile_alone_makes_an_entity_known(tmp_path: Path, door: Callable[..., Answer]) -> None:
    baseline = {"known_users": {"solo": {"known_ips": ["198.51.100.1"]}}}
    assert _over(baseline, tmp_path, door, entity="Solo", source="US") == answer(known=True)


def test_frequency_keys_are_parsed_on_colons_and_whole_values(tmp_path: Path, door: Callable[..., Answer]) -> None:
    arn = "arn:aws:iam::123456789012:role/Deployer"
    baseline = {
        "known_actors": [arn],
        "frequency_tables": {
            f"aws:assume_role:{arn}": 3,
            f"aws:AssumeRole:{arn.upper()}": 2,
            f"TIME:02:{arn}": 50,
            f"aws:assume_role:{arn}:extra": 7,
            f"aws:assume_role:{arn[:-1]}": 11,
            "aws:assume_role": 1,
        },
    }
    assert _over(baseline, tmp_path, door, entity=arn, event_type="ASSUME_ROLE") == answer(
        known=True,
        frequency=5,
        frequency_by_type={"AssumeRole": 2, "assume_role": 3},
        frequency_for_type=3,
        event_type="ASSUME_ROLE",
    )


def test_relationship_keys_match_on_either_side_of_the_first_colon(tmp_path: Path, door: Callable[..., Answer]) -> None:
    baseline = {
        "relationships": {
            "svc": {"count": 1},
            "SVC:bucket": {"count": 2},
            "admin:svc": {"count": 3},
            "admin:svc:extra": {"count": 4},
            "svc-2:x": {"count": 5},
        }
    }
    document = _over(baseline, tmp_path, door, entity="svc")
    assert sorted(document["relationships"]) == ["SVC:bucket", "admin:svc", "svc"]
    assert document["notes"] == ABSENT


def test_relationship_keys_split_after_a_known_actor_holding_colons(tmp_path: Path, door: Callable[..., Answer]) -> None:
    workforce = "principal://iam.googleapis.com/locations/global/workforcePools/p/subject/s"
    baseline = {
        "known_actors": [workforce, "alice"],
        "relationships": {
            f"{workforce}:projects/_/buckets/exports": {"count": 1},
            "alice:arn:aws:iam::111122223333:role/OrgAdmin": {"count": 2},
        },
    }
    mine = _over(baseline, tmp_path, door, entity=workforce.upper())
    assert list(mine["relationships"]) == [f"{workforce}:projects/_/buckets/exports"]
    role = _over(baseline, tmp_path, door, entity="arn:aws:iam::111122223333:role/OrgAdmin")
    assert list(role["relationships"]) == ["alice:arn:aws:iam::111122223333:role/OrgAdmin"]
    assert _over(baseline, tmp_path, door, entity="principal")["relationships"] == {}
    assert _over(baseline, tmp_path, door, entity="role/OrgAdmin")["relationships"] == {}


def test_roles_are_the_union_of_case_variant_keys(tmp_path: Path, door: Callable[..., Answer]) -> None:
    baseline = {
        "known_actors": ["ops"],
        "actor_roles": {"ops": ["owner:repo", "admin:"], "OPS": ["owner:repo", "write:x"], "ops2": ["z"]},
    }
    assert _over(baseline, tmp_path, door, entity="ops")["roles"] == ["admin:", "owner:repo", "write:x"]


def test_caps_keep_the_first_entries_and_say_so(tmp_path: Path, door: Callable[..., Answer]) -> None:
    baseline = {
        "known_actors": ["busy"],
        "frequency_tables": {f"src:type{n:03d}:busy": 1 for n in range(503)},
        "actor_roles": {"busy": [f"role{n:03d}:t" for n in range(201)]},
        "relationships": {f"busy:target{n:03d}": {"count": 1} for n in range(502)},
    }
    document = _over(baseline, tmp_path, door, entity="busy", event_type="TYPE502")
    assert document["frequency"] == 503
    assert list(document["frequency_by_type"]) == [f"type{n:03d}" for n in range(500)]
    assert document["frequency_for_type"] == 1
    assert document["roles"] == [f"role{n:03d}:t" for n in range(200)]
    assert list(document["relationships"]) == [f"busy:target{n:03d}" for n in range(500)]
    assert document["notes"] == (
        "frequency_by_type truncated to the first 500 of 503 entries "
        "roles truncated to the first 200 of 201 entries "
        "relationships truncated to the first 500 of 502 entries"
    )


def test_at_the_caps_nothing_is_truncated(tmp_path: Path, door: Callable[..., Answer]) -> None:
    baseline = {
        "known_actors": ["busy"],
        "frequency_tables": {f"src:type{n:03d}:busy": 1 for n in range(500)},
        "actor_roles": {"busy": [f"role{n:03d}:t" for n in range(200)]},
        "relationships": {f"busy:target{n:03d}": {"count": 1} for n in range(500)},
    }
    document = _over(baseline, tmp_path, door, entity="busy")
    assert (len(document["frequency_by_type"]), len(document["roles"]), len(document["relationships"])) == (
        500,
        200,
        500,
    )
    assert document["notes"] == ""


def test_the_newest_stored_baseline_record_is_the_one_read(workspace: Path, door: Callable[..., Answer]) -> None:
    store_baseline(workspace, BASELINE_B)
    newer = copy.deepcopy(BASELINE_B)
    newer["known_actors"] = ["mallory"]
    newer["known_users"] = {}
    store_baseline(workspace, newer)
    assert door(workspace, "check_baseline", {"entity": "mallory"}, encode=as_flags).document["known"] is True
    assert door(workspace, "check_baseline", {"entity": "baron"}, encode=as_flags).document["notes"] == ABSENT


def test_the_description_says_what_the_spec_asks() -> None:
    text = listed_text("check_baseline")
    for phrase in (
        "whole-value match ignoring case",
        "nothing matches by substring",
        "slug-like names such as deploy-svc are usually actors",
        "One entity per call",
        "not an event source",
        '"default": ""',
        "--baseline file",
        "at most 500 types",
        "sorted; at most 200",
        "by key; at most 500",
        "invalid_input",
        "upstream_unavailable",
    ):
        assert phrase in text, phrase


def test_one_server_answers_from_a_newly_appended_baseline_record(workspace: Path) -> None:
    store_baseline(workspace, BASELINE_B)
    context = build_context(load_settings(Overrides(workspace=workspace)))

    async def calls() -> list[str]:
        async with Client(build_server(OPERATIONS, context)) as client:
            before = await client.call_tool("check_baseline", {"entity": "mallory"})
            store_baseline(workspace, {"known_actors": ["Mallory"]})
            after = await client.call_tool("check_baseline", {"entity": "mallory"})
            return [before.content[0].text, after.content[0].text]

    try:
        before, after = anyio.run(calls)
    finally:
        context.close()
    assert before == expected_text(answer(notes=ABSENT))
    assert after == expected_text(answer(known=True))


def test_geos_compare_as_codes_whatever_either_side_wrote(tmp_path: Path, door: Callable[..., Answer]) -> None:
    baseline = {"known_users": {"baron": {"known_geos": ["United States"]}}}
    for written in ("US", "us", "United States", "USA"):
        assert _over(baseline, tmp_path, door, entity="baron", source=written)["known"] is True
    narrowed = _over(baseline, tmp_path, door, entity="baron", source="Germany")
    assert narrowed["known"] is False


def test_a_built_baseline_answers_with_codes_relationships_and_any_activity(
    tmp_path: Path, door: Callable[..., Answer]
) -> None:
    from runners import run_cli

    from tests.investigate.ops_support import make_workspace

    def login(i: int, hour: int, geo: str) -> dict[str, Any]:
        return {"id": f"ok-{i}", "timestamp": f"2026-04-10T{hour:02d}:00:00Z", "source": "okta", "type": "login",
                "actor": "jane@example.com", "payload": {"target": "Okta Dashboard", "metadata": {"geo": geo}}}

    events = [login(1, 8, "United States"), login(2, 9, "us"), login(3, 10, "US"),
              {"id": "gh-1", "timestamp": "2026-04-10T15:00:00Z", "source": "github", "type": "push",
               "actor": "jane@example.com", "payload": {"target": "contoso/api"}}]
    workspace = make_workspace(tmp_path, events=events)
    built = run_cli(["--workspace", str(workspace), "baseline", "build"])
    assert built.exit_code == 0 and "warning" not in built.stderr
    answer = door(
        workspace, "check_baseline", {"entity": "JANE@example.com", "source": "United States"}, encode=as_flags
    )
    assert answer.document["known"] is True
    assert answer.document["last_seen"] == "2026-04-10T15:00:00Z"
    assert answer.document["relationships"] == {
        "jane@example.com:Okta Dashboard": {"count": 3, "first_seen": "2026-04-10T08:00:00Z",
                                            "last_seen": "2026-04-10T10:00:00Z"},
        "jane@example.com:contoso/api": {"count": 1, "first_seen": "2026-04-10T15:00:00Z",
                                         "last_seen": "2026-04-10T15:00:00Z"},
    }
    with_fr = door(workspace, "check_baseline", {"entity": "jane@example.com", "source": "fr"}, encode=as_flags).document
    assert with_fr["known"] is False and "(US)" in with_fr["notes"]


def test_baseline_build_warns_when_most_events_have_no_actor(tmp_path: Path) -> None:
    from runners import run_cli

    from tests.investigate.ops_support import make_workspace

    events = [{"id": f"e-{i}", "timestamp": "2026-04-10T08:00:00Z", "source": "aws", "type": "x"} for i in range(3)]
    workspace = make_workspace(tmp_path, events=events)
    built = run_cli(["--workspace", str(workspace), "baseline", "build"])
    assert built.exit_code == 0
    assert "warning: 3 of 3 events have no actor" in built.stderr
