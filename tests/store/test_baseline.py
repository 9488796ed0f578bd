"""Baselines (docs/investigate.md §6): build rules, merge, append, and `--baseline` file loading."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from store_support import check_invariants, event, git

from harness.errors import InvalidInput
from harness.store import Store, build_baseline, load_baseline_file
from harness.store.baseline import build, merge
from harness.store.baseline_model import decode_baseline


def _ev(actor: str, type_: str, hour: int = 9, source: str = "azure", **payload: Any) -> dict[str, Any]:
    return event(f"{actor}-{type_}-{hour}-{sorted(payload)}", actor=actor, type=type_, source=source,
                 timestamp=f"2026-04-10T{hour:02d}:00:00Z", payload=payload)


def _built(*events: dict[str, Any]) -> dict[str, Any]:
    from harness.store.models import decode_event

    record, count = build([decode_event(e) for e in events], "c0ffee")
    assert count == len(events)
    return decode_baseline(record)


def test_actors_frequencies_and_hours() -> None:
    record = _built(
        _ev("baron", "push", 9, source="github"),
        _ev("baron", "push", 13, source="github"),
        _ev("baron", "delete", 2, source="github"),
        _ev("ci-bot", "push", 9, source="github"),
        {"id": "offset", "actor": "baron", "type": "push", "source": "github", "timestamp": "2026-04-10T23:30:00-02:00"},
    )
    assert record["known_actors"] == ["baron", "ci-bot"]
    assert record["frequency_tables"] == {"github:push:baron": 3, "github:delete:baron": 1, "github:push:ci-bot": 1}
    assert record["actor_hours"] == {"baron": [1, 2, 9, 13], "ci-bot": [9]}
    assert record["relationships"] == {} and record["built_from_commit"] == "c0ffee"
    assert record["known_users"]["baron"]["last_seen"] == "2026-04-11T01:30:00Z"


def test_created_principals_and_empty_actors() -> None:
    record = _built(
        _ev("", "USER_CREATED", metadata={"displayName": "new-hire", "principal_id": "p-1"}),
        _ev("admin", "service_principal_created", principal_id="  ", member="svc-x"),
        _ev("admin", "member_added", new_principal="contractor\u200b\n"),
        _ev("admin", "user_provisioned"),
        _ev("admin", "login_created", display_name="ignored"),
    )
    assert record["known_created_entities"] == ["contractor", "new-hire", "svc-x"]
    assert record["known_actors"] == ["admin", "contractor", "new-hire", "svc-x"]
    assert "azure:USER_CREATED:" not in json.dumps(record["frequency_tables"])
    assert sorted(record["actor_hours"]) == ["admin"]


def test_known_users_from_logins() -> None:
    record = _built(
        _ev("baron", "login", 9, ip="203.0.113.5", geo="US"),
        _ev("baron", "LOGIN", 12, metadata={"source_ip": "198.51.100.7", "Location": "GB"}),
        _ev("baron", "login", 3, ip=" ", client_ip="192.0.2.1"),
        _ev("baron", "push", 23, ip="10.0.0.1"),
        _ev("quiet", "login", 8, user_agent="x"),
        _ev("geo-only", "login", 8, region="eu-west"),
    )
    # last_seen is the actor's last activity of any type (the 23:00 push), and every actor has a profile.
    assert record["known_users"] == {
        "baron": {"known_geos": ["GB", "US"], "known_ips": ["192.0.2.1", "198.51.100.7", "203.0.113.5"],
                  "last_seen": "2026-04-10T23:00:00Z"},
        "geo-only": {"known_geos": ["eu-west"], "known_ips": [], "last_seen": "2026-04-10T08:00:00Z"},
        "quiet": {"known_geos": [], "known_ips": [], "last_seen": "2026-04-10T08:00:00Z"},
    }


@pytest.mark.parametrize("written", ["United States", "US", "us", " United States of America ", "USA"])
def test_login_geos_become_alpha_2_codes_whatever_the_source_wrote(written: str) -> None:
    record = _built(_ev("baron", "login", 9, geo=written), _ev("baron", "login", 10, metadata={"geo": "Germany"}))
    assert record["known_users"]["baron"]["known_geos"] == ["DE", "US"]


def test_relationships_count_actor_to_target_with_first_and_last_seen() -> None:
    record = _built(
        _ev("deploy-svc", "container_restart", 9, target="web-01"),
        _ev("deploy-svc", "container_restart", 2, target="web-01", action="restart"),
        _ev("deploy-svc", "container_restart", 13, target="web-01", action="stop"),
        _ev("deploy-svc", "push", 11, target="web-02"),
        _ev("baron", "login", 8, Target="portal.azure.com\u202e"),
        _ev("baron", "push", 9, target="  "),
        _ev("baron", "push", 10, target=7),
        _ev("", "push", 10, target="orphan"),
    )
    assert record["relationships"] == {
        "baron:portal.azure.com": {"count": 1, "first_seen": "2026-04-10T08:00:00Z",
                                   "last_seen": "2026-04-10T08:00:00Z"},
        "deploy-svc:web-01": {"count": 3, "first_seen": "2026-04-10T02:00:00Z", "last_seen": "2026-04-10T13:00:00Z"},
        "deploy-svc:web-02": {"count": 1, "first_seen": "2026-04-10T11:00:00Z", "last_seen": "2026-04-10T11:00:00Z"},
    }


def test_merge_turns_old_geo_names_into_codes() -> None:
    old = decode_baseline({"known_users": {"baron": {"known_geos": ["United States", "Atlantis"]}}})
    fresh = _built(_ev("baron", "login", 9, geo="gb"))
    assert merge(old, fresh)["known_users"]["baron"]["known_geos"] == ["Atlantis", "GB", "US"]


@pytest.mark.parametrize(
    ("type_", "payload", "roles"),
    [
        ("admin_action", {"role": "Reader", "target_user": "Bob"}, ["reader:bob"]),
        ("role_assignment", {"role_name": "Owner"}, ["owner:"]),
        ("role_assignment", {"role": "Reader"}, []),
        ("permission_change", {"permission": "WRITE", "principal_id": "P-9"}, ["write:p-9"]),
        ("collaborator_added", {"permission_level": "maintainer"}, ["maintainer:"]),
        ("iam_change", {"role": "Reader", "action": "Put-User_Permissions.Boundary"}, ["reader:"]),
        ("iam_change", {"role": "Reader", "action": "DeleteRole PermissionsBoundary"}, ["reader:"]),
        ("iam_change", {"role": "Admin", "action": "RemoveRoleFromUser"}, []),
        ("iam_change", {"role": "Admin", "action": "revoke_access"}, []),
        ("iam_change", {"role": "Admin", "action": "delete_role_x"}, []),
        ("iam_change", {"role": "Admin", "action": "delete-role"}, ["admin:"]),
        ("member_added", {"metadata": {"role": "PowerUser", "target_user": "Eve"}}, ["poweruser:eve"]),
        ("login", {"role": "admin"}, []),
        ("role_assignment", {"permission": "fullcontrol", "role": "  "}, ["fullcontrol:"]),
        ("role_assignment", {"target_user": "x"}, []),
    ],
)
def test_actor_roles(type_: str, payload: dict[str, Any], roles: list[str]) -> None:
    record = _built(_ev("ops", type_, **payload))
    assert record["actor_roles"].get("ops", []) == roles


def test_merge_rules() -> None:
    previous = decode_baseline({
        "built_from_commit": "old",
        "known_users": {"a": {"known_ips": ["1"], "known_geos": ["US"], "last_seen": "2026-04-10T09:00:00Z"},
                        "b": {"last_seen": "2026-04-10T09:00:00Z"}},
        "known_actors": ["a", "b"], "known_created_entities": ["x"],
        "frequency_tables": {"k1": 5, "k2": 1}, "actor_hours": {"a": [1, 2]}, "actor_roles": {"a": ["r1"]},
        "relationships": {"a:t": {"count": 4, "first_seen": "2026-03-01", "last_seen": "2026-04-01"},
                          "a:u": {"count": 1, "first_seen": "", "last_seen": ""}},
    })
    fresh = decode_baseline({
        "built_from_commit": "new",
        "known_users": {"a": {"known_ips": ["2"], "last_seen": "2026-04-10T11:00:00+02:00"},
                        "b": {"known_geos": ["FR"], "last_seen": ""}, "c": {"known_ips": ["3"]}},
        "known_actors": ["c"], "frequency_tables": {"k1": 3, "k3": 2}, "actor_hours": {"a": [3], "c": [4]},
        "actor_roles": {"c": ["r2"]},
        "relationships": {"a:t": {"count": 2, "first_seen": "2026-02-01", "last_seen": "2026-03-01"},
                          "a:u": {"count": 7, "first_seen": "2026-01-01", "last_seen": "2026-01-02"}},
    })
    merged = decode_baseline(merge(previous, fresh))
    assert merged == {
        "schema_version": 1, "built_from_commit": "new",
        "known_users": {
            "a": {"known_ips": ["1", "2"], "known_geos": ["US"], "last_seen": "2026-04-10T09:00:00Z"},
            "b": {"known_ips": [], "known_geos": ["FR"], "last_seen": "2026-04-10T09:00:00Z"},
            "c": {"known_ips": ["3"], "known_geos": [], "last_seen": ""},
        },
        "known_actors": ["a", "b", "c"], "known_created_entities": ["x"],
        "frequency_tables": {"k1": 5, "k2": 1, "k3": 2}, "actor_hours": {"a": [1, 2, 3], "c": [4]},
        "actor_roles": {"a": ["r1"], "c": ["r2"]},
        "relationships": {"a:t": {"count": 4, "first_seen": "2026-02-01", "last_seen": "2026-04-01"},
                          "a:u": {"count": 7, "first_seen": "2026-01-01", "last_seen": "2026-01-02"}},
    }


def test_build_merges_with_the_last_record_and_appends_only_changes(store: Store) -> None:
    assert build_baseline(store) == {"appended": True, "commit": store.head(), "events_read": 0}
    store.append_batch("events", [_ev("baron", "push", 9)])
    events_commit = store.head()
    store.append_batch("findings", [{"id": "f1"}])
    store.append_batch("baseline", [{"relationships": {"baron:repo": {"count": 2}}, "known_actors": ["old-timer"]}])
    first = build_baseline(store)
    assert first["appended"] and first["events_read"] == 1
    with store.snapshot() as view:
        record = view.latest_baseline().record  # type: ignore[union-attr]
    assert record["built_from_commit"] == events_commit
    assert record["known_actors"] == ["baron", "old-timer"]
    assert record["relationships"] == {"baron:repo": {"count": 2, "first_seen": "", "last_seen": ""}}
    head = store.head()
    assert build_baseline(store) == {"appended": False, "commit": "", "events_read": 1}
    assert store.head() == head
    store.append_batch("events", [_ev("ci-bot", "push", 10)])
    assert build_baseline(store)["appended"]
    check_invariants(store)
    assert git(store.git().git_dir, "log", "-1", "--format=%s").strip() == "store: append baseline (n=1)"  # type: ignore[union-attr]


def test_build_warns_on_stderr_when_most_events_have_no_actor(store: Store) -> None:
    store.append_batch("events", [_ev("", "push", 9), _ev("", "push", 10), _ev("baron", "push", 11)])
    err = io.StringIO()
    assert build_baseline(store, stderr=err)["events_read"] == 3
    assert err.getvalue() == (
        "warning: 2 of 3 events have no actor, so the baseline learns nothing from them; check the format the "
        "events were ingested with (harness ingest events --format)\n"
    )
    store.append_batch("events", [_ev("ci-bot", "push", 12)])
    quiet = io.StringIO()
    build_baseline(store, stderr=quiet)
    assert quiet.getvalue() == ""


def test_the_latest_baseline_is_cached(store: Store) -> None:
    store.append_batch("baseline", [{"known_actors": ["a"]}])
    with store.snapshot() as view:
        first = view.latest_baseline()
    with store.snapshot() as view:
        assert view.latest_baseline() is first


def _file(tmp_path: Path, value: Any) -> Path:
    path = tmp_path / "baseline.json"
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def test_file_loading_normalizes_field_names_and_nulls(tmp_path: Path) -> None:
    path = _file(tmp_path, {
        "KnownUsers": {"Baron": {"knownIPs": ["203.0.113.5"], "KnownGeos": None, "lastSeen": "2026-04-09T14:00:00+02:00"}},
        "knownActors": ["Baron", "Baron"], "frequencyTables": {"azure:login:Baron": 2, "time:02:Baron": 1},
        "actor-hours": {"Baron": [23, 1]}, "actorRoles": None,
        "relationships": {"Baron:repo": {"Count": 3, "firstSeen": "2026-01-01"}},
    })
    baseline = load_baseline_file(path)
    assert baseline.origin == "file"
    assert dict(baseline.record) == {
        "schema_version": 1, "built_from_commit": "",
        "known_users": {"Baron": {"known_ips": ["203.0.113.5"], "known_geos": [], "last_seen": "2026-04-09T12:00:00Z"}},
        "known_actors": ["Baron"], "known_created_entities": [],
        "frequency_tables": {"azure:login:Baron": 2, "time:02:Baron": 1}, "actor_hours": {"Baron": [1, 23]},
        "actor_roles": {}, "relationships": {"Baron:repo": {"count": 3, "first_seen": "2026-01-01", "last_seen": ""}},
    }
    assert load_baseline_file(path) is baseline
    path.write_text(json.dumps({"known_actors": ["x"]}))
    os.utime(path, ns=(1, 1))
    assert load_baseline_file(path).known_actors == ["x"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"unknown": 1}, 'unknown field "unknown"'),
        ({"known_users": {"a": {"ips": []}}}, 'field "known_users.a": unknown field "ips"'),
        ({"known_actors": "a"}, 'field "known_actors": expected an array, got a string'),
        ({"known_actors": [1]}, 'field "known_actors[0]": expected a string, got an integer'),
        ({"known_actors": ["a\tb"]}, 'field "known_actors[0]": contains control'),
        ({"known_actors": ["a "]}, 'field "known_actors[0]": has leading or trailing whitespace'),
        ({"frequency_tables": {"k": -1}}, 'field "frequency_tables.k": must be a count of at least 0, got -1'),
        ({"frequency_tables": {"k": True}}, 'field "frequency_tables.k": expected an integer, got a boolean'),
        ({"frequency_tables": {"k\u200b": 1}}, 'field "frequency_tables key": contains control'),
        ({"actor_hours": {"a": [24]}}, 'field "actor_hours.a[0]": must be an hour from 0 to 23, got 24'),
        ({"actor_hours": {"a": [-1]}}, 'field "actor_hours.a[0]": must be an hour from 0 to 23, got -1'),
        ({"actor_roles": {"a": "r"}}, 'field "actor_roles.a": expected an array, got a string'),
        ({"relationships": {"a:b": {"count": -2}}}, 'field "relationships.a:b.count": must be a count of at least 0'),
        ({"relationships": {"a:b": {"first_seen": "x" * 65}}}, 'field "relationships.a:b.first_seen": must be at most 64'),
        ({"known_users": {"a": {"last_seen": "yesterday"}}}, 'field "known_users.a.last_seen": expected an RFC3339'),
        ({"schema_version": 2}, 'field "schema_version": must be 1'),
        ({"known_actors": [], "knownActors": []}, 'keys "known_actors" and "knownActors" both normalize to "known_actors"'),
        ([], "a baseline must be a JSON object, got an array"),
        ('{"known_actors": [], "known_actors": []}', 'duplicate key "known_actors"'),
        ("{", "malformed JSON"),
    ],
)
def test_file_loading_refusals(tmp_path: Path, value: Any, problem: str) -> None:
    path = _file(tmp_path, value)
    with pytest.raises(InvalidInput) as caught:
        load_baseline_file(path)
    prefix = f"baseline file {path}: "
    assert caught.value.message.startswith(prefix + problem), caught.value.message


def test_file_size_cap_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    path.write_bytes(b'{"known_actors": ["' + b"a" * (32 * 1024 * 1024) + b'"]}')
    with pytest.raises(InvalidInput, match=r"^baseline: file .*huge.json\" is larger than 33,554,432 bytes$"):
        load_baseline_file(path)
    with pytest.raises(InvalidInput, match=r"^baseline: file .*missing.json\" does not exist$"):
        load_baseline_file(tmp_path / "missing.json")
