"""The docs/investigate.md §9.5 step 4 payload cap (harness.investigate.rawcap), as a pure function."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.investigate.rawcap import (
    ARRAY_CAPPING,
    LEAF_TRUNCATION,
    MAX_PAYLOAD_BYTES,
    SUBTREE_PRUNING,
    WHOLE_PAYLOAD,
    cap_payload,
)
from harness.text.canonjson import dumps_bytes


def size(value: Any) -> int:
    return len(dumps_bytes(value))


def checked(payload: Any, budget: int = MAX_PAYLOAD_BYTES) -> Any:
    """Cap `payload`, checking the tracked size against a real serialization and that the input is untouched."""
    before = copy.deepcopy(payload)
    capped = cap_payload(payload, budget)
    assert payload == before
    assert capped.size == size(capped.payload)
    return capped


def test_a_payload_within_the_cap_is_returned_as_is() -> None:
    payload = {"k": "x" * (MAX_PAYLOAD_BYTES - 8)}
    assert size(payload) == MAX_PAYLOAD_BYTES
    capped = checked(payload)
    assert capped.payload is payload
    assert capped.stages == ()


def test_one_byte_over_the_cap_is_cut() -> None:
    capped = checked({"k": "x" * (MAX_PAYLOAD_BYTES - 7)})
    assert capped.stages == (LEAF_TRUNCATION,)
    assert capped.payload == {"k": "x" * 4096 + "...[truncated]"}


def test_a_huge_string_is_cut_at_4096_bytes_and_small_fields_stay() -> None:
    capped = checked({"big": "x" * 200_000, "small": "ok"})
    assert capped.payload == {"big": "x" * 4096 + "...[truncated]", "small": "ok"}
    assert capped.stages == (LEAF_TRUNCATION,)


def test_cjk_text_is_cut_on_code_point_boundaries() -> None:
    capped = checked({"text": "漢字かな" * 20_000})
    text = capped.payload["text"]
    assert text.endswith("...[truncated]")
    body = text.removesuffix("...[truncated]").encode("utf-8")
    assert len(body) == 4095
    assert "\ufffd" not in text
    assert ("漢字かな" * 20_000).encode("utf-8").startswith(body)


def test_the_first_leaf_cap_that_fits_is_kept() -> None:
    payload = {f"k{i:02d}": "y" * 5000 for i in range(20)}
    capped = checked(payload)
    assert {len(v) for v in capped.payload.values()} == {2048 + 14}
    assert size({k: "y" * 4096 + "...[truncated]" for k in payload}) > MAX_PAYLOAD_BYTES


def test_when_no_leaf_cap_fits_the_64_byte_pass_is_kept() -> None:
    capped = checked([f"{i:06d}" + "z" * 100 for i in range(2000)])
    assert capped.stages == (LEAF_TRUNCATION, ARRAY_CAPPING)
    assert all(len(item.encode()) <= 64 + 14 for item in capped.payload)
    assert capped.payload[0] == "000000" + "z" * 58 + "...[truncated]"


def test_a_long_array_keeps_its_longest_fitting_head() -> None:
    payload = list(range(40_000))
    capped = checked(payload)
    assert capped.stages == (ARRAY_CAPPING,)
    *head, marker = capped.payload
    assert head == payload[: len(head)]
    assert marker == f"[TRUNCATED: {40_000 - len(head)} more items]"
    assert capped.size <= MAX_PAYLOAD_BYTES
    one_more = [*payload[: len(head) + 1], f"[TRUNCATED: {40_000 - len(head) - 1} more items]"]
    assert size(one_more) > MAX_PAYLOAD_BYTES


def test_arrays_are_capped_innermost_first() -> None:
    block = {f"f{i:04d}": "s" for i in range(5000)}
    payload = {"a": [[block, block], 1], "small": "ok"}
    capped = checked(payload)
    assert capped.stages == (ARRAY_CAPPING,)
    # The inner array loses one block and the outer one then fits; capping the outer first would have lost both.
    assert capped.payload == {"a": [[block, "[TRUNCATED: 1 more items]"], 1], "small": "ok"}


def test_a_nested_array_capped_to_the_whole_cap_leaves_its_parent_over() -> None:
    payload = {"records": list(range(40_000)), "small": "ok"}
    capped = checked(payload)
    assert capped.stages == (ARRAY_CAPPING, SUBTREE_PRUNING)
    assert capped.payload["small"] == "ok"
    assert capped.payload["records"].startswith("[TRUNCATED: ~")


def test_many_members_are_cut_to_a_run_with_a_fields_marker() -> None:
    payload = {f"k{i:05d}": "v" * 44 for i in range(6000)}
    capped = checked(payload)
    assert capped.stages == (SUBTREE_PRUNING,)
    kept = sorted(k for k in capped.payload if k != "_truncated")
    assert kept == sorted(payload)[: len(kept)]
    assert capped.payload["_truncated"] == f"[TRUNCATED: {6000 - len(kept)} more fields]"
    longer = {k: payload[k] for k in sorted(payload)[: len(kept) + 1]}
    longer["_truncated"] = f"[TRUNCATED: {6000 - len(kept) - 1} more fields]"
    assert size(longer) > MAX_PAYLOAD_BYTES


def test_large_members_are_replaced_by_size_markers() -> None:
    sub = {f"field{i:04d}": "short value" for i in range(4000)}
    payload = {"a": sub, "b": sub, "c": sub, "small": "ok"}
    capped = checked(payload)
    marker = f"[TRUNCATED: ~{size(sub)} bytes]"
    assert size(sub) > 100_000
    assert capped.payload == {"a": marker, "b": marker, "c": marker, "small": "ok"}
    assert capped.stages == (SUBTREE_PRUNING,)


def test_pruning_takes_the_largest_member_first_and_ties_by_smallest_key() -> None:
    big = {f"f{i:04d}": "s" for i in range(2500)}
    bigger = {**big, "extra": "more"}
    payload = {"z": bigger, "c": big, "b": big, "a": big}
    capped = checked(payload)
    assert capped.payload == {
        "z": f"[TRUNCATED: ~{size(bigger)} bytes]",
        "a": f"[TRUNCATED: ~{size(big)} bytes]",
        "b": big,
        "c": big,
    }


def test_members_under_1024_bytes_are_never_pruned() -> None:
    payload = {f"k{i:05d}": {"v": ["w" * 40] * 20} for i in range(100)}
    capped = checked(payload)
    assert all(isinstance(v, dict) for k, v in capped.payload.items() if k != "_truncated")
    assert "_truncated" in capped.payload


def test_an_existing_truncated_member_counts_among_the_dropped_fields() -> None:
    payload = {"_truncated": "mine", **{f"k{i:05d}": "v" * 44 for i in range(2000)}}
    capped = checked(payload)
    kept = [k for k in capped.payload if k != "_truncated"]
    assert capped.payload["_truncated"] == f"[TRUNCATED: {2001 - len(kept)} more fields]"


def test_whole_payload_replacement_is_the_last_resort() -> None:
    payload = {"k" * 100: 1}
    capped = checked(payload, budget=40)
    assert capped.payload == f"[TRUNCATED: ~{size(payload)} bytes]"
    assert capped.stages == (SUBTREE_PRUNING, WHOLE_PAYLOAD)


def test_a_root_string_is_a_leaf() -> None:
    capped = checked("q" * 100_000)
    assert capped.payload == "q" * 4096 + "...[truncated]"


@pytest.mark.parametrize("value", [1e300, -12345678901234, True, None, 0.1])
def test_scalar_sizes_match_the_canonical_encoding(value: Any) -> None:
    payload = [value] * 20_000
    capped = checked(payload)
    assert capped.stages == ((ARRAY_CAPPING,) if size(payload) > MAX_PAYLOAD_BYTES else ())


def test_escaped_characters_are_counted_as_serialized() -> None:
    payload = {"k": '"\\\n\u0001' * 5000}
    capped = checked(payload, budget=10_000)
    assert capped.size <= 10_000


# Stored payloads are valid UTF-8 and get_raw_event strips Cs before capping, so no lone surrogates.
chars = st.characters(blacklist_categories=("Cs",))
json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(chars, max_size=40),
    st.builds(lambda ch, n: ch * n, chars, st.integers(0, 3000)),
)
json_trees = st.recursive(
    json_leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=30),
        st.dictionaries(st.text(chars, max_size=12), children, max_size=30),
    ),
    max_leaves=200,
)


@settings(max_examples=300, deadline=None)
@given(json_trees, st.integers(min_value=64, max_value=20_000))
def test_any_tree_fits_its_budget_deterministically(payload: Any, budget: int) -> None:
    first = checked(payload, budget)
    second = cap_payload(copy.deepcopy(payload), budget)
    assert dumps_bytes(first.payload) == dumps_bytes(second.payload)
    assert first.stages == second.stages
    assert first.size <= budget
    assert bool(first.stages) == (size(payload) > budget)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=3).map(lambda s: s * 2000), min_size=30, max_size=60))
def test_large_trees_fit_the_real_cap(strings: list[str]) -> None:
    payload = {"items": strings, "nested": {"again": strings}}
    capped = checked(payload)
    assert capped.size <= MAX_PAYLOAD_BYTES
