"""resolve_finding (docs/investigate.md §9.7): every check through both doors, forged and unevidenced citations
included, the resolutions record (one shape, verified or not) and search_findings' latest resolution."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from doors import Door, call_both
from store_backends import workspace_store

from harness.investigate.resolve_finding import DESCRIPTION
from harness.store.resolution_model import STREAM, ResolutionRecord
from tests.investigate.baseline_support import clean_env_fixture  # noqa: F401 - fixture
from tests.investigate.ops_support import make_workspace

OP = "resolve_finding"
# Every test runs on the git store and on PostgreSQL (tests/store_backends.py).
pytestmark = pytest.mark.usefixtures("store_backend")

EVENTS = [
    {
        "id": "m1",
        "source": "azure",
        "type": "container_restart",
        "actor": "deploy-svc",
        "timestamp": "2026-04-10T02:00:00Z",
        "payload": {"action": "restart", "metadata": {"maintenance_window": True, "window_id": "MW-7"}},
    },
    {"id": "m2", "source": "azure", "type": "container_restart", "actor": "deploy-svc", "timestamp": "2026-04-10T02:05:00Z"},
    {
        "id": "m3",
        "source": "azure",
        "type": "image_push",
        "actor": "DEPLOY-SVC",
        "timestamp": "2026-04-10T02:10:00Z",
        "payload": {"maintenance_window": "true"},
    },
    {
        "id": "o1",
        "source": "azure",
        "type": "container_restart",
        "actor": "intruder",
        "timestamp": "2026-04-10T02:20:00Z",
        "payload": {"metadata": {"maintenance_window": "true"}},
    },
    {
        "id": "v1",
        "source": "aws",
        "type": "s3_read",
        "actor": "etl",
        "timestamp": "2026-04-10T03:00:00Z",
        "payload": {"scheduled": "TRUE", "job_id": "nightly"},
    },
]
FINDINGS = [
    {
        "id": "fm",
        "source": "detector:unusual-timing",
        "severity": "medium",
        "type": "unusual-timing",
        "actor": "deploy-svc",
        "timestamp": "2026-04-10T02:30:00Z",
        "reason": "activity at 02:00",
        "event_ids": ["m1", "m2"],
    },
    {
        "id": "fv",
        "source": "detector:volume",
        "severity": "low",
        "type": "volume-anomaly",
        "actor": "etl",
        "timestamp": "2026-04-10T03:30:00Z",
        "event_ids": ["v1"],
    },
]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path, events=EVENTS, findings=FINDINGS)


def proposal(**changes: Any) -> dict[str, Any]:
    """A resolve of fm on R-001 grounded in m1, changed by `changes`."""
    base: dict[str, Any] = {
        "finding_id": "fm",
        "action": "resolve",
        "confidence": "high",
        "rationale": "restart inside the declared maintenance window MW-7",
        "cited_event_ids": ["m1"],
        "cited_rule_ids": ["R-001"],
        "maintenance_window": "true",
    }
    return {key: value for key, value in {**base, **changes}.items() if value is not None}


def checks(document: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [check for check in document["checks"] if check["name"] == name]


def records(workspace: Path) -> list[dict[str, Any]]:
    store = workspace_store(workspace)
    try:
        with store.snapshot() as view:
            return list(view.records(STREAM))
    finally:
        store.close()


def test_a_grounded_resolve_is_verified_and_recorded(ws: Path, door: Door) -> None:
    answer = door(ws, OP, proposal())
    assert answer.exit_code == 0, answer.text
    doc = answer.document
    assert (doc["verified"], doc["reason"], doc["finding_id"], doc["action"]) == (
        True,
        "all checks passed",
        "fm",
        "resolve",
    )
    assert [check["name"] for check in doc["checks"]] == [
        "finding",
        "cited_event",
        "cited_rule",
        "asserted_predicate",
        "action",
    ]
    (rule,) = checks(doc, "cited_rule")
    assert rule["rule_ids"] == ["R-001"]
    assert rule["evidence"]["predicates"] == [
        {"key": "maintenance_window", "value": "true", "asserted": True, "evidenced_by": ["m1"]}
    ]
    assert checks(doc, "action")[0]["evidence"] == {"action": "resolve", "supporting_rules": ["R-001"]}
    (record,) = records(ws)
    assert {key: value for key, value in record.items() if key != "recorded_at"} == doc
    ResolutionRecord.model_validate(record, strict=True)


def test_search_findings_shows_the_latest_resolution(ws: Path, door: Door) -> None:
    assert door(ws, OP, proposal(action="escalate", cited_rule_ids=[], maintenance_window=None)).document["verified"]
    assert door(ws, OP, proposal(cited_rule_ids=["R-999"])).exit_code == 0
    found = {f["id"]: f for f in door(ws, "search_findings", {}).document["findings"]}
    assert found["fv"]["resolution"] is None
    latest = found["fm"]["resolution"]
    assert {key: latest[key] for key in ("action", "verified", "confidence", "cited_rule_ids")} == {
        "action": "resolve",
        "verified": False,
        "confidence": "high",
        "cited_rule_ids": ["R-999"],
    }
    assert latest["reason"] == 'rule "R-999" does not exist in the corpus'
    assert latest["recorded_at"] == records(ws)[-1]["recorded_at"]


def test_a_missing_finding_fails_and_is_still_recorded(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(finding_id="nope")).document
    assert not doc["verified"]
    assert doc["reason"] == 'no finding has id "nope"'
    assert doc["finding_id"] == ""
    assert checks(doc, "finding")[0]["evidence"] == {"finding_id": None, "type": None, "actor": None, "event_ids": []}
    (record,) = records(ws)
    assert record["verified"] is False and record["proposal"]["finding_id"] == "nope"


def test_a_finding_id_is_exact_ignoring_case_never_a_prefix(ws: Path, door: Door) -> None:
    assert door(ws, OP, proposal(finding_id="FM")).document["verified"]
    assert door(ws, OP, proposal(finding_id="f")).document["reason"] == 'no finding has id "f"'


def test_a_cited_event_that_does_not_exist_fails(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(cited_event_ids=["m1", "ghost"])).document
    assert not doc["verified"]
    assert doc["reason"] == 'cited event "ghost" does not exist'


def test_a_cited_event_of_another_actor_outside_the_finding_fails_and_evidences_nothing(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(cited_event_ids=["o1"])).document
    assert not doc["verified"]
    assert doc["reason"] == "cited event o1 is neither one of finding fm's events nor its actor's"
    (rule,) = checks(doc, "cited_rule")
    assert rule["passed"] is False
    assert rule["reason"] == 'rule R-001 needs maintenance_window "true", which no accepted cited event shows'


def test_an_event_of_the_findings_actor_is_accepted(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(cited_event_ids=["m3"])).document
    assert doc["verified"], doc["reason"]
    (event,) = checks(doc, "cited_event")
    assert event["evidence"] == {"event_id": "m3", "stored_id": "m3", "in_finding": False, "same_actor": True}


def test_a_forged_rule_id_fails_with_its_name(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(cited_rule_ids=["R-001", "R-042"])).document
    assert not doc["verified"]
    assert doc["reason"] == 'rule "R-042" does not exist in the corpus'
    forged = checks(doc, "cited_rule")[1]
    assert forged["rule_ids"] == ["R-042"] and forged["evidence"]["found"] is False


def test_a_rule_of_another_family_fails(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(cited_rule_ids=["R-002"], maintenance_window=None, scheduled="true")).document
    assert doc["reason"] == 'rule R-002 applies to family "volume-anomaly", not "unusual-timing"'


def test_a_predicate_the_rule_needs_must_be_asserted(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(maintenance_window=None)).document
    assert not doc["verified"]
    assert doc["reason"] == 'rule R-001 needs maintenance_window "true", which the proposal does not assert'


def test_an_asserted_predicate_no_cited_event_shows_is_unevidenced(ws: Path, door: Door) -> None:
    # m2 belongs to the finding but carries no maintenance window: the claim alone is not evidence.
    doc = door(ws, OP, proposal(cited_event_ids=["m2"])).document
    assert not doc["verified"]
    assert doc["reason"] == 'rule R-001 needs maintenance_window "true", which no accepted cited event shows'
    (asserted,) = checks(doc, "asserted_predicate")
    assert asserted["passed"] is False
    assert asserted["reason"] == 'maintenance_window "true" is asserted but no accepted cited event shows it'
    assert checks(doc, "action")[0]["passed"] is False


def test_every_asserted_predicate_needs_evidence_even_one_no_rule_needs(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(location_change="true")).document
    assert not doc["verified"]
    assert doc["reason"] == 'location_change "true" is asserted but no accepted cited event shows it'


def test_a_resolve_needs_a_rule(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(cited_rule_ids=[], maintenance_window=None)).document
    assert not doc["verified"]
    assert doc["reason"] == (
        "a resolve must rest on at least one cited rule that applies and whose predicates cited events show"
    )


def test_an_escalate_needs_no_rule_and_no_predicate(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(action="escalate", cited_rule_ids=[], maintenance_window=None)).document
    assert doc["verified"] and checks(doc, "action")[0]["reason"] == "an escalation needs no rule"


def test_an_escalate_citing_a_rule_checks_it_exists_and_applies_but_not_its_predicates(ws: Path, door: Door) -> None:
    doc = door(ws, OP, proposal(action="escalate", cited_event_ids=["m2"], maintenance_window=None)).document
    assert doc["verified"], doc["reason"]
    forged = door(ws, OP, proposal(action="escalate", cited_rule_ids=["X-1"], maintenance_window=None)).document
    assert forged["reason"] == 'rule "X-1" does not exist in the corpus'


def test_top_level_payload_values_are_evidence_compared_ignoring_case(ws: Path, door: Door) -> None:
    doc = door(
        ws,
        OP,
        proposal(finding_id="fv", cited_event_ids=["v1"], cited_rule_ids=["R-002"], maintenance_window=None,
                 scheduled="true"),
    ).document
    assert doc["verified"], doc["reason"]


def test_an_unreadable_corpus_fails_each_cited_rule(ws: Path, door: Door) -> None:
    (ws / "rules").mkdir(exist_ok=True)
    (ws / "rules" / "operator-decisions.yaml").write_text("version: 1\nrules: [unclosed\n")
    doc = door(ws, OP, proposal()).document
    assert not doc["verified"]
    assert doc["reason"].startswith('rule "R-001" cannot be checked: rule corpus ')
    escalate = door(ws, OP, proposal(action="escalate", cited_rule_ids=[], maintenance_window=None)).document
    assert escalate["verified"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"action": "dismiss"}, "action"),
        ({"confidence": "certain"}, "confidence"),
        ({"rationale": ""}, "rationale"),
        ({"cited_rule_ids": ["not a rule"]}, "cited_rule_ids[0]"),
        ({"maintenance_window": "x" * 257}, "maintenance_window"),
        ({"verdict": "FP"}, "verdict"),
    ],
)
def test_invalid_input_records_nothing(ws: Path, door: Door, changes: dict[str, Any], field: str) -> None:
    answer = door(ws, OP, proposal(**changes))
    assert answer.error["code"] == "invalid_input"
    assert answer.error["message"].startswith(field), answer.error["message"]
    assert records(ws) == []


def test_events_findings_and_baseline_are_never_written(ws: Path, door: Door) -> None:
    store = workspace_store(ws)
    try:
        before = {stream: store.last_change(store.head(), stream) for stream in ("events", "findings", "baseline")}
        door(ws, OP, proposal())
        door(ws, OP, proposal(cited_rule_ids=["R-999"]))
        after = {stream: store.last_change(store.head(), stream) for stream in ("events", "findings", "baseline")}
    finally:
        store.close()
    assert after == before
    assert len(records(ws)) == 2


def test_both_doors_give_the_same_bytes(ws: Path) -> None:
    call_both(ws, OP, proposal())
    call_both(ws, OP, proposal(cited_event_ids=["o1", "ghost"], cited_rule_ids=["R-404"]))
    assert len(records(ws)) == 4


def test_the_description_names_every_check() -> None:
    for name in ("`finding`", "`cited_event`", "`cited_rule`", "`asserted_predicate`", "`action`"):
        assert name in DESCRIPTION
