"""The resolutions stream (docs/investigate.md §9.7): one record shape, refused otherwise, append-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.errors import InvalidInput
from harness.store import Store
from harness.store.models import RecordError
from harness.store.resolution_model import STREAM, decode_resolution


def record(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "verified": False,
        "reason": 'no finding has id "x"',
        "finding_id": "",
        "action": "escalate",
        "checks": [
            {"name": "finding", "rule_ids": [], "passed": False, "reason": 'no finding has id "x"',
             "evidence": {"finding_id": None, "type": None, "actor": None, "event_ids": []}},
        ],
        "proposal": {"finding_id": "x", "action": "escalate", "confidence": "low", "rationale": "r",
                     "cited_event_ids": [], "cited_rule_ids": [], "predicates": {}},
        "proposal_sha256": "0" * 64,
        "recorded_at": "2026-04-10T00:00:00Z",
    }
    return {**base, **changes}


def test_a_record_round_trips() -> None:
    assert decode_resolution(record()) == record()


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"verified": "yes"}, 'field "verified"'),
        ({"action": "dismiss"}, 'field "action"'),
        ({"extra": 1}, 'field "extra"'),
        ({"proposal_sha256": "abc"}, 'field "proposal_sha256"'),
    ],
)
def test_another_shape_is_refused_naming_the_field(changes: dict[str, Any], problem: str) -> None:
    with pytest.raises(RecordError, match=problem):
        decode_resolution(record(**changes))


def test_the_store_appends_records_and_refuses_a_bad_batch_whole(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    store.append_batch(STREAM, [record(), record(recorded_at="2026-04-10T00:00:01Z")])
    with pytest.raises(InvalidInput, match="record 1"):
        store.append_batch(STREAM, [record(recorded_at="2026-04-10T00:00:02Z"), record(action="x")])
    assert [r["recorded_at"] for r in store.replay().records(STREAM)] == ["2026-04-10T00:00:00Z", "2026-04-10T00:00:01Z"]
    with store.snapshot() as view:
        assert [r["recorded_at"] for r in view.records(STREAM)] == ["2026-04-10T00:00:00Z", "2026-04-10T00:00:01Z"]
