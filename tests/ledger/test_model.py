"""The boundary conversion `prepare` (docs/ledger.md §4-docs/ledger.md §5), tested without a database."""

from __future__ import annotations

import dataclasses
import datetime
import json
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ledger_support import KNOWN_SECRET, T0

from harness.ledger import chain
from harness.ledger.errors import LedgerValueError
from harness.ledger.model import LedgerEvent, LedgerRow, PreparedRow, build_row, end_event, format_ts
from harness.ledger.redaction_boundary import prepare
from harness.text.redact import Redactor

UTC = datetime.UTC
LATER = T0 + datetime.timedelta(milliseconds=47)
NOW = T0 + datetime.timedelta(seconds=9)


def start(**fields: Any) -> LedgerEvent:
    base: dict[str, Any] = {
        "conversation_id": "conv-1",
        "request_id": "1",
        "tool_call_id": "call-1",
        "tool_name": "search_events",
        "event": "start",
    }
    base.update(fields)
    return LedgerEvent(**base)


def end(**fields: Any) -> LedgerEvent:
    base: dict[str, Any] = {"event": "end", "ended_at": LATER, "duration_ms": 46, "status": "ok"}
    base.update(fields)
    return start(**base)


def prep(redactor: Redactor, event: LedgerEvent, now: datetime.datetime | None = NOW) -> PreparedRow:
    return prepare(event, redactor, redaction_version=1, now=now)


def refused(redactor: Redactor, event: LedgerEvent, match: str) -> None:
    with pytest.raises(LedgerValueError, match=match):
        prep(redactor, event)


class TestTimestamps:
    def test_start_ts_defaults_to_started_at_then_the_clock(self, redactor: Redactor) -> None:
        assert prep(redactor, start(started_at=T0)).ts == T0
        row = prep(redactor, start())
        assert row.ts == row.started_at == NOW
        given_ts = prep(redactor, start(ts=T0, started_at=LATER))
        assert (given_ts.ts, given_ts.started_at) == (T0, LATER)

    def test_end_ts_defaults_to_ended_at(self, redactor: Redactor) -> None:
        row = prep(redactor, end(started_at=T0))
        assert row.ts == row.ended_at == LATER
        assert row.started_at == T0

    def test_no_timestamp_and_no_clock(self, redactor: Redactor) -> None:
        with pytest.raises(LedgerValueError, match="ts"):
            prep(redactor, start(), now=None)

    @pytest.mark.parametrize("field", ["ts", "started_at"])
    def test_naive_datetimes_are_refused(self, redactor: Redactor, field: str) -> None:
        refused(redactor, start(**{field: T0.replace(tzinfo=None)}), "naive")
        refused(redactor, end(ended_at=LATER.replace(tzinfo=None)), "naive")

    def test_other_zones_are_stored_in_utc(self, redactor: Redactor) -> None:
        plus_two = datetime.timezone(datetime.timedelta(hours=2))
        row = prep(redactor, start(ts=T0.astimezone(plus_two)))
        assert row.ts == T0 and row.ts.utcoffset() == datetime.timedelta(0)
        assert format_ts(row.ts) == "2026-01-02T03:04:05.123456Z"


class TestShape:
    @pytest.mark.parametrize(
        "field, value",
        [
            ("ended_at", LATER),
            ("duration_ms", 1),
            ("status", "ok"),
            ("error", "x"),
            ("result_preview", "{}"),
            ("result_bytes", 2),
            ("result_sidecar_path", "sidecars/c-1/x.result"),
            ("exit_code", 0),
            ("result_truncated", True),
        ],
    )
    def test_a_start_carries_no_end_column(self, redactor: Redactor, field: str, value: Any) -> None:
        refused(redactor, start(**{field: value}), "start row carries no end columns")

    def test_an_end_needs_ended_at_status_and_duration(self, redactor: Redactor) -> None:
        refused(redactor, end(ended_at=None), "ended_at")
        refused(redactor, end(status=None), "status")
        refused(redactor, end(status="maybe"), "status")
        refused(redactor, end(duration_ms=None), "duration_ms")
        refused(redactor, end(arguments="{}"), "arguments")

    def test_error_text_iff_error_status(self, redactor: Redactor) -> None:
        refused(redactor, end(status="error"), "needs error text")
        refused(redactor, end(status="error", error=""), "needs error text")
        refused(redactor, end(status="ok", error="boom"), "carries no error text")
        assert prep(redactor, end(status="ok", error="")).error is None
        assert prep(redactor, end(status="error", error="internal_error: boom")).error == "internal_error: boom"

    @pytest.mark.parametrize("field", ["conversation_id", "request_id", "tool_call_id"])
    def test_ids_must_match_the_grammar(self, redactor: Redactor, field: str) -> None:
        refused(redactor, start(**{field: "has space"}), field)
        refused(redactor, start(**{field: ""}), field)

    def test_tool_name_event_and_row_id(self, redactor: Redactor) -> None:
        refused(redactor, start(tool_name="Bad"), "tool_name")
        refused(redactor, start(event="middle"), "event")
        refused(redactor, start(id="01941f29-7c4e-7a1b-9c3d-5e6f708192a3"), "id")
        given_id = uuid.UUID("01941f29-7c4e-7a1b-9c3d-5e6f708192a3")
        assert prep(redactor, start(id=given_id)).id == given_id
        assert prep(redactor, start()).id.version == 7


class TestTextColumns:
    def test_arguments_capped_with_original_size(self, redactor: Redactor) -> None:
        text = "é" * 5000  # 10000 bytes
        row = prep(redactor, start(arguments=text))
        assert row.args_bytes == 10000
        assert row.arguments is not None and row.arguments.endswith("...[capped]")
        assert len(row.arguments.encode()) == 8192 + 11

    def test_empty_text_is_null_with_a_null_count(self, redactor: Redactor) -> None:
        row = prep(redactor, start(arguments=""))
        assert row.arguments is None and row.args_bytes is None
        row = prep(redactor, end(result_preview="", result_bytes=0))
        assert row.result_preview is None and row.preview_bytes is None and row.result_bytes == 0

    def test_error_capped(self, redactor: Redactor) -> None:
        row = prep(redactor, end(status="error", error="e" * 3000))
        assert row.error == "e" * 2048 + "...[capped]"

    def test_preview_size_and_truncation(self, redactor: Redactor) -> None:
        small = prep(redactor, end(result_preview="{}", result_bytes=2))
        assert (small.preview_bytes, small.result_bytes, small.result_truncated) == (2, 2, False)
        capped = prep(redactor, end(result_preview="x" * 3000, result_bytes=3000))
        assert capped.preview_bytes == 3000 and capped.result_truncated is True
        assert capped.result_preview == "x" * 2048 + "...[capped]"
        shorter = prep(redactor, end(result_preview="{}", result_bytes=10))
        assert shorter.result_truncated is True
        flagged = prep(redactor, end(result_preview="{}", result_bytes=2, result_truncated=True))
        assert flagged.result_truncated is True
        refused(redactor, end(result_preview="{}", result_bytes=1), "less than")

    def test_free_text_is_redacted(self, redactor: Redactor) -> None:
        secret_args = prep(redactor, start(arguments=f'{{"q":"{KNOWN_SECRET}"}}'))
        assert secret_args.arguments == '{"q":"[REDACTED:known_secret]"}'
        assert secret_args.args_bytes == len(f'{{"q":"{KNOWN_SECRET}"}}')
        row = prep(
            redactor, end(status="error", error=f"x: {KNOWN_SECRET}", result_preview=KNOWN_SECRET, result_bytes=99)
        )
        assert KNOWN_SECRET not in (row.error or "") and KNOWN_SECRET not in (row.result_preview or "")

    def test_nul_and_lone_surrogates(self, redactor: Redactor) -> None:
        row = prep(redactor, start(arguments="a\x00b\ud800c"))
        assert row.arguments == "a[NUL]b\ufffdc"
        assert row.args_bytes == len("a\x00b\ud800c".encode("utf-8", "surrogatepass"))


class TestIntegers:
    def test_saturation(self, redactor: Redactor) -> None:
        row = prep(redactor, end(duration_ms=2**70, result_bytes=2**70, exit_code=2**40))
        assert (row.duration_ms, row.result_bytes, row.exit_code) == (2**63 - 1, 2**63 - 1, 2**31 - 1)
        assert prep(redactor, end(exit_code=-(2**40))).exit_code == -(2**31)

    def test_negative_counts_and_wrong_types_are_refused(self, redactor: Redactor) -> None:
        refused(redactor, end(duration_ms=-1), "duration_ms")
        refused(redactor, end(result_bytes=-1), "result_bytes")
        refused(redactor, end(duration_ms=True), "duration_ms")
        refused(redactor, end(exit_code=1.0), "exit_code")

    def test_exit_code_zero_is_kept_and_none_is_null(self, redactor: Redactor) -> None:
        assert prep(redactor, end(exit_code=0)).exit_code == 0
        assert prep(redactor, end()).exit_code is None


class TestMeta:
    def test_canonical_and_redacted(self, redactor: Redactor) -> None:
        row = prep(redactor, start(meta={"z": "é😀", "a": [1, True, None, {"k": KNOWN_SECRET}]}))
        assert row.meta == '{"a":[1,true,null,{"k":"[REDACTED:known_secret]"}],"z":"é😀"}'

    def test_empty_meta_is_null(self, redactor: Redactor) -> None:
        assert prep(redactor, start(meta={})).meta is None
        assert prep(redactor, start()).meta is None

    def test_leaf_cap_and_sanitizing(self, redactor: Redactor) -> None:
        row = prep(redactor, start(meta={"a": "x" * 2000, "b": "n\x00l\udfff"}))
        parsed = json.loads(row.meta or "")
        assert parsed["a"] == "x" * 1024 + "...[capped]"
        assert parsed["b"] == "n[NUL]l\ufffd"

    def test_credential_key_tree_rule(self, redactor: Redactor) -> None:
        row = prep(redactor, start(meta={"creds": {"SessionToken": {"any": "thing"}}}))
        assert json.loads(row.meta or "") == {"creds": {"SessionToken": "[REDACTED:credential_key]"}}

    @pytest.mark.parametrize(
        "meta, match",
        [
            ({"f": 1.5}, "floats"),
            ({"n": 2**53 + 1}, "2\\^53"),
            ({"bad key": 1}, "key"),
            ({"1abc": 1}, "key"),
            ({KNOWN_SECRET: 1}, "redaction"),
            ({"a": {"b": {"c": {"d": {"e": 1}}}}}, "nesting"),
            ({"a": list(range(65))}, "at most 64"),
            ({"a": b"bytes"}, "unsupported"),
            (
                {
                    "a": "x" * 1000,
                    "b": "x" * 1000,
                    "c": "x" * 1000,
                    "d": "x" * 1000,
                    "e": "x" * 1000,
                    "f": "x" * 1000,
                    "g": "x" * 1000,
                    "h": "x" * 1000,
                    "i": "x" * 1000,
                },
                "8192",
            ),
        ],
    )
    def test_refusals(self, redactor: Redactor, meta: dict[str, Any], match: str) -> None:
        refused(redactor, start(meta=meta), match)

    def test_limits_themselves_are_accepted(self, redactor: Redactor) -> None:
        assert prep(redactor, start(meta={"a": {"b": {"c": {"d": 1}}}})).meta is not None
        assert prep(redactor, start(meta={"a": list(range(64)), "n": -(2**53)})).meta is not None

    def test_a_non_object_is_refused(self, redactor: Redactor) -> None:
        refused(redactor, start(meta=[1, 2]), "object")  # type: ignore[arg-type]


class TestSidecarPath:
    def test_kept_when_workspace_relative(self, redactor: Redactor) -> None:
        path = "sidecars/c-0123/01941f29-7c4e-7a1b-9c3d-5e6f708192a3.result"
        row = prep(redactor, end(result_preview="x" * 3000, result_bytes=3000, result_sidecar_path=path))
        assert row.result_sidecar_path == path and row.result_truncated is True

    @pytest.mark.parametrize("path", ["/etc/passwd", "../x", "sidecars/../x", "a//b", "a/./b", "a\\b", "a b"])
    def test_refused_otherwise(self, redactor: Redactor, path: str) -> None:
        refused(redactor, end(result_preview="x" * 3000, result_bytes=3000, result_sidecar_path=path), "sidecar")

    def test_a_sidecar_implies_truncation(self, redactor: Redactor) -> None:
        refused(redactor, end(result_preview="{}", result_bytes=2, result_sidecar_path="sidecars/x"), "implies")


def test_end_event_copies_the_call() -> None:
    stored = build_row(
        prepare(start(started_at=T0), _Identity(), redaction_version=1), seq=4, chain_seq=9, prev_hash=bytes(32)
    )
    event = end_event(stored, ended_at=LATER, duration_ms=1, status="ok")
    assert (event.conversation_id, event.request_id, event.tool_call_id, event.tool_name) == stored.key[:3] + (
        "search_events",
    )
    assert event.event == "end" and event.started_at == T0


class _Identity:
    """A redactor that changes nothing: shows build_row hashes exactly what prepare produced."""

    def redact(self, s: str) -> str:
        return s

    def redact_for_ledger(self, s: str, cap_bytes: int) -> str:
        return s

    def process(self, s: str, cap_bytes: int) -> tuple[str, int, bool, tuple[str, ...]]:
        return s, len(s.encode()), False, ()

    def redact_json_leaves(self, obj: Any, leaf_cap: int) -> Any:
        return obj


def test_build_row_hashes_the_chain_values(redactor: Redactor) -> None:
    prepared = prep(redactor, start(started_at=T0, arguments="{}"))
    row = build_row(prepared, seq=1, chain_seq=1, prev_hash=chain.ZERO_HASH)
    assert row.row_hash == chain.hash_values(row.chain_values())
    assert isinstance(row, LedgerRow) and row.seq == 1 and row.chain_seq == 1
    assert dataclasses.replace(row, seq=2).chain_values() != row.chain_values()


def test_to_json_form(redactor: Redactor) -> None:
    prepared = prep(redactor, start(started_at=T0, arguments="{}", meta={"surface": "cli"}))
    out = build_row(prepared, seq=1, chain_seq=1, prev_hash=chain.ZERO_HASH).to_json()
    assert out["ts"] == "2026-01-02T03:04:05.123456Z" and out["ended_at"] is None
    assert out["prev_hash"] == "00" * 32 and len(out["row_hash"]) == 64
    assert out["meta"] == {"surface": "cli"} and out["id"] == str(prepared.id)
    assert list(out)[:3] == ["id", "conversation_id", "request_id"] and len(out) == 26


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000), st.text(max_size=600))
def test_stored_text_never_exceeds_cap_plus_marker(text: str, meta_leaf: str) -> None:
    from harness.text.redact import KnownSecrets, build_redactor

    redactor = build_redactor(KnownSecrets())
    big = text * 4
    row = prep(
        redactor,
        end(status="error", error="e" + big, result_preview=big, result_bytes=2**62, meta={"m": meta_leaf * 3}),
    )
    assert row.error is None or len(row.error.encode()) <= 2048 + 11
    assert row.result_preview is None or len(row.result_preview.encode()) <= 2048 + 11
    assert row.preview_bytes is None or row.preview_bytes == len(big.encode("utf-8", "surrogatepass"))
    args = prep(redactor, start(arguments=big))
    assert args.arguments is None or len(args.arguments.encode()) <= 8192 + 11
    assert "\x00" not in (args.arguments or "")


def test_meta_cache_returns_the_same_text_and_never_caches_a_refusal() -> None:
    from harness.ledger.redaction_boundary import LedgerValueError, prepare_meta
    from harness.text.redact import KnownSecrets, build_redactor

    redactor = build_redactor(KnownSecrets())
    cache: dict[str, str] = {}
    meta = {"surface": "cli", "client": {"name": "agent", "version": "password=hunter2hunter2"}}
    first = prepare_meta(meta, redactor, cache=cache)
    assert first == prepare_meta(meta, redactor) == prepare_meta(dict(meta), redactor, cache=cache)
    assert "hunter2" not in first and len(cache) == 1
    for bad in ({"ratio": 0.5}, {"bad key!": "x"}):
        for _ in range(2):
            with pytest.raises(LedgerValueError):
                prepare_meta(bad, redactor, cache=cache)
    assert len(cache) == 1


@settings(max_examples=300, deadline=None)
@given(
    st.datetimes(
        min_value=datetime.datetime(1, 1, 2),
        max_value=datetime.datetime(9999, 12, 30),
        timezones=st.sampled_from([UTC, datetime.timezone(datetime.timedelta(hours=-7, minutes=-30))]),
    )
)
def test_format_ts_is_the_fixed_width_utc_form(value: datetime.datetime) -> None:
    u = value.astimezone(UTC)
    expected = f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}.{u.microsecond:06d}Z"
    assert format_ts(value) == expected
    assert datetime.datetime.fromisoformat(format_ts(value)) == value
