"""Known secret values from 4 bytes (whole tokens under 8), values that are not secrets, and values cut by a cap
(docs/decisions.md, "Secrets in output and logs")."""

from __future__ import annotations

import json

import pytest

from harness.text.redact import build_redactor
from harness.text.redact_known import KnownSecrets

LONG = "Zk3p9QxV7mN2rT8wAbCdEfGhIjKlMnOpQrStUvW"  # 39 characters, like the audit's MYAPP_API_KEY


def redactor_for(**environ: str):
    return build_redactor(KnownSecrets.from_environment(environ))


def test_a_seven_byte_password_is_registered_and_removed_from_ledger_text() -> None:
    red = redactor_for(DB_PASSWORD="Pw9xq7z")
    assert red.redact_for_ledger('{"dsn": "db Pw9xq7z"}', 8192) == '{"dsn": "db [REDACTED:known_secret]"}'
    assert red.redact_known("said Pw9xq7z.") == "said [REDACTED:known_secret]."


def test_a_four_byte_value_matches_only_as_a_whole_token() -> None:
    red = redactor_for(DB_PASSWORD="test")
    text = 'latest tests test_x xtest password=test "test" (test) test'
    assert red.redact_known(text) == (
        'latest tests test_x xtest password=[REDACTED:known_secret] "[REDACTED:known_secret]" '
        "([REDACTED:known_secret]) [REDACTED:known_secret]"
    )
    assert red.redact_known("tes") == "tes"


def test_eight_bytes_and_more_match_anywhere() -> None:
    red = redactor_for(API_TOKEN="eight888")
    assert red.redact_known("xeight888x") == "x[REDACTED:known_secret]x"


@pytest.mark.parametrize(
    "value", ["true", "FALSE", "null", "None", "    ", "****", "----", "12345", "1.5e+300", "-0.25"]
)
def test_values_that_are_not_secrets_are_not_registered(value: str) -> None:
    known = KnownSecrets.from_environment({"FEATURE_TOKEN": value})
    assert known.count == 0
    document = json.dumps({"ok": True, "n": None, "x": -0.25, "pad": "    ", "v": 12345, "big": 1.5e300})
    assert build_redactor(known).redact_known(document) == document


def test_filtering_twice_changes_nothing() -> None:
    red = redactor_for(X_SECRET="ACTE", Y_TOKEN="known_secret")
    once = red.redact_known("ACTE and known_secret")
    assert once == "[REDACTED:known_secret] and [REDACTED:known_secret]"
    assert red.redact_known(once) == once


@pytest.mark.parametrize("kept", range(4, len(LONG)))
def test_a_known_value_cut_by_the_cap_loses_its_surviving_prefix(kept: int) -> None:
    red = redactor_for(MYAPP_API_KEY=LONG)
    cap = 8192
    text = "a" * (cap - kept) + LONG + "tail"
    out = red.process(text, cap)
    assert out.capped and out.text.endswith("...[capped]")
    assert LONG[:kept] not in out.text and LONG[:4] not in out.text
    assert "known_secret" in out.rules_hit
    assert len(out.text.encode()) <= cap + len("...[capped]")


def test_a_cut_tail_under_four_bytes_survives_and_uncapped_text_keeps_prefixes() -> None:
    red = redactor_for(MYAPP_API_KEY=LONG)
    assert red.process("a" * 8189 + LONG, 8192).text.endswith("aZk3...[capped]")
    # Only a cut makes a prefix suspect: text that simply ends with one is left alone.
    assert red.process("the key starts Zk3p9Q", 8192).text == "the key starts Zk3p9Q"


def test_a_cut_tail_of_an_encoded_form_is_removed() -> None:
    red = redactor_for(MYAPP_API_KEY="abc/def+ghi=jkl/mno")
    out = red.process("x" * 8169 + "abc%2Fdef%2Bghi%3Djkl%2Fmno", 8192).text
    assert "abc%2F" not in out and out.endswith("[REDACTED:known_secret]...[capped]")


def test_a_cut_before_a_cap_marker_already_in_the_text_is_a_cut_too() -> None:
    red = redactor_for(MYAPP_API_KEY=LONG)
    assert red.redact(f"head {LONG[:20]}...[capped] more") == "head [REDACTED:known_secret]...[capped] more"
