"""The redactor's public API: known secret values (docs/ledger.md §6.4), the pipeline (docs/ledger.md §6.2), log lines, JSON trees."""

from __future__ import annotations

import json
import threading
from urllib.parse import quote, quote_plus

import pytest

from harness.text.redact import (
    CREDENTIAL_PLACEHOLDER,
    KnownSecrets,
    Processed,
    build_redactor,
    is_credential_key,
)

OPAQUE = "0paque-Value/with spaces&symbols+é"


def redactor_with(*values: str):
    known = KnownSecrets()
    for value in values:
        known.add(value, "test")
    return build_redactor(known)


# --- known secrets: collection from the environment -------------------------------------------


def test_secret_named_variables_are_collected_and_locations_are_not() -> None:
    env = {
        "GITHUB_TOKEN": "gho-opaque-1111",
        "MY_API_KEY": "opaque-api-2222",
        "DB_PASSWORD": "opaque-pass-3333",
        "X_AUTH": "opaque-auth-4444",
        "SENTRY_DSN": "opaque-dsn-55555",
        "GH_PAT": "opaque-pat-66666",
        "SLACK_WEBHOOK_URL": "opaque-hook-7777",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
        "GIT_AUTHOR_NAME": "Alice Example",
        "XAUTHORITY": "/home/alice/.Xauthority",
        "TOKEN_FILE": "/run/secrets/token",
        "SECRET_PATH": "/etc/secret/path",
        "PASSWORD_STORE_DIR": "/home/alice/.pass",
        "PATH": "/usr/bin:/bin:/usr/sbin",
        "PATCH_LEVEL": "opaque-not-a-pat",
    }
    known = KnownSecrets.from_environment(env)
    assert known.sources == ("DB_PASSWORD", "GH_PAT", "GITHUB_TOKEN", "MY_API_KEY", "SENTRY_DSN", "SLACK_WEBHOOK_URL", "X_AUTH")
    red = build_redactor(known)
    for name, value in env.items():
        expected_hidden = name in known.sources
        assert (value in red.redact(f"value: {value}")) is not expected_hidden, name


def test_ssh_auth_sock_and_git_author_name_are_not_collected() -> None:
    known = KnownSecrets.from_environment({"SSH_AUTH_SOCK": "/tmp/agent.12345", "GIT_AUTHOR_NAME": "Alice Example"})
    assert known.count == 0


def test_extra_and_excluded_names() -> None:
    env = {"DEPLOY_KEYRING": "opaque-keyring-1", "MY_TOKEN": "opaque-token-22", "OTHER_TOKEN_FILE": "opaque-file-333"}
    known = KnownSecrets.from_environment(
        env, extra_names=["deploy_keyring", "OTHER_TOKEN_FILE"], excluded_names=["MY_TOKEN"]
    )
    assert known.sources == ("DEPLOY_KEYRING", "OTHER_TOKEN_FILE")


def test_value_size_and_digit_filters() -> None:
    known = KnownSecrets()
    assert known.add("abc", "three bytes") is False
    assert known.add("1234567", "all digits") is False
    assert known.add("12345678901234", "all digits") is False
    assert known.add("x" * 65537, "too long") is False
    assert known.add("seven77", "seven bytes") is True
    assert known.add("eight888", "eight bytes") is True
    assert known.add("é" * 4, "eight utf-8 bytes") is True
    assert known.count == 3
    red = build_redactor(known)
    assert red.redact("abc 1234567 12345678901234") == "abc 1234567 12345678901234"
    assert red.redact("eight888") == "[REDACTED:known_secret]"
    assert red.redact("seven77") == "[REDACTED:known_secret]"


def test_url_password_in_any_variable_is_collected_whole_and_alone() -> None:
    env = {"DATABASE_URL": "postgresql://app:S3cr%40tPassw0rd@db.internal:5432/app", "HOME": "/home/alice"}
    known = KnownSecrets.from_environment(env)
    red = build_redactor(known)
    assert red.redact("pw S3cr%40tPassw0rd") == "pw [REDACTED:known_secret]"
    assert red.redact("pw S3cr@tPassw0rd") == "pw [REDACTED:known_secret]"
    assert "db.internal" not in red.redact(env["DATABASE_URL"])
    assert known.sources == ("DATABASE_URL",)


def test_repr_never_shows_values() -> None:
    known = KnownSecrets.from_environment({"API_TOKEN": OPAQUE})
    text = repr(known) + repr(build_redactor(known))
    assert OPAQUE not in text
    assert "count=1" in text and "API_TOKEN" in text


def test_opaque_env_value_redacted_everywhere() -> None:
    red = build_redactor(KnownSecrets.from_environment({"HARNESS_TEST_SENTINEL_TOKEN": OPAQUE}))
    assert red.redact(f"a {OPAQUE} b") == "a [REDACTED:known_secret] b"
    assert OPAQUE not in red.redact_for_ledger(f"x{OPAQUE}y" * 3, 8192)
    assert OPAQUE not in red.redact_line(f"line {OPAQUE}")
    tree = red.redact_json_leaves({"k": [f"v {OPAQUE}"], "n": 1}, 1024)
    assert tree == {"k": ["v [REDACTED:known_secret]"], "n": 1}


def test_json_escaped_and_percent_encoded_forms_are_caught() -> None:
    red = redactor_with(OPAQUE)
    for form in (
        json.dumps(OPAQUE)[1:-1],
        json.dumps(OPAQUE, ensure_ascii=False)[1:-1],
        quote(OPAQUE),
        quote(OPAQUE, safe=""),
        quote_plus(OPAQUE),
    ):
        assert red.redact(f"<{form}>") == "<[REDACTED:known_secret]>", form


def test_longest_value_wins_and_overlaps_merge() -> None:
    red = redactor_with("abcdefgh", "abcdefgh-ijklmnop", "mnopqrstuvw")
    assert red.redact("abcdefgh-ijklmnopqrstuvw!") == "[REDACTED:known_secret]!"
    assert red.redact("abcdefgh abcdefgh") == "[REDACTED:known_secret] [REDACTED:known_secret]"
    assert red.redact("xxabcdefghabcdefgh") == "xx[REDACTED:known_secret]"


def test_overlapping_occurrences_of_one_value_are_all_removed() -> None:
    red = redactor_with("aaaaaaaa")
    assert red.redact("aaaaaaaaaaa") == "[REDACTED:known_secret]"


def test_at_most_256_values_longest_kept() -> None:
    known = KnownSecrets()
    values = [f"v{index:03d}" + "x" * index for index in range(300)]
    for value in values:
        known.add(value, "S")
    assert set(known.patterns()) == {value.encode() for value in values[44:]}
    red = build_redactor(known)
    assert red.redact(values[43]) == values[43]
    assert red.redact(values[44]) == "[REDACTED:known_secret]"


def test_known_values_are_sanitized_like_text() -> None:
    red = redactor_with("nul\x00inside-value")
    assert red.redact("a nul\x00inside-value b") == "a [REDACTED:known_secret] b"


# --- pipeline -------------------------------------------------------------------------------------


def test_capped_on_code_point_boundary() -> None:
    red = build_redactor(KnownSecrets())
    assert red.redact_for_ledger("aaaé", 4) == "aaa...[capped]"
    assert red.process("aaaé", 4) == Processed("aaa...[capped]", 5, True, ())
    assert red.process("aaaé", 5) == Processed("aaaé", 5, False, ())
    assert red.redact_for_ledger("aaaé", 0) == "aaaé"
    assert red.redact_for_ledger("aaaé", -1) == "aaaé"


def test_nul_and_lone_surrogates() -> None:
    red = build_redactor(KnownSecrets())
    assert red.redact("a\x00b") == "a[NUL]b"
    assert red.redact("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert red.process("\ud800", 0).original_bytes == 3


def test_secret_after_the_cap_never_survives_and_a_cut_secret_is_redacted() -> None:
    red = redactor_with(OPAQUE)
    text = "x" * 20 + OPAQUE
    for cap in range(1, len(text.encode()) + 2):
        out = red.redact_for_ledger(text, cap)
        assert OPAQUE not in out
        assert len(out.encode()) <= cap + 11


def test_placeholder_growth_is_cut_outside_placeholders() -> None:
    red = redactor_with("secret-value")
    text = "secret-value " * 10
    out = red.process(text, 40)
    assert out.capped
    assert len(out.text.encode()) <= 51
    assert out.text.endswith("...[capped]")
    body = out.text[: -len("...[capped]")]
    assert body.replace("[REDACTED:known_secret]", "").strip() == ""
    assert red.redact_for_ledger(out.text, 4096) == out.text


def test_a_cut_that_lands_inside_a_token_prefix_is_redacted_again_and_stable() -> None:
    # Placeholder growth forces a second cut; at 53 bytes it would end in `ASIAN`, which, as the end
    # of input, is an access key prefix: the cut moves before it, so the stored text is a fixed point.
    red = redactor_with("s3cr3t-v")
    out = red.process("s3cr3t-v s3cr3t-v ASIANATIONALIST and more words", 53)
    assert out.text == "[REDACTED:known_secret] [REDACTED:known_secret] ...[capped]"
    assert out.capped and "aws_access_key_id" in out.rules_hit
    assert red.redact_for_ledger(out.text, 4096) == out.text


def test_rules_hit_lists_inserted_ids() -> None:
    red = redactor_with(OPAQUE)
    assert red.process(f"{OPAQUE} and {OPAQUE}", 0).rules_hit == ("known_secret",)
    assert red.process("clean", 0).rules_hit == ()


def test_existing_placeholders_and_markers_are_stable() -> None:
    red = redactor_with("[REDACTED:known_secret]x", "capped]xxx")
    text = "a [REDACTED:known_secret]xyz ...[capped]xxx"
    assert red.redact(text) == text


# --- log lines ------------------------------------------------------------------------------------


def test_redact_line_escapes_newlines_drops_controls_and_caps() -> None:
    red = redactor_with(OPAQUE)
    assert red.redact_line("a\r\nb\tc\x01\x7f\x85d\x00e") == "a\\r\\nb\tcde"
    assert red.redact_line(f"{OPAQUE}\n{OPAQUE}") == "[REDACTED:known_secret]\\n[REDACTED:known_secret]"
    assert red.redact_line("y" * 30, 10) == "y" * 10 + "...[capped]"
    assert red.redact_line(f"ab {OPAQUE}", 8) == "ab ...[capped]"


def test_redact_line_joins_a_secret_split_by_controls_before_redacting() -> None:
    red = redactor_with(OPAQUE)
    split = OPAQUE[:5] + "\x07" + OPAQUE[5:]
    assert red.redact_line(split) == "[REDACTED:known_secret]"


# --- JSON trees and the credential_key rule -------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["sessionToken", "SessionToken", "session_token", "SESSION_TOKEN", "session-token", "secretAccessKey",
     "SecretAccessKey", "SECRETACCESSKEY", "secret_access_key", "Secret-Access-Key"],
)
def test_credential_keys(key: str) -> None:
    assert is_credential_key(key)


@pytest.mark.parametrize("key", ["accessKeyId", "sessionName", "token", "secret", "access_key", "roleSessionName"])
def test_not_credential_keys(key: str) -> None:
    assert not is_credential_key(key)


def test_redact_tree_cloudtrail_vector() -> None:
    red = build_redactor(KnownSecrets())
    payload = {
        "sourceIPAddress": "203.0.113.7",
        "userIdentity": {"arn": "arn:aws:iam::123456789012:user/alice"},
        "requestParameters": {"roleSessionName": "alice-session", "accessKeyId": "key-id-1"},
        "responseElements": {"credentials": {"sessionToken": {"nested": ["anything", 1]}, "accessKeyId": "key-id-1"}},
        "nested": {"deeper": {"secretAccessKey": 12345}},
        "SessionToken": None,
        "SECRETACCESSKEY": "x",
        "session_token": ["a", "b"],
    }
    out, changed = red.redact_tree(payload)
    assert changed
    assert out["sourceIPAddress"] == "203.0.113.7"
    assert out["userIdentity"] == payload["userIdentity"]
    assert out["requestParameters"] == payload["requestParameters"]
    assert out["responseElements"]["credentials"] == {"sessionToken": CREDENTIAL_PLACEHOLDER, "accessKeyId": "key-id-1"}
    assert out["nested"]["deeper"]["secretAccessKey"] == CREDENTIAL_PLACEHOLDER
    for key in ("SessionToken", "SECRETACCESSKEY", "session_token"):
        assert out[key] == CREDENTIAL_PLACEHOLDER
    assert payload["SessionToken"] is None, "the input tree is not modified"


def test_redact_tree_reports_no_change_on_clean_trees() -> None:
    red = redactor_with(OPAQUE)
    tree = {"a": ["b", 1, 2.5, True, None, {"c": "d"}], "sessionToken": CREDENTIAL_PLACEHOLDER}
    assert red.redact_tree(tree) == (tree, False)
    out, changed = red.redact_tree({"a": [f"x {OPAQUE}"]})
    assert changed and out == {"a": ["x [REDACTED:known_secret]"]}


def test_redact_json_leaves_caps_every_leaf_and_applies_the_key_rule() -> None:
    red = build_redactor(KnownSecrets())
    tree = {"a": "x" * 50, "b": ["y" * 5, {"SessionToken": "t"}], "c": 7}
    assert red.redact_json_leaves(tree, 10) == {
        "a": "x" * 10 + "...[capped]",
        "b": ["y" * 5, {"SessionToken": CREDENTIAL_PLACEHOLDER}],
        "c": 7,
    }


def test_redactor_is_immutable_and_thread_safe() -> None:
    red = redactor_with(OPAQUE)
    with pytest.raises(AttributeError):
        red.extra = 1  # type: ignore[attr-defined]
    results: list[str] = []

    def work() -> None:
        for _ in range(200):
            results.append(red.redact(f"t {OPAQUE} t"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(results) == {"t [REDACTED:known_secret] t"}
