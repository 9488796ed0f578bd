"""Indicator normalization, refusal, pattern safety and duplicates (docs/triage.md §8)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from triage_samples import tp_sample

from harness.triage.ioc import (
    IndicatorCheck,
    IndicatorError,
    check_indicators,
    check_pattern,
    ioc_entries,
    normalize_indicator,
)
from harness.triage.verdict import IocChange, Suppression, validate_verdict

UPPER_HASH = "854216ADD0A53613DB64D748EAC6731FB549C9ADA21B33CEAFEC83C6597F584D"


def refused(indicator_type: str, value: str) -> str:
    with pytest.raises(IndicatorError) as info:
        normalize_indicator(indicator_type, value)
    return str(info.value)


# The docs/triage.md §8 vector table.


def test_hash_is_lowercased() -> None:
    assert normalize_indicator("hash", UPPER_HASH) == UPPER_HASH.lower()


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("a" * 63, "hash length 63 is not 32, 40, 56, 64, 96 or 128"),
        (hashlib.sha256(b"").hexdigest(), "hash is the sha256 digest of empty input"),
        ("0" * 64, "hash is one repeated character"),
    ],
)
def test_hash_vectors_refused(value: str, reason: str) -> None:
    assert refused("hash", value) == reason


@pytest.mark.parametrize(
    ("value", "normalized"),
    [
        ("Updates.Tiny-Typo-C2.net.", "updates.tiny-typo-c2.net"),
        ("https://User@Evil-Cdn.net:8443/p.sh", "evil-cdn.net"),
    ],
)
def test_domain_vectors(value: str, normalized: str) -> None:
    assert normalize_indicator("domain", value) == normalized


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("203.0.113.7", "domain is an IP literal (write C2 addresses as bounded pkgbuild_pattern entries)"),
        ("[2001:db8::1]", "domain is an IP literal (write C2 addresses as bounded pkgbuild_pattern entries)"),
        ("intranet", "domain is not a host name of two or more valid labels"),
        ("cdn.example.com", "domain is reserved"),
        ("c2.test", "domain is reserved"),
    ],
)
def test_domain_vectors_refused(value: str, reason: str) -> None:
    assert refused("domain", value) == reason


def test_package_vectors_through_the_verdict() -> None:
    def tp_with_package(expires_at: str | None) -> dict[str, object]:
        doc = tp_sample()
        doc["proposed_changes"].append(
            {
                "kind": "ioc",
                "type": "package",
                "value": "tiny-typo",
                "confidence": "high",
                "provenance": "maintainer report",
                "campaign": "tiny-typo-2026-01",
                "expires_at": expires_at,
            }
        )
        return doc

    verdict = validate_verdict(tp_with_package("2026-07-01"))
    assert check_indicators(verdict.proposed_changes)[2] == IndicatorCheck(2, "package", "tiny-typo", "tiny-typo", "")
    with pytest.raises(ValueError, match=r"\(X7\)"):
        validate_verdict(tp_with_package(None))


def test_file_path_vectors() -> None:
    assert normalize_indicator("file_path", ".\\usr\\lib\\\\evil.so\\") == "usr/lib/evil.so"
    assert refused("file_path", "/usr/../etc/x") == "file path has a .. component"


@pytest.mark.parametrize(
    "pattern",
    [r"curl -fsSL https?://203\.0\.113\.[0-9]{1,3}/", r"evil\.(com|net)", r"(?:ab)+", r"[ab]+c", r"(x|y){2}"],
)
def test_safe_pattern_vectors(pattern: str) -> None:
    assert check_pattern(pattern) == pattern


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a|aa)+", "pattern is unsafe: quantified alternation"),
        (r"(ab|cd){2,}", "pattern is unsafe: quantified alternation"),
        (r"(a+)+", "pattern is unsafe: nested quantifier"),
        (r"(\d+\.)+x", "pattern is unsafe: nested quantifier"),
        (r"(.*a){3}", "pattern is unsafe: nested quantifier"),
        (r"(a)\1", "pattern is unsafe: backreference"),
        (r"x*", "pattern matches the empty string"),
        (r"(", "pattern does not compile: missing ), unterminated subpattern at position 0"),
    ],
)
def test_unsafe_pattern_vectors(pattern: str, reason: str) -> None:
    assert refused("pkgbuild_pattern", pattern) == reason


def test_duplicates_refer_to_the_first_entry() -> None:
    changes = (domain("evil.net"), domain("EVIL.net."))
    checks = check_indicators(changes)
    assert checks[0] == IndicatorCheck(0, "domain", "evil.net", "evil.net", "")
    assert checks[1] == IndicatorCheck(1, "domain", "EVIL.net.", "evil.net", "duplicate of entry 0")
    assert [c.passed for c in checks] == [True, False]


# More of each row.


@pytest.mark.parametrize("length", [32, 40, 56, 64, 96, 128])
def test_every_digest_length_passes(length: str) -> None:
    value = ("0123456789abcdef" * 8)[:length]
    assert normalize_indicator("hash", value.upper()) == value


@pytest.mark.parametrize("algorithm", ["md5", "sha1", "sha224", "sha256", "sha384", "sha512"])
def test_digest_of_empty_input_refused_for_every_length(algorithm: str) -> None:
    digest = hashlib.new(algorithm, b"").hexdigest()
    assert refused("hash", digest.upper()) == f"hash is the {algorithm} digest of empty input"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("g" * 64, "hash is not hexadecimal"),
        ("0x" + "a1" * 31, "hash is not hexadecimal"),
        (" " + "a1" * 32, "hash is not hexadecimal"),
        ("a1" * 24, "hash length 48 is not 32, 40, 56, 64, 96 or 128"),
        ("F" * 128, "hash is one repeated character"),
    ],
)
def test_more_hashes_refused(value: str, reason: str) -> None:
    assert refused("hash", value) == reason


@pytest.mark.parametrize(
    ("value", "normalized"),
    [
        ("ftp://mirror.evil.net/x", "mirror.evil.net"),
        ("evil.net/path?q#f", "evil.net"),
        ("evil.net?x", "evil.net"),
        ("evil.net#x", "evil.net"),
        ("a@b@evil.net", "evil.net"),
        ("evil.net:443", "evil.net"),
        ("xn--bcher-kva.ch", "xn--bcher-kva.ch"),
        ("a-b.c-d.io", "a-b.c-d.io"),
        ("1password.com", "1password.com"),
        ("example.com.evil.net", "example.com.evil.net"),
        ("notexample.com", "notexample.com"),
        ("a" * 63 + ".net", "a" * 63 + ".net"),
    ],
)
def test_more_domains(value: str, normalized: str) -> None:
    assert normalize_indicator("domain", value) == normalized


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (
            "https://203.0.113.7:8080/x",
            "domain is an IP literal (write C2 addresses as bounded pkgbuild_pattern entries)",
        ),
        ("[::1]:80", "domain is an IP literal (write C2 addresses as bounded pkgbuild_pattern entries)"),
        ("2001:db8::1", "domain is an IP literal (write C2 addresses as bounded pkgbuild_pattern entries)"),
        ("1.2.3", "domain is an IP literal (write C2 addresses as bounded pkgbuild_pattern entries)"),
        ("2130706433", "domain is an IP literal (write C2 addresses as bounded pkgbuild_pattern entries)"),
        ("evil.123", "domain is not a host name of two or more valid labels"),
        ("-evil.net", "domain is not a host name of two or more valid labels"),
        ("evil-.net", "domain is not a host name of two or more valid labels"),
        ("ev_il.net", "domain is not a host name of two or more valid labels"),
        ("evil..net", "domain is not a host name of two or more valid labels"),
        ("evil.net..", "domain is not a host name of two or more valid labels"),
        ("a" * 64 + ".net", "domain is not a host name of two or more valid labels"),
        (".".join(["a" * 63] * 4), "domain is not a host name of two or more valid labels"),
        ("", "domain is not a host name of two or more valid labels"),
        ("https://", "domain is not a host name of two or more valid labels"),
        ("example.com", "domain is reserved"),
        ("EXAMPLE.NET", "domain is reserved"),
        ("a.b.example.org", "domain is reserved"),
        ("shop.example", "domain is reserved"),
        ("x.invalid", "domain is reserved"),
        ("api.localhost", "domain is reserved"),
        ("printer.local", "domain is reserved"),
    ],
)
def test_more_domains_refused(value: str, reason: str) -> None:
    assert refused("domain", value) == reason


def test_domain_length_limit_is_253() -> None:
    longest = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])
    assert len(longest) == 253 and normalize_indicator("domain", longest) == longest
    assert refused("domain", longest + "d") == "domain is not a host name of two or more valid labels"


@pytest.mark.parametrize(
    ("value", "outcome"),
    [
        ("Tiny-Typo", "tiny-typo"),
        ("a..b", "package is not a package name"),
        ("-x", "package is not a package name"),
        ("x" * 128, "package is not a package name"),
        ("evil.example", "package name ends with .example"),
        ("Evil.EXAMPLE", "package name ends with .example"),
        ("evil.examples", "evil.examples"),
    ],
)
def test_packages(value: str, outcome: str) -> None:
    try:
        assert normalize_indicator("package", value) == outcome
    except IndicatorError as exc:
        assert str(exc) == outcome


@pytest.mark.parametrize(
    ("value", "outcome"),
    [
        ("/usr/lib/evil.so", "/usr/lib/evil.so"),
        ("//usr///lib//", "/usr/lib"),
        ("./././x", "x"),
        (".//x", "x"),
        ("a/./b", "a/./b"),
        ("..x/y", "..x/y"),
        ("C:\\Windows\\evil.dll", "C:/Windows/evil.dll"),
        ("", "file path is empty"),
        (".", "file path is empty"),
        ("./", "file path is empty"),
        ("/", "file path is empty"),
        ("\\\\", "file path is empty"),
        ("x/..", "file path has a .. component"),
        ("..", "file path has a .. component"),
        ("a\\..\\b", "file path has a .. component"),
        ("a" * 1024, "a" * 1024),
        ("a" * 1025, "file path is over 1,024 characters"),
        ("./" + "a" * 1024 + "/", "a" * 1024),
    ],
)
def test_file_paths(value: str, outcome: str) -> None:
    try:
        assert normalize_indicator("file_path", value) == outcome
    except IndicatorError as exc:
        assert str(exc) == outcome


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("a" * 2001, "pattern is over 2,000 characters"),
        (r"^", "pattern matches the empty string"),
        (r"a?", "pattern matches the empty string"),
        (r"\b", "pattern matches the empty string"),
        (r"(?=x)", "pattern matches the empty string"),
        (r"a|", "pattern matches the empty string"),
        (r"(a?)+b", "pattern is unsafe: nested quantifier"),
        (r"(?:a{1,2}){2}b", "pattern is unsafe: nested quantifier"),
        (r"(?:x(?:a|bc))*y", "pattern is unsafe: quantified alternation"),
        (r"(?:(?=a|bc)x)+", "pattern is unsafe: quantified alternation"),
        (r"(?>a+)+b", "pattern is unsafe: nested quantifier"),
        (r"(a++)+b", "pattern is unsafe: nested quantifier"),
        (r"(a+?)+b", "pattern is unsafe: nested quantifier"),
        (r"(a)(?(1)b|c)", "pattern is unsafe: backreference"),
        (r"(?P<x>a)(?P=x)", "pattern is unsafe: backreference"),
        ("(" * 999 + "a" + ")" * 999, "pattern does not compile"),
        (r"a{2,1}", "pattern does not compile: min repeat greater than max repeat at position 2"),
    ],
)
def test_more_patterns_refused(pattern: str, reason: str) -> None:
    assert refused("pkgbuild_pattern", pattern) == reason


@pytest.mark.parametrize(
    "pattern",
    [
        "a" * 2000,
        r"(a+)?b",
        r"(?:ab|cd)x",
        r"(a|b|c)+d",
        r"(?:[ab]c)+",
        r"(?i)EVIL\.net",
        r"x{2}y{3,4}",
        r"(?:a){1}b",
        r"\w+@evil\.net",
    ],
)
def test_more_patterns_pass(pattern: str) -> None:
    assert check_pattern(pattern) == pattern


@settings(max_examples=300)
@given(st.lists(st.sampled_from([*"ab()|*+?{},1\\[]^$.:=!<>P-", "(?", "{2,}", "\\1"]), max_size=20).map("".join))
def test_arbitrary_patterns_raise_only_indicator_errors(pattern: str) -> None:
    try:
        check_pattern(pattern)
    except IndicatorError:
        pass


@settings(max_examples=300)
@given(st.sampled_from(["hash", "domain", "package", "file_path", "pkgbuild_pattern"]), st.text(max_size=40))
def test_arbitrary_values_raise_only_indicator_errors(indicator_type: str, value: str) -> None:
    try:
        normalized = normalize_indicator(indicator_type, value)
    except IndicatorError:
        return
    assert normalize_indicator(indicator_type, normalized) == normalized


def domain(value: str, **fields: str | None) -> IocChange:
    base: dict[str, str | None] = {
        "confidence": "high",
        "provenance": "report",
        "campaign": "c",
        "incident": None,
        "expires_at": None,
        "note": None,
    }
    base.update(fields)
    return IocChange(type="domain", value=value, **base)  # type: ignore[arg-type]


def test_checks_keep_proposed_change_positions_and_skip_suppressions() -> None:
    changes = (Suppression("R007", "r"), domain("203.0.113.7"), domain("evil.net"), domain("evil.net."))
    checks = check_indicators(changes)
    assert [(c.index, c.normalized_value, c.reason) for c in checks] == [
        (1, None, "domain is an IP literal (write C2 addresses as bounded pkgbuild_pattern entries)"),
        (2, "evil.net", ""),
        (3, "evil.net", "duplicate of entry 2"),
    ]


def test_same_value_of_different_types_is_not_a_duplicate() -> None:
    changes = (
        IocChange("package", "evil-net", "high", "p", "c", None, "2026-07-01", None),
        IocChange("file_path", "evil-net", "high", "p", "c", None, None, None),
    )
    assert all(check.passed for check in check_indicators(changes))


def test_ioc_entries_of_the_tiny_typo_tp() -> None:
    verdict = validate_verdict(tp_sample())
    checks = check_indicators(verdict.proposed_changes)
    assert ioc_entries(verdict.proposed_changes, checks) == [
        {
            "type": "domain",
            "value": "updates.tiny-typo-c2.net",
            "confidence": "high",
            "provenance": "AUR takedown 2026-01-14, maintainer report",
            "campaign": "tiny-typo-2026-01",
            "incident": None,
            "expires_at": None,
            "note": None,
        },
        {
            "type": "hash",
            "value": UPPER_HASH.lower(),
            "confidence": "confirmed",
            "provenance": "AUR takedown 2026-01-14, maintainer report",
            "campaign": "tiny-typo-2026-01",
            "incident": None,
            "expires_at": None,
            "note": None,
        },
    ]


def test_ioc_entries_leave_out_refused_and_duplicate_indicators() -> None:
    changes = (domain("b.net"), domain("a.net", note="n", incident="i"), domain("B.net"), domain("1.2.3.4"))
    entries = ioc_entries(changes, check_indicators(changes))
    assert [(e["value"], e["note"], e["incident"]) for e in entries] == [("a.net", "n", "i"), ("b.net", None, None)]
