"""Key normalization, record-key rewriting and payload lookup (docs/investigate.md §1.1)."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.text.casefold import MISSING, KeyCollisionError, lookup, normalize_key, normalize_record_keys


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("EventType", "event_type"),
        ("eventType", "event_type"),
        ("event-type", "event_type"),
        ("EVENT_TYPE", "event_type"),
        ("ID", "id"),
        ("Id", "id"),
        ("-id", "id"),
        ("userID", "user_id"),
        ("HTTPStatus", "httpstatus"),
        ("sourceIPAddress", "source_ipaddress"),
        ("event2Type", "event2_type"),
        ("a  b", "a_b"),
        ("_x", "x"),
        ("x_", "x_"),
        ("Event.Type", "event.type"),
        ("__a--b__", "a_b_"),
        ("knownIPs", "known_ips"),
        ("ÉtéFort", "été_fort"),
    ],
)
def test_spec_vectors(key: str, expected: str) -> None:
    assert normalize_key(key) == expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("", ""),
        ("event_type", "event_type"),
        ("___", ""),
        ("a_-_ b", "a_b"),
        # Only Lu opens a boundary: a titlecase letter or a non-letter keeps the flag rules.
        ("a.B", "a.b"),
        ("x٣Y", "x٣_y"),  # Arabic-Indic digit is Nd, so the flag is on before Y
        ("x²Y", "x²y"),  # superscript two is No, so the flag is off
        ("\u01c5x", "\u01c6x"),  # titlecase Dž lowers without a boundary
        ("aǄ", "a_ǆ"),  # uppercase Ǆ after a letter
    ],
)
def test_flag_rules(key: str, expected: str) -> None:
    assert normalize_key(key) == expected


KEY_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from("aAzZ09_- .ÉéİıßẞǅǄ٣²"),
        st.characters(codec="utf-8"),
    ),
    max_size=24,
)


@given(KEY_TEXT)
@example("A\U0001d71c")  # a capital with no lowercase form after a cased letter
def test_normalize_key_idempotent(key: str) -> None:
    once = normalize_key(key)
    assert normalize_key(once) == once


@given(KEY_TEXT)
def test_normalized_key_has_no_separator_run_or_leading_separator(key: str) -> None:
    out = normalize_key(key)
    assert "__" not in out and not out.startswith("_")
    assert "-" not in out and " " not in out


def test_record_keys_rewritten_in_order_values_kept() -> None:
    nested = {"InnerKey": {"DeepKey": 1}}
    record = {"ID": "e1", "EventType": "login", "metadata": nested, "Payload": {"SomeKey": [1]}}
    out = normalize_record_keys(record)
    assert list(out) == ["id", "event_type", "metadata", "payload"]
    assert out["metadata"] is nested
    assert out["metadata"] == {"InnerKey": {"DeepKey": 1}}
    assert out["payload"] == {"SomeKey": [1]}
    assert list(record) == ["ID", "EventType", "metadata", "Payload"]


def test_record_key_collision_message() -> None:
    with pytest.raises(KeyCollisionError) as info:
        normalize_record_keys({"EventType": "a", "event_type": "b"})
    assert str(info.value) == 'keys "EventType" and "event_type" both normalize to "event_type"'
    assert isinstance(info.value, ValueError)


def test_record_key_collision_names_first_two_in_input_order() -> None:
    with pytest.raises(KeyCollisionError) as info:
        normalize_record_keys({"x": 0, "event-type": 1, "EVENT_TYPE": 2, "eventType": 3})
    assert str(info.value) == 'keys "event-type" and "EVENT_TYPE" both normalize to "event_type"'


def test_record_key_collision_echoes_keys_sanitized() -> None:
    with pytest.raises(KeyCollisionError) as info:
        normalize_record_keys({"a\u202eb": 1, "A\u202eB": 2})
    assert str(info.value) == 'keys "ab" and "AB" both normalize to "ab"'


def test_lookup_spec_vectors() -> None:
    assert lookup({"TARGET": "x", "Target": "y"}, "target") == "x"
    assert lookup({"Target": "x", "target": "y"}, "target") == "y"


def test_lookup_exact_key_wins_even_when_later() -> None:
    assert lookup({"userId": 1, "user_id": 2}, "user_id") == 2


def test_lookup_absent_and_null() -> None:
    assert lookup({"other": 1}, "target") is MISSING
    assert lookup({}, "target") is MISSING
    assert lookup({"Target": None}, "target") is None


def test_lookup_does_not_match_other_normal_forms() -> None:
    # "TargetName" normalizes to target_name, not target.
    assert lookup({"TargetName": "x"}, "target") is MISSING


def test_missing_is_a_unique_singleton() -> None:
    assert MISSING is not None and MISSING != "MISSING"
    assert copy.deepcopy(MISSING) is MISSING
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING
    assert repr(MISSING) == "MISSING"


def test_ci_equal_is_str_lower_on_both_sides() -> None:
    from harness.text.casefold import ci_equal, ci_key

    assert ci_equal("R-001", "r-001") and ci_equal("DEPLOY-SVC", "deploy-svc")
    assert not ci_equal("STRASSE", "straße")
    assert not ci_equal("R-001", "R_001")
    assert ci_key("İ") == "İ".lower()
