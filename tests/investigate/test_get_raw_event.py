"""get_raw_event (docs/investigate.md §9.5, docs/investigate.md §8) through the CLI and the in-memory MCP client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from doors import call_both
from hypothesis import given, settings
from hypothesis import strategies as st
from listing import listed_text

from harness.investigate import get_raw_event
from harness.investigate.rawcap import MAX_PAYLOAD_BYTES
from harness.text.canonjson import dumps_bytes
from harness.text.redact import KnownSecrets, build_redactor
from tests.investigate.ops_support import STORE_V, dumps, error, make_workspace
from tests.text import benign_corpus
from tests.text.redact_fixtures import BY_NUMBER

# Every test runs on the git store and on PostgreSQL (tests/store_backends.py).
pytestmark = pytest.mark.usefixtures("store_backend")

OP = "get_raw_event"
INVISIBLE_NOTE = "invisible control or format characters were removed from payload strings"
REDACTED_NOTE = "credential or secret-shaped values were redacted"
NO_PAYLOAD_NOTE = "event has no payload"
CREDENTIAL = "[REDACTED:credential_key]"
SHAPES = build_redactor(KnownSecrets())
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def cap_note(*stages: str) -> str:
    return f"payload exceeded 65536 bytes; applied: {', '.join(stages)} (the result is at most 65536 bytes)"


def found(event_id: str, payload: Any, *, notes: str = "", redacted: bool = False, truncated: bool = False) -> str:
    return dumps(
        {
            "id": event_id,
            "found": True,
            "payload": payload,
            "redacted": redacted,
            "truncated": truncated,
            "notes": notes,
        }
    )


def not_found(requested: str) -> str:
    return dumps(
        {
            "id": requested,
            "found": False,
            "payload": None,
            "redacted": False,
            "truncated": False,
            "notes": f"no event found for id {json.dumps(requested)}; it may be a finding id rather than an event id: use "
            "search_findings or search_events to confirm the exact event id",
        }
    )


def raw_of(tmp_path: Path, payload: Any) -> Any:
    workspace = make_workspace(tmp_path, events=[{"id": "x1", "timestamp": "2026-04-10T09:00:00Z", "payload": payload}])
    return call_both(workspace, OP, {"id": "x1"})


@pytest.fixture(scope="module")
def ws_v(tmp_path_factory: pytest.TempPathFactory, store_backend: Any) -> Path:
    return make_workspace(tmp_path_factory.mktemp("v"), events=STORE_V)


@pytest.mark.parametrize("requested", ["cafe1234", "CAFE1234", "finding-cafe1234", "FINDING-CAFE1234", "cafe"])
def test_resolves_by_the_event_rules(ws_v: Path, requested: str) -> None:
    answer = call_both(ws_v, OP, {"id": requested})
    assert answer.exit_code == 0
    assert answer.text == found("cafe1234", {}, notes=NO_PAYLOAD_NOTE)


def test_returns_the_stored_payload(ws_v: Path) -> None:
    assert call_both(ws_v, OP, {"id": "E1"}).text == found("e1", {"action": "push", "target": "contoso/api"})


@pytest.mark.parametrize("requested", ["caf", "zzzzzzzz", "finding-x", "e1-extra"])
def test_not_found_is_a_normal_result_with_a_note(ws_v: Path, requested: str) -> None:
    answer = call_both(ws_v, OP, {"id": requested})
    assert answer.exit_code == 0
    assert answer.text == not_found(requested)


def test_the_not_found_note_echoes_the_id_sanitized(ws_v: Path) -> None:
    answer = call_both(ws_v, OP, {"id": "no\u202epe\nx"})
    assert answer.document["id"] == "nope x"
    assert 'no event found for id "nope x";' in answer.document["notes"]


@pytest.mark.parametrize(
    ("stored", "requested", "resolved"),
    [
        (["abc", "abc-1-2-3"], "abc-1-2-3", "abc-1-2-3"),
        (["abc", "abc-1-2-3"], "abc", "abc"),
        (
            ["evt_ab12cd34ef56", "evt_ab12cd34ef56extra"],
            "finding-evt_ab12cd34ef56-inj-command-injection-chain",
            "evt_ab12cd34ef56",
        ),
        (["evt_ab12cd34ef56extra"], "finding-evt_ab12cd34ef56-inj-command-injection-chain", "evt_ab12cd34ef56extra"),
        (["cafe1111aaaa", "cafe2222bbbb", "feedaced1111"], "feedac", "feedaced1111"),
        (["finding-x", "x"], "finding-x", "finding-x"),
        (["X"], "finding-x", "X"),
    ],
)
def test_id_resolution_table(tmp_path: Path, stored: list[str], requested: str, resolved: str) -> None:
    workspace = make_workspace(tmp_path, events=[{"id": i, "timestamp": "2026-04-10T09:00:00Z"} for i in stored])
    assert call_both(workspace, OP, {"id": requested}).document["id"] == resolved


def test_abc_never_shortens_a_bare_id(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, events=[{"id": "abc", "timestamp": "2026-04-10T09:00:00Z"}])
    assert call_both(workspace, OP, {"id": "abc-1-2-3"}).text == not_found("abc-1-2-3")


def test_an_ambiguous_prefix_is_invalid_input(tmp_path: Path) -> None:
    workspace = make_workspace(
        tmp_path,
        events=[
            {"id": i, "timestamp": "2026-04-10T09:00:00Z"} for i in ("cafe1111aaaa", "cafe2222bbbb", "feedaced1111")
        ],
    )
    answer = call_both(workspace, OP, {"id": "cafe"})
    assert answer.exit_code == 2
    assert answer.text == dumps(
        error(
            OP,
            "invalid_input",
            'id "cafe" is ambiguous: prefix matches 2 stored ids: '
            "cafe1111aaaa, cafe2222bbbb. Supply a longer prefix or the exact id.",
        )
    )


def test_a_finding_id_without_its_event_is_not_found(tmp_path: Path) -> None:
    workspace = make_workspace(
        tmp_path, events=[{"id": "other", "timestamp": "2026-04-10T09:00:00Z"}], findings=[{"id": "finding-x"}]
    )
    assert call_both(workspace, OP, {"id": "finding-x"}).text == not_found("finding-x")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "id: is required"),
        ({"id": ""}, "id: must not be empty"),
        ({"id": "x" * 257}, "id: must be at most 256 bytes (UTF-8), got 257"),
        ({"id": 5}, "id: expected a string, got an integer"),
        ({"id": "x", "ids": ["x"]}, "ids: unknown field; the accepted fields are id"),
    ],
)
def test_invalid_input_names_the_field(ws_v: Path, arguments: dict[str, Any], message: str) -> None:
    answer = call_both(ws_v, OP, arguments)
    assert answer.exit_code == 2
    assert answer.text == dumps(error(OP, "invalid_input", message))


@pytest.mark.parametrize("payload", [{}, None])
def test_an_empty_payload_is_noted(tmp_path: Path, payload: Any) -> None:
    assert raw_of(tmp_path, payload).text == found("x1", payload, notes=NO_PAYLOAD_NOTE)


def test_scalar_payloads_come_back_as_stored(tmp_path: Path) -> None:
    assert raw_of(tmp_path, [1, "two", 3.5, False]).text == found("x1", [1, "two", 3.5, False])


CLOUDTRAIL = {
    "eventName": "AssumeRole",
    "sourceIPAddress": "198.51.100.7",
    "userIdentity": {"arn": "arn:aws:iam::123456789012:user/baron", "accessKeyId": "key-id-1"},
    "requestParameters": {"roleSessionName": "baron-session", "durationSeconds": 3600},
    "responseElements": {
        "credentials": {
            "sessionToken": "FwoGZXIvYXdzEBYaDH",
            "accessKeyId": "key-id-1",
            "expiration": "2026-04-10T10:00:00Z",
        }
    },
    "nested": {"deeper": {"secretAccessKey": {"even": "an object"}}},
    "SessionToken": "abc",
    "SECRETACCESSKEY": "def",
    "session_token": 12,
}


def test_the_cloudtrail_vector(tmp_path: Path) -> None:
    answer = raw_of(tmp_path, CLOUDTRAIL)
    expected = json.loads(json.dumps(CLOUDTRAIL))
    expected["responseElements"]["credentials"]["sessionToken"] = CREDENTIAL
    expected["nested"]["deeper"]["secretAccessKey"] = CREDENTIAL
    expected["SessionToken"] = expected["SECRETACCESSKEY"] = expected["session_token"] = CREDENTIAL
    assert answer.text == found("x1", expected, notes=REDACTED_NOTE, redacted=True)


def test_a_token_split_by_an_invisible_character_is_redacted(tmp_path: Path) -> None:
    split = GITHUB_TOKEN[:10] + "\u200b" + GITHUB_TOKEN[10:]
    answer = raw_of(tmp_path, {"note": f"token {split} here", "keep": "plain"})
    assert answer.text == found(
        "x1",
        {"keep": "plain", "note": "token [REDACTED:github_token] here"},
        notes=f"{INVISIBLE_NOTE}; {REDACTED_NOTE}",
        redacted=True,
    )


def test_invisible_characters_are_stripped_but_whitespace_is_kept(tmp_path: Path) -> None:
    answer = raw_of(tmp_path, {"text": "a\u202eb\n\tc\u0000d", "list": ["\u200bx"]})
    assert answer.text == found("x1", {"list": ["x"], "text": "ab\n\tcd"}, notes=INVISIBLE_NOTE)


def test_a_configured_secret_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "s3cr3t-value-for-the-test-only"
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    answer = raw_of(tmp_path, {"header": f"Bearer-ish {secret}"})
    assert secret not in answer.text
    assert answer.document["redacted"] is True


def test_a_huge_string_is_cut_and_small_fields_stay(tmp_path: Path) -> None:
    answer = raw_of(tmp_path, {"big": "x" * 200_000, "small": "ok"})
    assert answer.text == found(
        "x1", {"big": "x" * 4096 + "...[truncated]", "small": "ok"}, notes=cap_note("leaf truncation"), truncated=True
    )


def test_cjk_text_stays_valid_utf8(tmp_path: Path) -> None:
    answer = raw_of(tmp_path, {"text": "漢字" * 40_000})
    text = answer.document["payload"]["text"]
    assert "\ufffd" not in answer.text
    assert text == "漢字" * 682 + "漢...[truncated]"


def test_a_long_array_is_capped(tmp_path: Path) -> None:
    answer = raw_of(tmp_path, list(range(40_000)))
    payload = answer.document["payload"]
    assert payload[:3] == [0, 1, 2]
    assert payload[-1] == f"[TRUNCATED: {40_000 - len(payload) + 1} more items]"
    assert answer.document["notes"] == cap_note("array capping")
    assert answer.document["truncated"] is True
    assert len(dumps_bytes(payload)) <= MAX_PAYLOAD_BYTES


def test_many_members_are_pruned_with_a_fields_marker(tmp_path: Path) -> None:
    answer = raw_of(tmp_path, {f"k{i:05d}": "v" * 44 for i in range(6000)})
    payload = answer.document["payload"]
    assert payload["_truncated"] == f"[TRUNCATED: {6000 - len(payload) + 1} more fields]"
    assert answer.document["notes"] == cap_note("subtree pruning")


def test_three_large_sub_objects_become_markers(tmp_path: Path) -> None:
    sub = {f"field{i:04d}": "short value" for i in range(4000)}
    answer = raw_of(tmp_path, {"a": sub, "b": sub, "c": sub, "small": "ok"})
    marker = f"[TRUNCATED: ~{len(dumps_bytes(sub))} bytes]"
    assert answer.text == found(
        "x1", {"a": marker, "b": marker, "c": marker, "small": "ok"}, notes=cap_note("subtree pruning"), truncated=True
    )


def test_a_token_inside_a_megabyte_subtree_never_appears(tmp_path: Path) -> None:
    subtree = {f"f{i:05d}": "padding-value-" + str(i) for i in range(33_000)}
    subtree["f19999"] = f"token={GITHUB_TOKEN}"
    assert len(dumps_bytes(subtree)) > 1_000_000
    answer = raw_of(tmp_path, {"blob": subtree, "id": "ok"})
    assert GITHUB_TOKEN not in answer.text
    assert GITHUB_TOKEN[4:20] not in answer.text
    assert answer.document["redacted"] is True
    assert answer.document["notes"] == f"{REDACTED_NOTE}; {cap_note('subtree pruning')}"


def test_notes_are_joined_in_step_order(tmp_path: Path) -> None:
    answer = raw_of(tmp_path, {"big": "y\u200b" * 100_000, "sessionToken": "t"})
    assert answer.document["notes"] == f"{INVISIBLE_NOTE}; {REDACTED_NOTE}; {cap_note('leaf truncation')}"


def test_description_tells_the_agent_what_comes_back() -> None:
    text = listed_text("get_raw_event")
    for phrase in (
        '"maxLength": 256, "minLength": 1',
        "finding-<event id>",
        "at least 4",
        "`event_ids`",
        "null when not found",
        "[REDACTED:",
        "65536 bytes",
        "...[truncated]",
        "_truncated",
        "invalid_input",
        "upstream_unavailable",
    ):
        assert phrase in text, phrase


json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.text(max_size=30),
    st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=4), st.integers(0, 30_000)),
)
json_trees = st.recursive(
    json_leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=20), st.dictionaries(st.text(max_size=8), children, max_size=20)
    ),
    max_leaves=60,
)


@settings(max_examples=60, deadline=None)
@given(json_trees)
def test_cleaned_payloads_always_fit_and_are_deterministic(payload: Any) -> None:
    redactor = build_redactor(KnownSecrets())
    first = get_raw_event.clean_payload(payload, redactor)
    second = get_raw_event.clean_payload(json.loads(json.dumps(payload)), redactor)
    assert len(dumps_bytes(first[0])) <= MAX_PAYLOAD_BYTES
    assert dumps_bytes(first[0]) == dumps_bytes(second[0])
    assert first[1:] == second[1:]


@pytest.mark.parametrize(
    "record",
    [benign_corpus.CLOUDTRAIL_RECORDS[0], benign_corpus.CLOUDTRAIL_RECORDS[1], *benign_corpus.OKTA_RECORDS,
     *benign_corpus.GITHUB_RECORDS],
)
def test_audit_identifiers_are_kept_while_planted_secrets_go(tmp_path: Path, record: dict[str, Any]) -> None:
    token = BY_NUMBER[37].secret(3)
    password = "Wq8" + BY_NUMBER[37].secret(4)[4:20]
    planted = {**record, "clientToken": token, "errorMessage": f"bind failed: password={password}"}
    expected = {
        **record,
        "clientToken": SHAPES.redact(token),
        "errorMessage": SHAPES.redact(f"bind failed: password={password}"),
    }
    answer = raw_of(tmp_path, planted)
    assert token not in answer.text and password not in answer.text
    assert answer.text == found("x1", expected, notes=REDACTED_NOTE, redacted=True)
    for identifier in (benign_corpus.SECRET_ARN, benign_corpus.KMS_ARN, benign_corpus.REQUEST_ID, benign_corpus.COMMIT):
        assert (identifier in json.dumps(record)) == (identifier in answer.text)


# Issue 8: real-shaped vendor records (the adapter samples and the benign corpus's written ones) with secrets from
# the held-out formats planted where such records carry free text; the identifiers must come back byte-identical.
PLANTED_FAMILIES = ("AWS secret access key", "Okta API token", "GitHub fine-grained PAT", "Slack bot token",
                    "Stripe secret key", "HashiCorp Vault service token")


def _vendor_records() -> list[tuple[str, dict[str, Any]]]:
    from tests.adapters import cloudtrail_samples, github_samples, okta_samples

    out = [("cloudtrail", record) for record in benign_corpus.CLOUDTRAIL_RECORDS]
    out += [("okta", record) for record in benign_corpus.OKTA_RECORDS]
    out += [("github", record) for record in benign_corpus.GITHUB_RECORDS]
    for source, module in (("cloudtrail", cloudtrail_samples), ("okta", okta_samples), ("github", github_samples)):
        out += [(source, benign_corpus._without_access_key_ids(record)) for record, _ in module.CASES]
    return out


def _planted_secrets() -> list[tuple[str, tuple[str, ...]]]:
    import random

    from tests.text.heldout_corpus import FORMATS, _secret

    rng = random.Random("get_raw_event:planted")
    by_family = {family: gen for family, gen, *_ in FORMATS}
    return [_secret(by_family[family], rng) for family in PLANTED_FAMILIES]


def _plant(source: str, record: dict[str, Any], secrets: list[tuple[str, tuple[str, ...]]]) -> dict[str, Any]:
    aws, okta, pat, slack, stripe, vault = (secret for secret, _ in secrets)
    extra = {
        "cloudtrail": {"x_errorMessage": f"InvalidSignatureException: aws_secret_access_key={aws} rejected",
                       "x_debugHeaders": {"Authorization": f"Bearer {vault}", "X-Stripe-Key": stripe}},
        "okta": {"x_debugRequest": f"GET /api/v1/users HTTP/1.1\r\nAuthorization: SSWS {okta}\r\n",
                 "x_hook": {"slack_token": slack}},
        "github": {"x_commitMessage": f"ci: set GITHUB_TOKEN={pat}", "x_env": f"STRIPE_API_KEY={stripe}\nSLACK={slack}"},
    }[source]
    assert not any(key in record for key in extra)
    return {**record, **extra}


def test_vendor_identifiers_survive_get_raw_event_while_planted_secrets_go(tmp_path: Path) -> None:
    records = _vendor_records()
    secrets = _planted_secrets()
    events = [{"id": f"r{index}", "timestamp": "2026-04-10T09:00:00Z", "payload": _plant(source, record, secrets)}
              for index, (source, record) in enumerate(records)]
    workspace = make_workspace(tmp_path, events=events)
    arns = 0
    for index, (source, record) in enumerate(records):
        answer = call_both(workspace, OP, {"id": f"r{index}"})
        for _, bodies in secrets:
            assert not any(body in answer.text for body in bodies if len(body) >= 8), (source, index)
        payload = answer.document["payload"]
        assert answer.document["redacted"] is True
        # Every field the vendor wrote (ARNs, request and event ids, UUIDs, commit ids, URLs) comes back unchanged.
        assert {key: value for key, value in payload.items() if not key.startswith("x_")} == record, (source, index)
        assert all(payload[key] != value for key, value in _plant(source, record, secrets).items() if key.startswith("x_"))
        arns += json.dumps(record).count("arn:aws:")
    assert len(records) > 100 and arns > 20
