"""`Redactor.redact_known`: only the configured secret values are replaced; secret-shaped data is left alone."""

from __future__ import annotations

from harness.text.redact import KnownSecrets, build_redactor


def test_only_known_values_are_replaced() -> None:
    known = KnownSecrets.from_environment({"GITHUB_TOKEN": "opaque-known-value-123456"})
    redactor = build_redactor(known)
    text = "token opaque-known-value-123456 and password=hunter2hunter2"
    assert redactor.redact_known(text) == "token [REDACTED:known_secret] and password=hunter2hunter2"
    assert redactor.redact(text) != redactor.redact_known(text)


def test_without_known_values_text_is_returned_unchanged() -> None:
    redactor = build_redactor(KnownSecrets.from_environment({}))
    text = "password=hunter2hunter2 é \u2028"
    assert redactor.redact_known(text) is text
