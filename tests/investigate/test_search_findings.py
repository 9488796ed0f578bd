"""search_findings (docs/investigate.md §9.2, docs/investigate.md §8 finding rules) through the CLI and the in-memory MCP client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from doors import call_both
from listing import listed_text

from harness.investigate.search_events import MAX_IDS, MAX_LIMIT
from harness.investigate.search_findings import NOTE_EMPTY
from tests.investigate.ops_support import STORE_F, dumps, error, make_workspace

# Every test runs on the git store and on PostgreSQL (tests/store_backends.py).
pytestmark = pytest.mark.usefixtures("store_backend")

OP = "search_findings"


def stored(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A finding of store F with every key, as stored and shown."""
    full = {
        "source": "",
        "severity": "",
        "type": "",
        "actor": "",
        "timestamp": "",
        "reason": "",
        "evidence": {},
        "event_ids": [],
        "resolution": None,
        **record,
        **changes,
    }
    evidence = full["evidence"]
    if not full["event_ids"] and isinstance(evidence, dict) and "event_id" in evidence:
        full["event_ids"] = [evidence["event_id"]]
    return full


FINDINGS = {record["id"]: stored(record) for record in STORE_F}
ALL = ["f1", "f2", "f3", "finding-cafe1234", "f5"]


def expected(ids: list[str], *, total: int | None = None, notes: str = "") -> str:
    count = len(ids) if total is None else total
    return dumps(
        {"findings": [FINDINGS[i] for i in ids], "notes": notes, "total": count, "truncated": count > len(ids)}
    )


@pytest.fixture(scope="module")
def ws_f(tmp_path_factory: pytest.TempPathFactory, store_backend: Any) -> Path:
    return make_workspace(tmp_path_factory.mktemp("f"), findings=STORE_F)


@pytest.mark.parametrize(
    ("arguments", "ids"),
    [
        ({}, ALL),
        ({"actor": "BARON"}, ["f1", "f3"]),
        ({"source": "detector:new-actor"}, ["f2"]),
        ({"type": "UNUSUAL-LOGIN"}, ["f1", "f3"]),
        ({"ids": ["f3", "f1"]}, ["f1", "f3"]),
        ({"ids": ["F2"]}, ["f2"]),
        ({"ids": ["cafe1234"]}, ["finding-cafe1234"]),
        ({"ids": ["", "f5"]}, ["f5"]),
        ({"ids": [""]}, ALL),
        ({"since": "2026-04-10T10:00:00Z"}, ["f2", "f3", "finding-cafe1234"]),
        ({"actor": "baron", "since": "2026-04-10"}, ["f1", "f3"]),
    ],
)
def test_store_f_vectors(ws_f: Path, arguments: dict[str, Any], ids: list[str]) -> None:
    answer = call_both(ws_f, OP, arguments)
    assert answer.exit_code == 0
    assert answer.text == expected(ids)


def test_event_ids_of_a_finding_come_back(ws_f: Path) -> None:
    (finding,) = call_both(ws_f, OP, {"ids": ["cafe1234"]}).document["findings"]
    assert finding["event_ids"] == ["cafe1234"]
    assert finding["evidence"] == {"event_id": "cafe1234"}


def test_no_match_is_an_empty_result_with_a_note(ws_f: Path) -> None:
    assert call_both(ws_f, OP, {"type": "forge"}).text == expected([], notes=NOTE_EMPTY)


def test_a_finding_without_timestamp_is_excluded_by_any_since(ws_f: Path) -> None:
    answer = call_both(ws_f, OP, {"actor": "ops", "since": "0001-01-01"})
    assert answer.text == expected([], notes=NOTE_EMPTY)
    assert call_both(ws_f, OP, {"actor": "ops"}).text == expected(["f5"])


def test_limit_truncates_with_a_note(ws_f: Path) -> None:
    note = (
        "showing the oldest 3 of 5 matching findings; narrow the filters, move since later or raise limit "
        f"(at most {MAX_LIMIT})."
    )
    assert call_both(ws_f, OP, {"limit": 3}).text == expected(["f1", "f2", "f3"], total=5, notes=note)


# Findings as a detector exported them: not in time order, two at one instant, two without a timestamp.
OUT_OF_ORDER = [
    {"id": "fo-b", "actor": "mallory", "type": "trail-tamper", "timestamp": "2026-03-02T21:00:00Z"},
    {"id": "fo-undated", "actor": "mallory", "type": "trail-tamper"},
    {"id": "fo-a", "actor": "mallory", "type": "trail-tamper", "timestamp": "2026-03-02T21:53:00+01:00"},
    {"id": "fo-c", "actor": "mallory", "type": "trail-tamper", "timestamp": "2026-03-02T21:00:00Z"},
    {"id": "fo-undated-2", "actor": "ci-bot", "type": "trail-tamper"},
]


@pytest.fixture(scope="module")
def ws_out_of_order(tmp_path_factory: pytest.TempPathFactory, store_backend: Any) -> Path:
    return make_workspace(tmp_path_factory.mktemp("fo"), findings=OUT_OF_ORDER)


@pytest.mark.parametrize(
    ("arguments", "ids", "total"),
    [
        ({}, ["fo-a", "fo-b", "fo-c", "fo-undated", "fo-undated-2"], 5),
        ({"actor": "Mallory", "limit": 3}, ["fo-a", "fo-b", "fo-c"], 4),
        ({"limit": 4}, ["fo-a", "fo-b", "fo-c", "fo-undated"], 5),
        ({"since": "2026-03-02T20:53:00Z", "limit": 1}, ["fo-a"], 3),
        ({"ids": ["fo-undated", "fo-c", "fo-a"]}, ["fo-a", "fo-c", "fo-undated"], 3),
    ],
)
def test_findings_come_oldest_first_and_undated_last(
    ws_out_of_order: Path, arguments: dict[str, Any], ids: list[str], total: int
) -> None:
    answer = call_both(ws_out_of_order, OP, arguments)
    assert [finding["id"] for finding in answer.document["findings"]] == ids
    assert (answer.document["total"], answer.document["truncated"]) == (total, total > len(ids))


@pytest.mark.parametrize("requested", ["cafe1234", "CAFE1234", "cafe", "finding-cafe"])
def test_finding_id_resolution(ws_f: Path, requested: str) -> None:
    assert call_both(ws_f, OP, {"ids": [requested]}).text == expected(["finding-cafe1234"])


def test_an_ambiguous_finding_prefix_fails(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, findings=[{"id": "finding-ab12"}, {"id": "finding-ab34"}])
    answer = call_both(workspace, OP, {"ids": ["finding-ab"]})
    assert answer.text == dumps(
        error(
            OP,
            "invalid_input",
            'id "finding-ab" is ambiguous: prefix matches 2 stored ids: '
            "finding-ab12, finding-ab34. Supply a longer prefix or the exact id.",
        )
    )


def test_reason_and_evidence_strings_are_sanitized_but_keys_and_ids_are_not(tmp_path: Path) -> None:
    record = {
        "id": "F-Mixed",
        "actor": "Baron",
        "reason": "a\u202eb\nc",
        "evidence": {"Note\u00e9": "x\u200by\tz", "list": [" pad ", 3, {"deep": "\u0000q"}], "event_ids": ["E-1"]},
    }
    workspace = make_workspace(tmp_path, findings=[record])
    answer = call_both(workspace, OP, {})
    assert answer.text == dumps(
        {
            "findings": [
                {
                    "id": "F-Mixed",
                    "source": "",
                    "severity": "",
                    "type": "",
                    "actor": "Baron",
                    "timestamp": "",
                    "reason": "ab c",
                    "evidence": {"Note\u00e9": "xy z", "list": ["pad", 3, {"deep": "q"}], "event_ids": ["E-1"]},
                    "event_ids": ["E-1"],
                    "resolution": None,
                }
            ],
            "notes": "",
            "total": 1,
            "truncated": False,
        }
    )


def test_a_long_reason_is_capped_visibly(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, findings=[{"id": "f1", "reason": "r" * 5000}])
    (finding,) = call_both(workspace, OP, {}).document["findings"]
    assert finding["reason"] == "r" * 1012 + " [truncated]"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"until": "2026-04-10"},
            "until: unknown field; the accepted fields are actor, source, type, ids, since, limit",
        ),
        (
            {"since": "yesterday"},
            'since: expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z or a date such as 2026-04-10, got "yesterday"',
        ),
        ({"limit": 0}, "limit: must be at least 1, got 0"),
        ({"limit": MAX_LIMIT + 1}, f"limit: must be at most {MAX_LIMIT}, got {MAX_LIMIT + 1}"),
        ({"ids": ["x"] * (MAX_IDS + 1)}, f"ids: must have at most {MAX_IDS} items, got {MAX_IDS + 1}"),
        (
            {"finding_family": "x"},
            "finding_family: unknown field; the accepted fields are actor, source, type, ids, since, limit",
        ),
        ({"type": 3}, "type: expected a string, got an integer"),
    ],
)
def test_invalid_input_names_the_field(ws_f: Path, arguments: dict[str, Any], message: str) -> None:
    answer = call_both(ws_f, OP, arguments)
    assert answer.exit_code == 2
    assert answer.text == dumps(error(OP, "invalid_input", message))


def test_missing_store_reads_as_empty(tmp_path: Path) -> None:
    workspace = tmp_path / "bare"
    workspace.mkdir()
    assert call_both(workspace, OP, {}).text == expected([], notes=NOTE_EMPTY)


def test_description_tells_the_agent_how_to_search() -> None:
    text = listed_text("search_findings")
    for phrase in (
        "oldest first by timestamp",
        "findings without a timestamp last",
        "ignoring case",
        "never a substring",
        "one axis per call",
        "usually actors",
        "`event_ids`",
        "feed search_events `ids`",
        '"default": 200',
        "1..2000",
        '"maxItems": 100',
        "RFC3339",
        "2026-04-10",
        "excluded",
        '"maxLength": 256',
        "invalid_input",
        "upstream_unavailable",
    ):
        assert phrase in text, phrase
