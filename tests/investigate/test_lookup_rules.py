"""lookup_rules (docs/investigate.md §9.4, docs/investigate.md §7): every vector over the embedded corpus through the CLI and the MCP
client, plus corpus selection, corpus errors and input refusals."""

from __future__ import annotations

import hashlib
import importlib.resources
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from doors import Answer, as_flags
from listing import listed_text

from harness.investigate import lookup_rules
from harness.investigate.rulefold import no_match_note
from harness.text import canonjson
from tests.investigate.baseline_support import (  # noqa: F401 - fixtures
    clean_env_fixture,
    workspace_fixture,
)

EMBEDDED = importlib.resources.files("harness.rules").joinpath("operator-decisions.yaml").read_bytes()
EMBEDDED_SHA256 = hashlib.sha256(EMBEDDED).hexdigest()
# The rules as plain YAML reads them: an oracle independent of the harness loader.
RULES = {rule["id"]: rule for rule in yaml.safe_load(EMBEDDED)["rules"]}

RULE_ID_PROBLEM = "must be a rule id: a letter or digit, then at most 63 letters, digits, '.', '_' or '-'"

ONE_RULE = b"""version: 1
rules:
  - id: W-1
    applies_to:
      family: unusual-timing
    operator_directive: Workspace rule.
"""


def rule_json(rule_id: str) -> dict[str, Any]:
    rule = RULES[rule_id]
    return {
        "id": rule["id"],
        "applies_to": {"family": rule["applies_to"]["family"], "metadata_match": rule["applies_to"]["metadata_match"]},
        "operator_directive": rule["operator_directive"],
    }


def expected(rule_ids: list[str], family: str, finding_id: str = "f-1", sha256: str = EMBEDDED_SHA256) -> str:
    notes = "" if rule_ids else no_match_note(family)
    return canonjson.dumps(
        {"finding_id": finding_id, "rules": [rule_json(r) for r in rule_ids], "corpus_sha256": sha256, "notes": notes}
    )


VECTORS: list[tuple[dict[str, Any], list[str]]] = [
    ({"finding_family": "unusual-timing", "maintenance_window": "true"}, ["R-001"]),
    ({"finding_family": "unusual-timing", "location_change": "true"}, ["R-005"]),
    ({"finding_family": "unusual-timing", "maintenance_window": "true", "location_change": "true"}, ["R-001", "R-005"]),
    ({"finding_family": "volume-anomaly", "scheduled": "true"}, ["R-002"]),
    ({"finding_family": "volume-anomaly", "deploy_release": "true"}, ["R-008"]),
    ({"finding_family": "auth-failure-burst", "resolution_event": "login_success"}, ["R-003"]),
    ({"finding_family": "auth-failure-burst", "resolution_event": "password_reset_then_login_success"}, ["R-004"]),
    ({"finding_family": "new-external-access", "hr_provisioning": "true"}, ["R-006"]),
    ({"finding_family": "new-actor", "finding_metadata": {"automationProvenance": "terraform"}}, ["R-007"]),
    ({"finding_family": "UNUSUAL-TIMING", "maintenance_window": "TRUE"}, ["R-001"]),
    ({"finding_family": "unusual-timing", "maintenance_window": " true"}, []),
    (
        {
            "finding_family": "unusual-timing",
            "maintenance_window": "true",
            "finding_metadata": {"maintenance_window": "false"},
        },
        ["R-001"],
    ),
    (
        {
            "finding_family": "unusual-timing",
            "maintenance_window": "false",
            "finding_metadata": {"maintenance_window": "true"},
        },
        [],
    ),
    (
        {
            "finding_family": "unusual-timing",
            "maintenance_window": "",
            "finding_metadata": {"maintenance_window": "true"},
        },
        ["R-001"],
    ),
    ({"finding_family": "unusual-timing"}, []),
    ({"finding_family": "forged-family", "maintenance_window": "true"}, []),
    (
        {"finding_family": "unusual-timing", "finding_metadata": {"maintenance-window": "true", "scheduled": ""}},
        ["R-001"],
    ),
    (
        {"finding_family": "volume-anomaly", "finding_metadata": {"Scheduled": "True", "deployRelease": "TRUE"}},
        ["R-002", "R-008"],
    ),
    ({"finding_family": "unusual-timing", "maintenance_window": "true", "scheduled": "true"}, ["R-001"]),
]


@pytest.mark.parametrize(("arguments", "rule_ids"), VECTORS, ids=[str(a) for a, _ in VECTORS])
def test_vectors_over_the_embedded_corpus(
    workspace: Path, door: Callable[..., Answer], arguments: dict[str, Any], rule_ids: list[str]
) -> None:
    result = door(workspace, "lookup_rules", {"finding_id": "f-1", **arguments}, encode=as_flags)
    assert not result.is_error
    assert result.text == expected(rule_ids, arguments["finding_family"])


def test_a_blank_family_passes_and_matches_nothing(workspace: Path, door: Callable[..., Answer]) -> None:
    result = door(
        workspace, "lookup_rules", {"finding_id": "f", "finding_family": " ", "maintenance_window": "true"}, encode=as_flags
    )
    assert result.text == expected([], " ", finding_id="f")
    # Echoed input is the JSON string of its sanitize_field form (docs/investigate.md §0): a blank family echoes as "".
    assert result.document["notes"] == no_match_note(" ") == no_match_note("")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"finding_family": "unusual-timing"}, "finding_id: is required"),
        ({"finding_id": "", "finding_family": "unusual-timing"}, "finding_id: must not be empty"),
        ({"finding_id": "f", "finding_family": ""}, "finding_family: is required unless rule_ids is given"),
        (
            {"finding_id": "f", "finding_family": "x" * 129},
            "finding_family: must be at most 128 bytes (UTF-8), got 129",
        ),
        ({"finding_id": "f" * 257, "finding_family": "x"}, "finding_id: must be at most 256 bytes (UTF-8), got 257"),
        (
            {"finding_id": "f", "finding_family": "x", "maintenance_window": "t" * 257},
            "maintenance_window: must be at most 256 bytes (UTF-8), got 257",
        ),
        (
            {"finding_id": "f", "finding_family": "x", "finding_metadata": {"maintenance_window": True}},
            "finding_metadata.maintenance_window: expected a string, got a boolean",
        ),
        (
            {"finding_id": "f", "finding_family": "x", "finding_metadata": {f"k{n}": "v" for n in range(65)}},
            "finding_metadata: must have at most 64 entries, got 65",
        ),
        (
            {"finding_id": "f", "finding_family": "x", "finding_metadata": {"k": "v" * 1025}},
            "finding_metadata.k: must be at most 1024 bytes (UTF-8), got 1025",
        ),
        (
            {
                "finding_id": "f",
                "finding_family": "x",
                "finding_metadata": {"maintenanceWindow": "a", "maintenance-window": "b"},
            },
            (
                'finding_metadata: keys "maintenanceWindow" and "maintenance-window" both normalize to '
                '"maintenance_window"'
            ),
        ),
        ({"finding_id": "f", "finding_family": "x", "findingMetadata": {}}, None),
        ({"finding_id": "f", "finding_family": "x", "finding_metadata": "maintenance_window=true"}, None),
    ],
)
def test_bad_arguments_are_invalid_input(
    workspace: Path, door: Callable[..., Answer], arguments: dict[str, Any], message: str | None
) -> None:
    result = door(workspace, "lookup_rules", arguments, encode=as_flags)
    assert result.is_error
    error = result.document["error"]
    assert (error["code"], error["operation"]) == ("invalid_input", "lookup_rules")
    if message is not None:
        assert error["message"] == message
    assert result.exit_code in (2, None)


def test_sixty_four_metadata_entries_are_accepted(workspace: Path, door: Callable[..., Answer]) -> None:
    metadata = {f"k{n}": "v" for n in range(63)} | {"maintenance_window": "true"}
    result = door(
        workspace,
        "lookup_rules",
        {"finding_id": "f-1", "finding_family": "unusual-timing", "finding_metadata": metadata},
        encode=as_flags,
    )
    assert result.text == expected(["R-001"], "unusual-timing")


def test_a_workspace_corpus_replaces_the_embedded_one(workspace: Path, door: Callable[..., Answer]) -> None:
    (workspace / "rules").mkdir()
    (workspace / "rules" / "operator-decisions.yaml").write_bytes(ONE_RULE)
    result = door(
        workspace,
        "lookup_rules",
        {"finding_id": "f-1", "finding_family": "Unusual-Timing", "maintenance_window": "true"},
        encode=as_flags,
    )
    assert result.document == {
        "finding_id": "f-1",
        "rules": [
            {
                "id": "W-1",
                "applies_to": {"family": "unusual-timing", "metadata_match": {}},
                "operator_directive": "Workspace rule.",
            }
        ],
        "corpus_sha256": hashlib.sha256(ONE_RULE).hexdigest(),
        "notes": "",
    }


def test_rules_flag_names_the_corpus(workspace: Path, tmp_path: Path, door: Callable[..., Answer]) -> None:
    explicit = tmp_path / "explicit.yaml"
    explicit.write_bytes(ONE_RULE.replace(b"W-1", b"X-1"))
    result = door(
        workspace, "lookup_rules", {"finding_id": "f-1", "finding_family": "unusual-timing"}, rules=explicit, encode=as_flags
    )
    assert [rule["id"] for rule in result.document["rules"]] == ["X-1"]
    assert result.document["corpus_sha256"] == hashlib.sha256(explicit.read_bytes()).hexdigest()


def _upstream(result: Answer) -> str:
    assert result.is_error and result.exit_code in (3, None), result.text
    error = result.document["error"]
    assert (error["code"], error["operation"]) == ("upstream_unavailable", "lookup_rules")
    return error["message"]


def test_a_broken_workspace_corpus_is_upstream_unavailable(workspace: Path, door: Callable[..., Answer]) -> None:
    (workspace / "rules").mkdir()
    (workspace / "rules" / "operator-decisions.yaml").write_text("version: 1\nrules: [\n")
    message = _upstream(door(workspace, "lookup_rules", {"finding_id": "f", "finding_family": "unusual-timing"}, encode=as_flags))
    assert message.startswith("rule corpus workspace: invalid YAML at line ")


def test_a_workspace_corpus_path_that_is_a_directory_is_upstream_unavailable(
    workspace: Path, door: Callable[..., Answer]
) -> None:
    (workspace / "rules" / "operator-decisions.yaml").mkdir(parents=True)
    message = _upstream(door(workspace, "lookup_rules", {"finding_id": "f", "finding_family": "unusual-timing"}, encode=as_flags))
    assert message.startswith("rule corpus workspace: ")


def test_a_missing_rules_file_is_upstream_unavailable(
    workspace: Path, tmp_path: Path, door: Callable[..., Answer]
) -> None:
    missing = tmp_path / "missing.yaml"
    result = door(workspace, "lookup_rules", {"finding_id": "f", "finding_family": "x"}, rules=missing, encode=as_flags)
    assert _upstream(result) == f'rule corpus explicit: file "{missing}" does not exist'


def test_a_pin_mismatch_is_upstream_unavailable(
    workspace: Path, door: Callable[..., Answer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_RULES_SHA256", "0" * 64)
    message = _upstream(door(workspace, "lookup_rules", {"finding_id": "f", "finding_family": "x"}, encode=as_flags))
    assert message == f"rule corpus sha256 mismatch: expected {'0' * 64}, got {EMBEDDED_SHA256} (embedded corpus)"


def test_a_matching_pin_loads(workspace: Path, door: Callable[..., Answer]) -> None:
    (workspace / "harness.toml").write_text(f'[rules]\nsha256 = "{EMBEDDED_SHA256.upper()}"\n')
    result = door(
        workspace,
        "lookup_rules",
        {"finding_id": "f-1", "finding_family": "unusual-timing", "maintenance_window": "true"},
        encode=as_flags,
    )
    assert result.text == expected(["R-001"], "unusual-timing")


def test_the_description_says_what_the_spec_asks() -> None:
    text = listed_text("lookup_rules")
    for phrase in (
        'usually "true"',
        '(write "true", not true)',
        "grounded in events you have read",
        "an omitted predicate never satisfies a rule",
        "a finding's event_ids feed search_events `ids`",
        "in corpus order",
        "whole value ignoring case",
        '"maxProperties": 64',
        '"maxLength": 1024',
        "upstream_unavailable",
        "No match is a normal result",
    ):
        assert phrase in text, phrase
    fields = lookup_rules.Input.model_fields
    assert list(fields)[2:12] == list(lookup_rules.FLAT_PREDICATES)
    assert all(fields[name].description for name in fields)


def _by_id(rules: list[str], notes: str, finding_id: str = "f-1") -> dict[str, Any]:
    return {"finding_id": finding_id, "rules": [rule_json(r) for r in rules], "corpus_sha256": EMBEDDED_SHA256,
            "notes": notes}


@pytest.mark.parametrize(
    ("rule_ids", "rules", "notes"),
    [
        (["R-003"], ["R-003"], ""),
        (["r-007", "R-001"], ["R-001", "R-007"], ""),
        (["R-002", "r-002", "R-002"], ["R-002"], ""),
        (["R-999"], [], 'no rule with id "R-999" exists in the corpus'),
        (
            ["R-999", "R-004", "nope", "r-999"],
            ["R-004"],
            'no rule with id "R-999" exists in the corpus no rule with id "nope" exists in the corpus',
        ),
    ],
)
def test_rule_ids_look_rules_up_by_id_ignoring_case(
    workspace: Path, door: Callable[..., Answer], rule_ids: list[str], rules: list[str], notes: str
) -> None:
    result = door(workspace, "lookup_rules", {"finding_id": "f-1", "rule_ids": rule_ids}, encode=as_flags)
    assert not result.is_error, result.text
    assert result.document == _by_id(rules, notes)


def test_rule_ids_with_a_family_keep_the_named_rules_that_match(
    workspace: Path, door: Callable[..., Answer]
) -> None:
    arguments = {
        "finding_id": "f-1",
        "finding_family": "unusual-timing",
        "maintenance_window": "true",
        "rule_ids": ["R-005", "R-001", "R-002", "R-999"],
    }
    result = door(workspace, "lookup_rules", arguments, encode=as_flags)
    assert result.document == _by_id(
        ["R-001"],
        'no rule with id "R-999" exists in the corpus '
        'rule "R-002" does not match family "unusual-timing" with the supplied predicates '
        'rule "R-005" does not match family "unusual-timing" with the supplied predicates',
    )


def test_rule_ids_are_flags_on_the_cli(workspace: Path) -> None:
    from runners import run_cli

    result = run_cli(["--workspace", str(workspace), "lookup_rules", "--finding-id", "f-1",
                      "--rule-ids", "r-006", "--rule-ids", "R-999"])
    assert result.exit_code == 0, result.stdout
    assert result.stdout == canonjson.dumps(_by_id(["R-006"], 'no rule with id "R-999" exists in the corpus')) + "\n"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"finding_id": "f"}, "finding_family: is required unless rule_ids is given"),
        ({"finding_id": "f", "finding_family": "", "rule_ids": []},
         "finding_family: is required unless rule_ids is given"),
        ({"finding_id": "f", "rule_ids": ["R-001"], "maintenance_window": "true"},
         "maintenance_window: a predicate needs finding_family"),
        ({"finding_id": "f", "rule_ids": ["R-001"], "finding_metadata": {"k": "", "scheduled": "true"}},
         "finding_metadata.scheduled: a predicate needs finding_family"),
        ({"finding_id": "f", "rule_ids": [""]}, "rule_ids[0]: must not be empty"),
        ({"finding_id": "f", "rule_ids": ["R" * 65]}, "rule_ids[0]: must be at most 64 bytes (UTF-8), got 65"),
        ({"finding_id": "f", "rule_ids": [f"R-{n}" for n in range(65)]},
         "rule_ids: must have at most 64 items, got 65"),
        ({"finding_id": "f", "rule_ids": 7}, "rule_ids: expected an array, got an integer"),
        ({"finding_id": "f", "rule_ids": ["R-001", "R-001\u202e"]}, f"rule_ids[1]: {RULE_ID_PROBLEM}"),
        ({"finding_id": "f", "rule_ids": ["-R1"]}, f"rule_ids[0]: {RULE_ID_PROBLEM}"),
        ({"finding_id": "f", "rule_ids": ["R 001"]}, f"rule_ids[0]: {RULE_ID_PROBLEM}"),
    ],
)
def test_bad_rule_id_selections_are_invalid_input(
    workspace: Path, door: Callable[..., Answer], arguments: dict[str, Any], message: str
) -> None:
    result = door(workspace, "lookup_rules", arguments, encode=as_flags)
    assert result.is_error and result.exit_code in (2, None)
    assert result.document["error"] == {"code": "invalid_input", "message": message, "operation": "lookup_rules"}


def test_empty_predicate_values_without_a_family_are_not_assertions(
    workspace: Path, door: Callable[..., Answer]
) -> None:
    result = door(workspace, "lookup_rules", {"finding_id": "f-1", "rule_ids": ["R-008"], "scheduled": "",
                                              "finding_metadata": {"deploy_release": ""}}, encode=as_flags)
    assert result.document == _by_id(["R-008"], "")
