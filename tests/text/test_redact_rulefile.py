"""Rules as data: every rule's own examples (like Nosey Parker's `rules check`), the loader's refusals, workspace rules."""

from __future__ import annotations

import pytest

from harness.text.redact import (
    RULESET_FINGERPRINT,
    RuleFileError,
    build_redactor,
    load_workspace_rules,
)
from harness.text.redact_engine import ShapeEngine, example_problems
from harness.text.redact_known import KnownSecrets
from harness.text.redact_rules import CATALOGUE, MIN_EXAMPLES, MIN_NEGATIVE_EXAMPLES, expand_example_parts, parse_rules

REDACTOR = build_redactor(KnownSecrets())
IDS = [rule.rule_id for rule in CATALOGUE]


def four_grams(text: str) -> set[str]:
    return {text[i : i + 4] for i in range(len(text) - 3)}


@pytest.mark.parametrize("rule", CATALOGUE, ids=IDS)
def test_every_rule_has_its_examples(rule) -> None:
    assert len(rule.examples) >= MIN_EXAMPLES and len(rule.negative_examples) >= MIN_NEGATIVE_EXAMPLES
    assert rule.provider and rule.description


@pytest.mark.parametrize("rule", CATALOGUE, ids=IDS)
def test_every_example_is_found_by_its_rule_alone_and_redacted(rule) -> None:
    assert example_problems(rule) == []
    for index, example in enumerate(rule.examples):
        for seed in range(3):
            text, drawn = expand_example_parts(example, f"check:{rule.rule_id}:{index}:{seed}")
            out = REDACTOR.redact(text)
            assert out != text and "[REDACTED:" in out, out
            for body in drawn:
                if len(body) >= 8:
                    assert not four_grams(body) & four_grams(out.replace("[REDACTED:", "")), (body, out)


@pytest.mark.parametrize("rule", CATALOGUE, ids=IDS)
def test_every_negative_example_passes_unchanged(rule) -> None:
    alone = ShapeEngine((rule,))
    for index, negative in enumerate(rule.negative_examples):
        text, _ = expand_example_parts(negative, f"check:{rule.rule_id}:n{index}")
        raw = text.encode()
        assert alone.spans(raw, raw.lower()) == []
        assert REDACTOR.redact(text) == text


def test_a_rule_that_misses_its_example_is_reported() -> None:
    broken = parse_rules(_rule_text(examples='["acme_<<alnum:32>>", "ACME acme-<<alnum:32>>"]'), "t.toml",
                         first_number=1000)[0]
    assert example_problems(broken) == ["example 2 is not found by the rule (seed 0)"]


def _rule_text(**override: str) -> str:
    fields = {
        "id": '"acme_key"',
        "number": "1000",
        "provider": '"Acme"',
        "description": '"An Acme API key"',
        "class": '"token"',
        "examples": '["key acme_<<alnum:32>> here", "ACME=acme_<<alnum:32>>"]',
        "negative_examples": '["acme_short here", "the acme_ prefix"]',
    }
    fields.update(override)
    detector = override.pop("detector", 'kind = "token"\nliterals = ["acme_"]\ntail = "[A-Za-z0-9]{32}"')
    fields.pop("detector", None)
    head = "\n".join(f"{key} = {value}" for key, value in fields.items() if value)
    return f"[[rule]]\n{head}\n\n[[rule.detector]]\n{detector}\n"


def test_a_workspace_rule_redacts_and_changes_the_fingerprint() -> None:
    rules = load_workspace_rules(_rule_text(), "rules/redaction.toml")
    red = build_redactor(KnownSecrets(), rules)
    secret = "acme_" + "Ab3" * 10 + "Zz"
    assert red.redact(f"token {secret} end") == "token [REDACTED:acme_key] end"
    assert REDACTOR.redact(f"token {secret} end") == f"token {secret} end"
    assert REDACTOR.fingerprint == RULESET_FINGERPRINT
    assert red.fingerprint != RULESET_FINGERPRINT
    other = load_workspace_rules(_rule_text(detector='kind = "token"\nliterals = ["acme_"]\ntail = "[A-Za-z0-9]{30,40}"'),
                                 "rules/redaction.toml")
    assert build_redactor(KnownSecrets(), other).fingerprint not in (red.fingerprint, RULESET_FINGERPRINT)


def test_a_workspace_rule_may_use_the_package_fragments() -> None:
    detector = ('kind = "key_value"\nliterals = ["acme_sig"]\nkey = "{{SEP}}{{VALUE_QUOTE}}"\n'
                'value = { quoted = true, run = "[a-z0-9]{8,64}" }')
    text = _rule_text(detector=detector, **{"class": '"context"',
                      "examples": '["acme_sig=<<lower_alnum:20>>", "acme_sig: \\"<<lower_alnum:20>>\\""]',
                      "negative_examples": '["the acme_sig setting is unset"]'})
    red = build_redactor(KnownSecrets(), load_workspace_rules(text, "w.toml"))
    assert red.redact("acme_sig='abcdefgh1234'") == "acme_sig='[REDACTED:acme_key]'"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"examples": '["acme_<<alnum:32>>"]'}, "at least 2 examples and 1 negative example"),
        ({"negative_examples": "[]"}, "at least 2 examples and 1 negative example"),
        ({"number": "7"}, "field 'number' must be at least 1000"),
        ({"id": '"github_token"'}, "field 'id' is a package rule's id"),
        ({"id": '"Bad-Id"'}, "field 'id' must match"),
        ({"class": '"exact"'}, "field 'class' must be 'token' or 'context'"),
        ({"colour": '"red"'}, "unknown field 'colour'"),
        ({"provider": ""}, "missing field 'provider'"),
        ({"examples": '["acme_<<nope:32>>", "b"]'}, "unknown filler alphabet 'nope'"),
        ({"detector": 'kind = "regex"\nliterals = ["acme_"]'}, "detector 1: unknown kind 'regex'"),
        ({"detector": 'kind = "token"\nliterals = ["acme_"]\ntail = "[a-z]+"'}, "field 'tail'"),
        ({"detector": 'kind = "token"\nliterals = ["acme_"]\ntail = "[a-z]{1,9}+"'}, "field 'tail'"),
        ({"detector": 'kind = "token"\nliterals = ["acme_"]\ntail = "[a-z]{1,9}+"'}, "RE2 has no possessive"),
        ({"detector": 'kind = "token"\nliterals = ["acme_"]\ntail = "[a-z]{32}"\nleft = "x"'}, "unknown field 'left'"),
        ({"detector": 'kind = "key_value"\nliterals = ["acme"]\nkey = "{{NOPE}}"\nvalue = { run = "[a-z]{8}" }'},
         "unknown fragment {{NOPE}}"),
        ({"detector": 'kind = "key_value"\nliterals = ["acme"]\nkey = "("\nvalue = { run = "[a-z]{8}" }'},
         "field 'key' is not a valid pattern"),
        ({"detector": 'kind = "key_value"\nliterals = ["ACME"]\nvalue = { run = "[a-z]{8}" }'}, "lowercase literals"),
        ({"detector": 'kind = "key_value"\nliterals = ["acme"]\nvalue = { run = "[a-z]{8}" }\ncheck = "luhn"'},
         "unknown check 'luhn'"),
        ({"negative_examples": '["acme_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"]'}, "negative example 1 is found by the rule"),
        ({"detector": 'kind = "key_value"\nliterals = ["acme"]\nkey = "[a-z]{0,5}+="\nvalue = { run = "[a-z]{8}" }'},
         "field 'key' is not a valid pattern: RE2 cannot run it (bad repetition operator"),
        ({"detector": 'kind = "key_value"\nliterals = ["acme"]\nkey = "\\\\s*="\nvalue = { run = "[a-z]{8}" }'},
         "field 'key' has an unbounded repeat"),
        ({"detector": 'kind = "key_value"\nliterals = ["acme"]\nkey = "[a-z]{0,5000}="\nvalue = { run = "[a-z]{8}" }'},
         "field 'key' is not a valid pattern: RE2 cannot run it (invalid repetition size"),
        ({"detector": 'kind = "key_value"\nliterals = ["acme"]\nkey = "(?=x)="\nvalue = { run = "[a-z]{8}" }'},
         "field 'key' is not a valid pattern: RE2 cannot run it (invalid perl operator"),
        ({"detector": 'kind = "key_value"\nliterals = ["acme"]\nkey = "(=)\\\\1"\nvalue = { run = "[a-z]{8}" }'},
         "field 'key' is not a valid pattern: RE2 cannot run it (invalid escape sequence"),
        ({"detector": 'kind = "block"\nliterals = ["acme"]\nheader = "[a-z]{0,5}+:"\nend = "end"'},
         "detector 1: field 'header' is not a valid pattern"),
        ({"detector": 'kind = "key_value"\nliterals = ["acme"]\nvalue = { run = "[a-z]{8,99999}" }'},
         "field 'run'"),
    ],
)
def test_a_bad_workspace_rule_is_refused_naming_the_field(override: dict[str, str], message: str) -> None:
    with pytest.raises(RuleFileError, match=None) as caught:
        load_workspace_rules(_rule_text(**override), "rules/redaction.toml")
    assert message in str(caught.value)
    assert str(caught.value).startswith("rules/redaction.toml")


def test_a_file_that_is_not_toml_is_refused() -> None:
    with pytest.raises(RuleFileError, match="not valid TOML"):
        load_workspace_rules("[[rule]\n", "w.toml")
