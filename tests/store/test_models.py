"""Record decoding and canonical encoding (docs/investigate.md §2, docs/investigate.md §5 "Decoding")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.store.models import RecordError, decode_event, decode_finding
from harness.store.streams import STREAMS, decode_line, encode_record

EVENTS = STREAMS["events"]
FINDINGS = STREAMS["findings"]


def test_key_casing_variants_of_the_acceptance_file_decode_alike() -> None:
    one = decode_event(
        {"ID": "evt-1", "Source": "azure", "EventType": "container_restart", "Actor": "deploy-svc",
         "Timestamp": "2026-04-10T02:05:00Z", "Action": "restart", "Target": "web-01",
         "Metadata": {"maintenance_window": True, "window_id": "mw-7"}}
    )
    assert one == {
        "id": "evt-1", "source": "azure", "type": "container_restart", "actor": "deploy-svc", "org": "",
        "timestamp": "2026-04-10T02:05:00Z",
        "payload": {"action": "restart", "target": "web-01", "metadata": {"maintenance_window": True, "window_id": "mw-7"}},
    }
    two = decode_event({"id": "evt-2", "event-type": "x", "timestamp": "2026-04-10T04:10:00+02:00"})
    assert (two["type"], two["timestamp"]) == ("x", "2026-04-10T02:10:00Z")
    three = decode_event({"-id": "evt-3", "-source": "github", "-type": "push", "-actor": "baron",
                          "-timestamp": "2026-04-10T09:00:00Z", "payload": {"ref": "main"}})
    assert three["payload"] == {"ref": "main"} and three["actor"] == "baron"
    four = decode_event({"Id": "evt-4", "timestamp": "2026-04-09T12:00:00.250Z"})
    assert four["timestamp"] == "2026-04-09T12:00:00.25Z"


def test_flat_record_moves_every_other_key_into_payload() -> None:
    flat = {"id": "e", "timestamp": "2026-04-10T09:00:00Z", "source": "aws", "event_type": "t", "actor": "a",
            "action": "x", "target": "y", "metadata": {"k": 1}}
    record = decode_event(flat)
    assert record["payload"] == {"action": "x", "metadata": {"k": 1}, "target": "y"}
    assert record["type"] == "t"


def test_nested_keys_are_never_rewritten() -> None:
    record = decode_event({"id": "e", "timestamp": "2026-04-10T09:00:00Z", "payload": {"userIdentity": {"ARN": 1}}})
    assert record["payload"] == {"userIdentity": {"ARN": 1}}


def test_defaults_and_null_optional_strings() -> None:
    record = decode_event({"id": "e", "timestamp": "2026-04-10T09:00:00Z", "actor": None})
    assert record == {"id": "e", "source": "", "type": "", "actor": "", "org": "", "timestamp": "2026-04-10T09:00:00Z",
                      "payload": {}}
    assert decode_event({"id": "e", "timestamp": "2026-04-10T09:00:00Z", "payload": None})["payload"] is None


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([1], "a record must be a JSON object, got an array"),
        ({"EventType": "a", "event_type": "b", "id": "e"}, 'keys "EventType" and "event_type" both normalize to "event_type"'),
        ({"Type": "a", "EventType": "b", "id": "e"}, 'keys "Type" and "EventType" both normalize to "type"'),
        ({"timestamp": "2026-04-10T09:00:00Z"}, 'field "id": is required'),
        ({"id": "", "timestamp": "2026-04-10T09:00:00Z"}, 'field "id": must not be empty'),
        ({"id": 7, "timestamp": "2026-04-10T09:00:00Z"}, 'field "id": expected a string, got an integer'),
        ({"id": "x" * 257, "timestamp": "2026-04-10T09:00:00Z"}, 'field "id": must be at most 256 bytes (UTF-8), got 257'),
        ({"id": "a\nb", "timestamp": "2026-04-10T09:00:00Z"},
         'field "id": contains control, format, tab or line-break characters'),
        ({"id": "ab\u200b", "timestamp": "2026-04-10T09:00:00Z"},
         'field "id": contains control, format, tab or line-break characters'),
        ({"id": " ab", "timestamp": "2026-04-10T09:00:00Z"}, 'field "id": has leading or trailing whitespace'),
        ({"id": "e", "source": "a:b", "timestamp": "2026-04-10T09:00:00Z"}, 'field "source": must not contain ":"'),
        ({"id": "e", "type": "a:b", "timestamp": "2026-04-10T09:00:00Z"}, 'field "type": must not contain ":"'),
        ({"id": "e"}, 'field "timestamp": is required'),
        ({"id": "e", "timestamp": "2026-04-10 09:00"},
         'field "timestamp": expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z, got "2026-04-10 09:00"'),
        ({"id": "e", "timestamp": "2026-04-10"},
         'field "timestamp": expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z, got "2026-04-10"'),
        ({"id": "e", "timestamp": ""},
         'field "timestamp": expected an RFC3339 timestamp such as 2026-04-10T09:00:00Z, got ""'),
        ({"id": "e", "timestamp": "2026-04-10T09:00:00Z", "payload": [1], "action": "x"},
         'field "payload": must be an object to receive the other top-level fields ("action")'),
        ({"id": "e", "timestamp": "2026-04-10T09:00:00Z", "payload": {"action": 1}, "Action": "x"},
         'field "payload": key "action" is given both at the top level and inside payload'),
        ({"id": "e", "timestamp": "2026-04-10T09:00:00Z", "payload": {"a": {"b\nc": 1}}},
         'field "payload": object key "b c" contains control, format, tab or line-break characters'),
        ({"id": "e", "timestamp": "2026-04-10T09:00:00Z", "payload": {"k" * 1025: 1}},
         f'field "payload": object key "{"k" * 1012} [truncated]" is longer than 1024 bytes'),
    ],
)
def test_event_refusals(obj: Any, message: str) -> None:
    with pytest.raises(RecordError) as caught:
        decode_event(obj)
    assert str(caught.value) == message


def test_values_python_callers_could_pass_are_refused() -> None:
    base = {"id": "e", "timestamp": "2026-04-10T09:00:00Z"}
    with pytest.raises(RecordError, match="outside the signed 64-bit range"):
        decode_event({**base, "payload": {"n": 2**63}})
    with pytest.raises(RecordError, match="numbers must be finite"):
        decode_event({**base, "payload": {"n": float("nan")}})
    with pytest.raises(RecordError, match="object keys must be strings"):
        decode_event({**base, "payload": {1: "x"}})
    with pytest.raises(RecordError, match="lone surrogate"):
        encode_record(EVENTS, {**base, "payload": {"s": "\ud800"}})


def test_line_cap() -> None:
    big = {"id": "e", "timestamp": "2026-04-10T09:00:00Z", "payload": {"s": "x" * (1 << 20)}}
    with pytest.raises(RecordError, match=r"^the encoded record is \d+ bytes, over the 1048576-byte line cap$"):
        encode_record(EVENTS, big)


def test_finding_fields_defaults_and_event_ids_derivation() -> None:
    record = decode_finding(
        {"Id": "finding-evt-1", "Source": "detector:unusual-timing", "Severity": "medium", "Type": "unusual-timing",
         "Actor": "deploy-svc", "Timestamp": "2026-04-10T02:30:00Z", "Reason": "activity at 02:00 UTC",
         "Evidence": {"event_id": "evt-1", "hour_utc": 2}}
    )
    assert record == {
        "id": "finding-evt-1", "source": "detector:unusual-timing", "severity": "medium", "type": "unusual-timing",
        "actor": "deploy-svc", "timestamp": "2026-04-10T02:30:00Z", "reason": "activity at 02:00 UTC",
        "evidence": {"event_id": "evt-1", "hour_utc": 2}, "event_ids": ["evt-1"],
    }
    derived = decode_finding({"id": "f", "evidence": {"event_id": "b", "EventIds": ["c", "", "b", 3, "a"]}})
    assert derived["event_ids"] == ["a", "b", "c"]
    assert derived["timestamp"] == ""
    given = decode_finding({"id": "f", "event_ids": ["z", "y"], "evidence": {"event_id": "b"}})
    assert given["event_ids"] == ["z", "y"]
    flat = decode_finding({"id": "f", "rule": "r1", "event_type": "x", "timestamp": None})
    assert flat["evidence"] == {"event_type": "x", "rule": "r1"}
    assert decode_finding({"id": "f", "timestamp": ""})["timestamp"] == ""


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"id": "f", "reason": "r" * 65_537}, 'field "reason": must be at most 65536 bytes (UTF-8), got 65537'),
        ({"id": "f", "evidence": {"s": "x" * 8200}}, 'field "evidence": canonical JSON must be at most 8192 bytes'),
        ({"id": "f", "event_ids": ["a"] * 1001}, 'field "event_ids": must have at most 1000 items, got 1001'),
        ({"id": "f", "event_ids": "a"}, 'field "event_ids": expected an array, got a string'),
        ({"id": "f", "event_ids": ["a\tb"]}, 'field "event_ids[0]": contains control'),
        ({"id": "f", "evidence": {"event_id": "a b "}}, 'field "event_ids (from evidence)[0]": has leading or trailing'),
        ({"id": "f", "severity": "hi\n"}, 'field "severity": contains control'),
        ({"id": "f", "timestamp": "yesterday"}, 'field "timestamp": expected an RFC3339 timestamp'),
    ],
)
def test_finding_refusals(obj: Any, message: str) -> None:
    with pytest.raises(RecordError) as caught:
        decode_finding(obj)
    assert str(caught.value).startswith(message)


def test_stored_lines_must_be_canonical_valid_records() -> None:
    _, line = encode_record(EVENTS, {"ID": "e", "Timestamp": "2026-04-10T11:00:00+02:00"})
    assert decode_line(EVENTS, line)["timestamp"] == "2026-04-10T09:00:00Z"
    spaced = json.dumps(json.loads(line)).encode()
    with pytest.raises(RecordError, match="not the canonical encoding"):
        decode_line(EVENTS, spaced)
    with pytest.raises(RecordError, match="duplicate key"):
        decode_line(EVENTS, b'{"id":"e","id":"f"}')
    with pytest.raises(RecordError, match="not the canonical encoding"):
        decode_line(EVENTS, line.replace(b'"org":""', b'"org":"","zz":1'))
    with pytest.raises(RecordError, match='field "id": is required'):
        decode_line(FINDINGS, b'{"x":1}')



def _nested(levels: int) -> Any:
    value: Any = "leaf"
    for level in range(levels):
        value = [value] if level % 2 else {"k": value}
    return value


def test_payload_and_evidence_nesting_is_capped_at_ingestion() -> None:
    from harness.store.models import MAX_DEPTH

    ok = {"id": "e1", "timestamp": "2026-04-10T00:00:00Z", "payload": _nested(MAX_DEPTH)}
    assert decode_event(ok)["payload"] == _nested(MAX_DEPTH)
    deep = {"id": "e1", "timestamp": "2026-04-10T00:00:00Z", "payload": _nested(MAX_DEPTH + 1)}
    with pytest.raises(RecordError, match=f"nesting is deeper than {MAX_DEPTH} levels"):
        decode_event(deep)
    with pytest.raises(RecordError, match="evidence.*nesting is deeper"):
        decode_finding({"id": "f1", "evidence": {"a": _nested(MAX_DEPTH)}})
