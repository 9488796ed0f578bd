"""Regressions from the reference ledger, the spec's worked examples, adversarial inputs, the fingerprint."""

from __future__ import annotations

import hashlib
import json

import pytest

from harness.text import canonjson
from harness.text.redact import RULESET_FINGERPRINT, RULESET_VERSION, build_redactor, describe_ruleset
from harness.text.redact_known import KnownSecrets
from tests.text.redact_fixtures import BY_NUMBER

REDACTOR = build_redactor(KnownSecrets())
GITHUB = BY_NUMBER[37].secret(11)
JWT = BY_NUMBER[23].secret(11)

# Pinned per version: changing a rule, a terminator, a stop-list or the placeholder changes the
# fingerprint, and this table then needs a new entry under a bumped RULESET_VERSION.
FINGERPRINTS = {
    # The 60 rules of the first catalogue (as Python tuples, then unchanged as redaction_rules.toml).
    1: "b4d481530b85d1594e55e04c95093d80470c250410e4603ef0062a2ddd98ee57",
    # Rules 61-103 (password hashes, command-line passwords, Okta, New Relic, ...), rule 12's new gates, SSWS in
    # rule 6; known values from 4 bytes (whole tokens under 8), non-secret values refused, cut tails removed;
    # issue 8 item 4: rule 13 ignores a key after `:` (ARN resource types), key suffixes arn, scope(s),
    # last_eight, changed;
    # item 3: escaped views (JSON string levels, percent-encoding) and the Kerberos TGS tail fixed.
    2: "aaa7d654088d19b3d184a8bc9b6c4a6d039498b919b8eac2b4eaff68441508dc",
    # Rules 104-220 (issue 8 coverage: the gitleaks default and detect-secrets families the first catalogue lacked,
    # generic quoted-key, setter, XML, directive and flag syntaxes, hashes) and the engine switch to RE2
    # (docs/decisions.md, "Redaction engine switch"): greedy runs where possessive ones were, RE2's \s (no
    # vertical tab), open runs clamped by length, RE2::Set gate patterns per detector.
    3: "5ffcda24d9172b4ab258f45b9e09fe6dcd25ba087c0f5cbc5f1d9e4de888c4eb",
    # Key rules' gates also say what the value opens with: a partial value's whole first items, a run's first
    # byte, or the check's own pattern (digit_or_mark, decodes_with_colon on the original bytes); no answer
    # changes (tests/text/test_redact_gates.py), the gates skip more prose.
    4: "9b01f0fff2dbeef322eeccb2180946b55c2d5786612d3eb79aca71f03170d0c2",
}


def test_fingerprint_is_recomputed_and_pinned_to_the_version() -> None:
    recomputed = hashlib.sha256(canonjson.dumps_bytes(describe_ruleset())).hexdigest()
    assert recomputed == RULESET_FINGERPRINT
    assert FINGERPRINTS[RULESET_VERSION] == RULESET_FINGERPRINT
    description = describe_ruleset()
    assert [rule["number"] for rule in description["rules"]] == list(range(1, len(description["rules"]) + 1))
    assert description["placeholder"] == "[REDACTED:{rule_id}]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2", "password=[REDACTED:kv_secret]"),
        ("postgres://app:s3cretpass@db.internal/app", "postgres://[REDACTED:url_userinfo]@db.internal/app"),
        ("Authorization: Bearer abc.def-123", "Authorization: Bearer [REDACTED:auth_header]"),
        ("password=[REDACTED:kv_secret]", "password=[REDACTED:kv_secret]"),
        ("postgresql://[REDACTED:url_userinfo]@host/db", "postgresql://[REDACTED:url_userinfo]@host/db"),
    ],
)
def test_spec_examples(text: str, expected: str) -> None:
    assert REDACTOR.redact(text) == expected


def test_a_header_value_never_swallows_the_rest_of_a_one_line_json_document() -> None:
    doc = '{"Authorization": "Bearer abc123xyz", "other": "value", "n": 1}'
    assert REDACTOR.redact(doc) == '{"Authorization": "Bearer [REDACTED:auth_header]", "other": "value", "n": 1}'
    escaped = json.dumps({"raw": doc})
    out = REDACTOR.redact(escaped)
    assert "abc123xyz" not in out and '\\"other\\": \\"value\\"' in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"password": "a"}', '{"password": "[REDACTED:json_secret]"}'),
        ('{"token": "ab"}', '{"token": "[REDACTED:json_secret]"}'),
        ("password=a", "password=[REDACTED:kv_secret]"),
        ("secret: ab", "secret: [REDACTED:kv_secret]"),
    ],
)
def test_one_and_two_character_values_are_redacted(text: str, expected: str) -> None:
    assert REDACTOR.redact(text) == expected


def test_a_json_value_cut_before_its_closing_quote() -> None:
    assert REDACTOR.redact('{"password": "abcdef') == '{"password": "[REDACTED:json_secret]'
    assert REDACTOR.redact('{"x": "{\\"api_key\\": \\"abcdef') == '{"x": "{\\"api_key\\": \\"[REDACTED:json_secret]'


def test_a_pem_without_end_and_a_url_cut_inside_its_userinfo() -> None:
    assert REDACTOR.redact("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA") == (
        "-----BEGIN RSA PRIVATE KEY-----\n[REDACTED:pem_private_key]"
    )
    assert REDACTOR.redact("postgres://app:s3cr") == "postgres://[REDACTED:url_userinfo]"


def test_error_text_and_meta_leaves_are_redacted() -> None:
    error = REDACTOR.redact_for_ledger(f"invalid_input: bad credential {GITHUB} given", 2048)
    assert error == "invalid_input: bad credential [REDACTED:github_token] given"
    meta = REDACTOR.redact_json_leaves({"client": {"name": f"agent {JWT}"}, "list": ["password=y"], "n": 3}, 1024)
    assert meta == {"client": {"name": "agent [REDACTED:jwt]"}, "list": ["password=[REDACTED:kv_secret]"], "n": 3}


def test_capped_on_a_code_point_and_nul() -> None:
    assert REDACTOR.redact_for_ledger("aaaé", 4) == "aaa...[capped]"
    assert REDACTOR.redact_for_ledger("a\x00b", 100) == "a[NUL]b"


def test_a_secret_after_the_cap_never_survives() -> None:
    text = "x" * 100 + " " + GITHUB
    for cap in range(95, len(text) + 1):
        out = REDACTOR.redact_for_ledger(text, cap)
        assert GITHUB[4:8] not in out and GITHUB[-4:] not in out, (cap, out)


def test_a_token_inside_a_megabyte_subtree_never_appears() -> None:
    tree = {"big": {"inner": ["y" * 500_000, f"lead {GITHUB} tail " + "z" * 500_000]}, "small": "ok"}
    out, changed = REDACTOR.redact_tree(tree)
    assert changed and GITHUB not in json.dumps(out) and out["small"] == "ok"


def test_placeholders_never_create_or_hide_a_match() -> None:
    text = f"token={GITHUB} and {GITHUB}token: abc and password=[REDACTED:kv_secret]x"
    once = REDACTOR.redact(text)
    assert REDACTOR.redact(once) == once
    assert GITHUB not in once


ADVERSARIAL = {
    "spaces then quote": " " * 8192 + '"',
    "scheme runs": "://" + "a" * 20,
    "unterminated escaped json": '"password": "' + "\\x" * 4096,
    "pem headers without end": "-----BEGIN PRIVATE KEY-----\n",
    "secret assignments": "secret=",
    "jwt headers": "eyJ",
    "digits and :A": "123456789:A",
    "azure anchors": "Q~",
    "authorization headers": "authorization: ",
    "base64 pem": "LS0tLS1CRUdJTi",
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_inputs_are_redacted_and_stable(name: str) -> None:
    unit = ADVERSARIAL[name]
    text = (unit * (8192 // len(unit) + 1))[:8192] if name != "unterminated escaped json" else unit
    if name == "base64 pem":
        text = unit + "QUJD" * 2048
    out = REDACTOR.redact(text)
    assert REDACTOR.redact(out) == out
    assert len(REDACTOR.redact_for_ledger(text, 8192).encode()) <= 8192 + 11


def test_adversarial_outputs() -> None:
    assert REDACTOR.redact("secret=" * 4) == "secret=[REDACTED:kv_secret]"
    assert REDACTOR.redact('"password": "' + "\\x" * 100) == '"password": "[REDACTED:json_secret]'
    assert REDACTOR.redact("-----BEGIN PRIVATE KEY-----\n" * 3) == (
        "-----BEGIN PRIVATE KEY-----\n[REDACTED:pem_private_key]\n"
    )
    assert REDACTOR.redact("LS0tLS1CRUdJTi" + "QUJD" * 20) == "[REDACTED:pem_base64]"


@pytest.mark.parametrize(
    ("positive", "rule_id"),
    [
        ('{"password": "hunter2hunter2"}', "json_secret"),
        ('{"auth": "dXNlcjpwYXNzd29yZA=="}', "docker_auth"),
        ('{"private_key_id": "' + "ab" * 20 + '"}', "gcp_private_key_id"),
    ],
)
def test_json_echoed_inside_an_error_document_is_still_redacted(positive: str, rule_id: str) -> None:
    value = json.loads(positive).popitem()[1]
    once = json.dumps({"message": positive})
    twice = json.dumps({"error": {"message": "got " + json.dumps(positive)}})
    for text in (positive, once, twice):
        redacted = REDACTOR.redact(text)
        assert value not in redacted
        assert f"[REDACTED:{rule_id}]" in redacted


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: SSWS 00Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3",
         "Authorization: SSWS [REDACTED:auth_header]"),
        ("sshpass -p 'S3cr3t-Pass' ssh deploy@10.0.0.5", "sshpass -p '[REDACTED:cli_password_option]' ssh deploy@10.0.0.5"),
        ("PsExec.exe \\\\host -u Administrator -p dev_admin cmd",
         "PsExec.exe \\\\host -u Administrator -p [REDACTED:cli_password_option] cmd"),
        ("Connect-VIServer -Server vc01 -User root -Password VMware1!",
         "Connect-VIServer -Server vc01 -User root -Password [REDACTED:cli_password_option]"),
        ("Driver={SQL Server};Uid=sa;Pwd=abc123!;", "Driver={SQL Server};Uid=sa;Pwd=[REDACTED:dsn_password];"),
        ('new NetworkCredential("svc", "pw-123456")', 'new NetworkCredential("svc", "[REDACTED:code_password]")'),
        ("bob:$6$saltsalt$" + "a" * 86 + ":19500:0", "bob:[REDACTED:password_hash]:19500:0"),
    ],
)
def test_issue_8_families_keep_their_context_and_lose_the_secret(text: str, expected: str) -> None:
    assert REDACTOR.redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "A" * 120 + "==",  # base64 of zero bytes, as binary dumps print it
        "sha256:" + "ab" * 32,
        "release v1.0-rc1 of REST-API-GATEWAY",
    ],
)
def test_identifier_shapes_near_the_new_prefixes_pass_unchanged(text: str) -> None:
    assert REDACTOR.redact(text) == text
