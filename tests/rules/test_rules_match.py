"""Rule matching and the predicate map: the lookup_rules (docs/investigate.md §9.4) and search_events fold (docs/investigate.md §9.1) vectors."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.rules import Corpus, Rule, load_corpus, matches, matching_rules, predicate_map
from harness.text.casefold import normalize_key

FLAT_KEYS = (
    "maintenance_window",
    "scheduled",
    "resolution_event",
    "location_change",
    "automation_provenance",
    "deploy_release",
    "sensitive_bulk_read",
    "hr_provisioning",
    "scenario_pattern",
    "actor_role",
)


def _flat(**given: str) -> dict[str, str]:
    """The ten flat lookup_rules predicates, `""` unless given, as the operation passes them."""
    assert set(given) <= set(FLAT_KEYS)
    return {key: given.get(key, "") for key in FLAT_KEYS}


def _ids(family: str, metadata: dict[str, str] | None = None, **flat: str) -> list[str]:
    corpus = load_corpus(explicit=None, workspace=None, pin=None)
    return [rule.id for rule in matching_rules(corpus, family, predicate_map(metadata or {}, _flat(**flat)))]


@pytest.mark.parametrize(
    ("family", "metadata", "flat", "expected"),
    [
        ("unusual-timing", {}, {"maintenance_window": "true"}, ["R-001"]),
        ("unusual-timing", {}, {"location_change": "true"}, ["R-005"]),
        ("unusual-timing", {}, {"maintenance_window": "true", "location_change": "true"}, ["R-001", "R-005"]),
        ("volume-anomaly", {}, {"scheduled": "true"}, ["R-002"]),
        ("volume-anomaly", {}, {"deploy_release": "true"}, ["R-008"]),
        ("auth-failure-burst", {}, {"resolution_event": "login_success"}, ["R-003"]),
        ("auth-failure-burst", {}, {"resolution_event": "password_reset_then_login_success"}, ["R-004"]),
        ("new-external-access", {}, {"hr_provisioning": "true"}, ["R-006"]),
        ("new-actor", {"automationProvenance": "terraform"}, {}, ["R-007"]),
        ("UNUSUAL-TIMING", {}, {"maintenance_window": "TRUE"}, ["R-001"]),
        ("unusual-timing", {}, {"maintenance_window": " true"}, []),
        ("unusual-timing", {"maintenance_window": "false"}, {"maintenance_window": "true"}, ["R-001"]),
        ("unusual-timing", {"maintenance_window": "true"}, {"maintenance_window": "false"}, []),
        ("unusual-timing", {"maintenance_window": "true"}, {"maintenance_window": ""}, ["R-001"]),
        ("unusual-timing", {}, {}, []),
        ("no-such-family", {}, {"maintenance_window": "true"}, []),
        (" ", {}, {"maintenance_window": "true"}, []),
    ],
)
def test_lookup_rules_vectors(family: str, metadata: dict[str, str], flat: dict[str, str], expected: list[str]) -> None:
    assert _ids(family, metadata, **flat) == expected


def test_search_events_fold_vector() -> None:
    corpus = load_corpus(explicit=None, workspace=None, pin=None)
    predicates = predicate_map({"maintenanceWindow": "TRUE"}, {})
    assert [r.id for r in matching_rules(corpus, "UNUSUAL-TIMING", predicates)] == ["R-001"]
    assert matching_rules(corpus, "unusual-timing", predicate_map({}, {})) == []


def test_values_are_not_coerced_or_trimmed() -> None:
    assert _ids("unusual-timing", maintenance_window="True") == ["R-001"]
    assert _ids("unusual-timing", maintenance_window="true ") == []
    assert _ids("unusual-timing", maintenance_window="1") == []
    assert _ids("unusual-timing", maintenance_window="yes") == []
    assert _ids(" unusual-timing", maintenance_window="true") == []


def test_a_predicate_of_another_rule_does_not_help() -> None:
    assert _ids("unusual-timing", scheduled="true") == []
    assert _ids("volume-anomaly", maintenance_window="true") == []


def test_family_alone_decides_without_metadata_match() -> None:
    rule = Rule("G-1", "Any-Family", {}, "Do.")
    assert matches(rule, "any-family", {})
    assert matches(rule, "ANY-FAMILY", {"x": "y"})
    assert not matches(rule, "other", {})


def test_every_entry_of_metadata_match_must_hold() -> None:
    rule = Rule("G-2", "fam", {"a": "1", "b": "two"}, "Do.")
    assert matches(rule, "fam", {"a": "1", "b": "TWO", "c": "extra"})
    assert not matches(rule, "fam", {"a": "1"})
    assert not matches(rule, "fam", {"a": "1", "b": "three"})


def test_matching_rules_keeps_corpus_order() -> None:
    rules = (Rule("Z", "fam", {}, "z"), Rule("A", "fam", {"k": "v"}, "a"), Rule("M", "other", {}, "m"))
    corpus = Corpus(rules=rules, sha256="0" * 64, source="explicit")
    assert [r.id for r in matching_rules(corpus, "FAM", {"k": "V"})] == ["Z", "A"]


# --- predicate map -------------------------------------------------------------------


def test_metadata_keys_normalizing_alike_are_refused() -> None:
    with pytest.raises(ValueError) as info:
        predicate_map({"maintenanceWindow": "true", "maintenance_window": "true"}, {})
    assert str(info.value) == (
        'finding_metadata: keys "maintenanceWindow" and "maintenance_window" both normalize to "maintenance_window"'
    )


def test_collision_is_refused_even_when_a_value_is_empty() -> None:
    with pytest.raises(ValueError, match='keys "a-b" and "A_B" both normalize to "a_b"'):
        predicate_map({"a-b": "", "A_B": "true"}, {})


def test_collision_message_echoes_keys_sanitized() -> None:
    with pytest.raises(ValueError) as info:
        predicate_map({"x\u200b": "1", "X\u200b": "2"}, {})
    assert str(info.value) == 'finding_metadata: keys "x" and "X" both normalize to "x"'


def test_metadata_keys_are_normalized_and_empty_values_dropped() -> None:
    assert predicate_map({"maintenanceWindow": "TRUE", "Scheduled": "", "deploy-release": "x"}, {}) == {
        "maintenance_window": "TRUE",
        "deploy_release": "x",
    }


def test_non_empty_flat_fields_overlay_metadata() -> None:
    assert predicate_map(
        {"maintenance_window": "false", "location_change": "true"}, _flat(maintenance_window="true")
    ) == {
        "maintenance_window": "true",
        "location_change": "true",
    }
    assert predicate_map({"maintenance_window": "true"}, _flat()) == {"maintenance_window": "true"}


def test_omitted_predicate_never_satisfies_a_rule() -> None:
    assert "maintenance_window" not in predicate_map({"maintenance_window": ""}, _flat())
    assert _ids("unusual-timing", {"maintenance_window": ""}) == []


_ascii = st.text(alphabet=string.ascii_letters + string.digits + "-_ ", min_size=1, max_size=16)
_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)


@given(family=_ascii, want=_ascii)
def test_matching_ignores_case_but_nothing_else(family: str, want: str) -> None:
    rule = Rule("P-1", family, {"k": want}, "Do.")
    assert matches(rule, family.swapcase(), {"k": want.swapcase()})
    assert not matches(rule, family, {"k": want + "x"})
    assert not matches(rule, family, {"k": " " + want})
    assert not matches(rule, family + "x", {"k": want})
    assert not matches(rule, family, {})


@given(metadata=st.dictionaries(_text, _text, max_size=6), flat=st.dictionaries(st.sampled_from(FLAT_KEYS), _text))
def test_predicate_map_properties(metadata: dict[str, str], flat: dict[str, str]) -> None:
    try:
        predicates = predicate_map(metadata, flat)
    except ValueError:
        assert len({normalize_key(k) for k in metadata}) < len(metadata)
        return
    assert "" not in predicates.values()
    for key, value in metadata.items():
        name = normalize_key(key)
        if not flat.get(name) and value:
            assert predicates[name] == value
    for key, value in flat.items():
        if value:
            assert predicates[key] == value
    assert set(predicates) <= {normalize_key(k) for k in metadata} | set(flat)
