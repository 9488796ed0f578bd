"""The shared name patterns of docs/triage.md §2."""

from __future__ import annotations

import pytest

from harness.triage.names import (
    base_rule_id,
    is_commit,
    is_date,
    is_evidence_file,
    is_fatal,
    is_package_name,
    is_rule_id,
    is_scriptlet_name,
    is_timestamp,
    is_version,
)


@pytest.mark.parametrize("name", ["tiny-demo-bin", "a", "0ad", "@x", "_p", "+p", "lib32-x.y_z+w@v", "a" * 127])
def test_package_names_accepted(name: str) -> None:
    assert is_package_name(name)


@pytest.mark.parametrize("name", ["", "Tiny-Demo", "a..b", "-a", ".a", "a b", "a/b", "a" * 128, "caf\u00e9", "a\n"])
def test_package_names_refused(name: str) -> None:
    assert not is_package_name(name)


@pytest.mark.parametrize(
    ("value", "ok"),
    [("a1a1a1a", True), ("0" * 40, True), ("abcdef", False), ("A1A1A1A", False), ("0" * 41, False), ("g123456", False)],
)
def test_commits(value: str, ok: bool) -> None:
    assert is_commit(value) is ok


@pytest.mark.parametrize(
    "value",
    ["1.0.1-1", "2:1.0-1", "1.0+r3.g1a2b~rc1-12", "1-1.2", "0000000001:a-1", "a" * 48 + "-1"],
)
def test_versions_accepted(value: str) -> None:
    assert is_version(value)


@pytest.mark.parametrize(
    "value",
    [
        "1.0",
        "1.0-",
        "-1",
        "1.0-a",
        "1:2:3-1",
        "1.0-1.12345",
        "a" * 49 + "-1",
        "12345678901:a-1",
        "1 0-1",
        "1.0-123456789",
    ],
)
def test_versions_refused(value: str) -> None:
    assert not is_version(value)


def test_version_length_cap_is_64_characters() -> None:
    longest = "1234567890:" + "a" * 48 + "-1.123"  # 65 characters, each part within its own bound
    assert len(longest) == 65 and not is_version(longest)
    assert is_version("123456789:" + "a" * 48 + "-1.123")


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("R007", True),
        ("H016a", True),
        ("SOURCE_BUCKET", True),
        ("NOVELTY", True),
        ("COVERAGE", True),
        ("X12", False),
        ("r007", False),
        ("R007A", False),
        ("R0071", False),
        ("R007ab", False),
        ("COVERAGEx", False),
    ],
)
def test_rule_ids(value: str, ok: bool) -> None:
    assert is_rule_id(value) is ok


@pytest.mark.parametrize(
    ("rule", "base", "fatal"),
    [
        ("R012", "R012", True),
        ("R013b", "R013", True),
        ("R012z", "R012", True),
        ("R007", "R007", False),
        ("H016a", "H016", False),
        ("NOVELTY", "NOVELTY", False),
    ],
)
def test_base_ids_and_fatal_rules(rule: str, base: str, fatal: bool) -> None:
    assert base_rule_id(rule) == base
    assert is_fatal(rule) is fatal


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("tiny-demo.install", True),
        ("A.install", True),
        ("x" * 255, True),
        ("x" * 256, False),
        ("a/b.install", False),
        (".install", False),
        ("-x", False),
    ],
)
def test_scriptlet_names(value: str, ok: bool) -> None:
    assert is_scriptlet_name(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("PKGBUILD", True),
        (".SRCINFO", True),
        ("src/a.py", True),
        ("a" * 255, True),
        ("a" * 256, False),
        ("", False),
        ("a/./b", False),
        ("../x", False),
        ("a/..", False),
        (".", False),
        ("/abs", False),
        ("a//b", False),
        ("a/", False),
        ("a b", False),
        ("a\\b", False),
    ],
)
def test_evidence_files(value: str, ok: bool) -> None:
    assert is_evidence_file(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-01-15", True),
        ("2000-01-01", True),
        ("2099-12-31", True),
        ("2024-02-29", True),
        ("2026-02-30", False),
        ("2025-02-29", False),
        ("1999-12-31", False),
        ("2100-01-01", False),
        ("2026-1-15", False),
        ("2026-01-15T00:00:00Z", False),
    ],
)
def test_dates(value: str, ok: bool) -> None:
    assert is_date(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-07-01", True),
        ("2026-07-01T23:59:59Z", True),
        ("2026-07-01T00:00:00Z", True),
        ("2026-07-01T24:00:00Z", False),
        ("2026-07-01T12:60:00Z", False),
        ("2026-07-01T12:00:60Z", False),
        ("2026-02-30T12:00:00Z", False),
        ("2026-07-01T12:00:00", False),
        ("2026-07-01T12:00:00+00:00", False),
        ("2026-07-01 12:00:00Z", False),
        ("2026-07-01T12:00:00.5Z", False),
        ("1999-07-01T12:00:00Z", False),
        ("2026-07-01t12:00:00z", False),
    ],
)
def test_timestamps(value: str, ok: bool) -> None:
    assert is_timestamp(value) is ok
