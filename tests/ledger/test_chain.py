"""Chain v1 encoding and the known-answer vectors (docs/ledger.md §8.1)."""

from __future__ import annotations

import datetime
import hashlib
import json
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest

from harness.ledger import chain
from harness.text import canonjson

VECTORS = json.loads((Path(__file__).parent / "vectors" / "chain_v1.json").read_text(encoding="utf-8"))


def values_of(row: dict[str, Any]) -> tuple[Any, ...]:
    """The 25 field values of a vector row in chain order, typed as the store holds them."""
    out: list[Any] = []
    for name, kind in chain.FIELDS:
        value = row[name]
        if value is not None:
            if kind == "uuid":
                value = uuid.UUID(value)
            elif kind == "timestamp":
                value = datetime.datetime.fromisoformat(value)
            elif kind == "bytes":
                value = bytes.fromhex(value)
            elif kind == "json":
                value = canonjson.dumps(value)
        out.append(value)
    return tuple(out)


def test_the_spec_vectors_are_the_first_two() -> None:
    names = [v["name"] for v in VECTORS["vectors"]]
    assert names[:2] == ["spec_start", "spec_end"]
    assert VECTORS["vectors"][0]["row_hash"] == "b6f78260971ff324ccb56d3c2057686591fd581031f99c663d31073960428742"
    assert VECTORS["vectors"][1]["row_hash"] == "559bcb83c182c1811272caff129c13d55af0d46e4e6f8223ca3ec7f88236e021"


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: v["name"])
def test_known_answer(vector: dict[str, Any]) -> None:
    assert chain.hash_values(values_of(vector["row"])).hex() == vector["row_hash"]


def test_vectors_chain_to_each_other() -> None:
    previous = chain.ZERO_HASH.hex()
    for vector in VECTORS["vectors"]:
        assert vector["row"]["prev_hash"] == previous
        previous = vector["row_hash"]


def test_preimage_bytes_of_the_spec_start_row() -> None:
    vector = VECTORS["vectors"][0]
    preimage = chain.encode_values(values_of(vector["row"]))
    assert preimage.hex() == vector["preimage_hex"]
    tag = b"triage-harness.ledger.row"
    assert preimage.startswith(struct.pack(">H", len(tag)) + tag + struct.pack(">HH", 1, 25))
    assert hashlib.sha256(preimage).hexdigest() == vector["row_hash"]


def test_field_order_and_count() -> None:
    assert chain.FIELD_NAMES == (
        "id",
        "conversation_id",
        "request_id",
        "tool_call_id",
        "tool_name",
        "event",
        "seq",
        "ts",
        "started_at",
        "ended_at",
        "duration_ms",
        "arguments",
        "args_bytes",
        "status",
        "error",
        "result_preview",
        "preview_bytes",
        "result_bytes",
        "result_truncated",
        "result_sidecar_path",
        "exit_code",
        "meta",
        "redaction_version",
        "chain_seq",
        "prev_hash",
    )


def _single(kind_index: int, value: Any) -> bytes:
    values: list[Any] = [None] * 25
    values[kind_index] = value
    header_len = 2 + len(chain.TAG) + 4
    return chain.encode_values(values)[header_len:]


def test_each_tag_and_payload() -> None:
    idx = chain.FIELD_NAMES.index
    null = b"\x00"
    # All other fields are NULL, so each encoding is the field's own bytes between NULL tags.
    assert _single(idx("conversation_id"), "é") == null + b"\x01\x00\x00\x00\x02\xc3\xa9" + null * 23
    assert _single(idx("seq"), -2) == null * 6 + b"\x02" + struct.pack(">q", -2) + null * 18
    assert _single(idx("result_truncated"), True) == null * 18 + b"\x03\x01" + null * 6
    assert _single(idx("result_truncated"), False) == null * 18 + b"\x03\x00" + null * 6
    ts = datetime.datetime(1970, 1, 1, 0, 0, 1, 5, tzinfo=datetime.UTC)
    assert _single(idx("ts"), ts) == null * 7 + b"\x04" + struct.pack(">q", 1_000_005) + null * 17
    assert _single(idx("prev_hash"), b"\x01\x02") == null * 24 + b"\x05\x00\x00\x00\x02\x01\x02"
    some = uuid.UUID("01941f29-7c4e-7a1b-9c3d-5e6f708192a3")
    assert _single(idx("id"), some) == b"\x06" + some.bytes + null * 24
    assert _single(idx("meta"), '{"a":1}') == null * 21 + b"\x07\x00\x00\x00\x07" + b'{"a":1}' + null * 3


def test_timestamps_before_the_epoch_and_other_zones() -> None:
    before = datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=datetime.UTC)
    assert chain.timestamp_micros(before) == -1
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    same_instant = datetime.datetime(1970, 1, 1, 2, 0, 0, 1, tzinfo=plus_two)
    assert chain.timestamp_micros(same_instant) == 1


def test_wrong_field_count_is_refused() -> None:
    with pytest.raises(ValueError):
        chain.encode_values([None] * 24)
