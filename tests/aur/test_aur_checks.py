"""Deterministic checks (docs/triage.md §7) against the fake AUR: routing, snapshot, phantom install, URL in source."""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.aur.checks import (
    CheckOutcome,
    Snapshot,
    check_url_in_source,
    line_counts,
    route,
    run_item,
    shown,
    take_snapshot,
)
from harness.aur.client import AurClient, AurSession, build_aur_client
from tests.aur.fake_aur import (
    A1,
    B2,
    C3,
    D4,
    EXTRA_URL,
    FETCH_URL,
    SCRIPTLET,
    SCRIPTLET_SHA256,
    FakeAur,
    demo_srcinfo,
    html_reply,
    install_demo_bin,
    install_fetch,
    plain_target,
)
from tests.net.https_server import Reply

DEMO = ("tiny-demo-bin", A1, B2, "1.0.0-1", "1.0.1-1", "tiny-demo-bin")
FETCH = ("tiny-fetch", C3, D4, "2.0.0-1", "2.0.1-1", "tiny-fetch")


@pytest.fixture
def client(fake_aur: FakeAur) -> Iterator[AurClient]:
    aur = build_aur_client(
        fake_aur.base_url, fake_aur.ca_file, 0, 10, 3, 2, jitter_s=lambda delay: 0.0, sleep=lambda seconds: None
    )
    yield aur
    aur.close()


def snapshot_of(client: AurClient, package: tuple[str, ...] = DEMO) -> tuple[AurSession, CheckOutcome, Snapshot | None]:
    session = client.session()
    base, old, new, old_version, new_version, name = package
    outcome, snap = take_snapshot(session, base, old, new, old_version, new_version, name)
    return session, outcome, snap


def item(
    client: AurClient,
    rule_id: str,
    file: str,
    line: int | None = None,
    url: str | None = None,
    package: tuple[str, ...] = DEMO,
) -> CheckOutcome:
    session, outcome, snap = snapshot_of(client, package)
    assert outcome.passed, outcome.reason
    assert snap is not None
    return run_item(session, snap, rule_id, file, line, url)


# ---------------------------------------------------------------------------------------------
# Routing


@pytest.mark.parametrize(
    ("rule_id", "file", "expected"),
    [
        ("C024", "tiny-demo.install", "check_phantom_install"),
        ("H016", "x.install", "check_phantom_install"),
        *[(rule, "PKGBUILD", "check_phantom_install") for rule in ("R007", "R053", "H015", "H017", "H023", "H100")],
        *[
            (rule, "PKGBUILD", "check_url_in_source")
            for rule in ("H016", "R010", "R011", "H082", "X009", "R152", "SOURCE_BUCKET", "NOVELTY", "C003")
        ],
        ("C024", "PKGBUILD", "no_check"),
        ("COVERAGE", "PKGBUILD", "no_check"),
        ("H016a", "PKGBUILD", "no_check"),
        ("R007a", ".SRCINFO", "no_check"),
    ],
)
def test_routing_first_match_wins(rule_id: str, file: str, expected: str) -> None:
    assert route(rule_id, file) == expected


# ---------------------------------------------------------------------------------------------
# The docs/triage.md §7 table


def test_identical_scriptlet_passes(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    outcome = item(client, "R007", "tiny-demo.install")
    assert outcome.passed
    assert outcome.reason == "install scriptlet tiny-demo.install is byte-identical at both commits"
    assert outcome.sentence == (
        "install scriptlet tiny-demo.install is byte-identical at both commits (sha256 da27e3212b12)"
    )
    assert outcome.evidence == {
        "file": "tiny-demo.install",
        "line": None,
        "install_name": "tiny-demo.install",
        "declared_old": ["tiny-demo.install"],
        "declared_new": ["tiny-demo.install"],
        "old_sha256": SCRIPTLET_SHA256,
        "new_sha256": SCRIPTLET_SHA256,
        "identical": True,
        "added_lines": 0,
        "removed_lines": 0,
    }


def test_crlf_only_on_the_new_side_passes(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur, "crlf")
    outcome = item(client, "R007", "tiny-demo.install")
    assert outcome.passed
    assert outcome.evidence["new_sha256"] == hashlib.sha256(SCRIPTLET.replace(b"\n", b"\r\n")).hexdigest()


def test_an_added_line_fails_with_its_counts(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur, "changed")
    outcome = item(client, "R007", "tiny-demo.install")
    assert not outcome.passed
    assert outcome.reason == "install scriptlet tiny-demo.install differs between commits (+1 -0 lines)"
    assert (outcome.evidence["identical"], outcome.evidence["added_lines"], outcome.evidence["removed_lines"]) == (
        False,
        1,
        0,
    )


def test_pkgbuild_line_naming_the_scriptlet_passes(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    outcome = item(client, "R007", "PKGBUILD", 7)
    assert outcome.passed
    assert outcome.evidence["install_name"] == "tiny-demo.install"


def test_srcinfo_line_naming_the_scriptlet_passes(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    assert item(client, "H023", ".SRCINFO", 5).passed


@pytest.mark.parametrize("line", [8, 1, 100])
def test_a_pkgbuild_line_not_naming_the_scriptlet_fails(fake_aur: FakeAur, client: AurClient, line: int) -> None:
    install_demo_bin(fake_aur)
    outcome = item(client, "H015", "PKGBUILD", line)
    assert outcome.reason == f"cited line {line} of PKGBUILD does not reference tiny-demo.install"
    assert outcome.evidence["old_sha256"] is None


def test_a_renamed_install_declaration_fails(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur, "renamed")
    outcome = item(client, "R007", "tiny-demo.install")
    assert outcome.reason == (
        "install= declarations differ between commits (tiny-demo.install vs tiny-demo-new.install)"
    )
    assert outcome.evidence["declared_new"] == ["tiny-demo-new.install"]


def test_a_rule_without_check_fails(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    outcome = item(client, "C024", "PKGBUILD", 7)
    assert (outcome.name, outcome.passed) == ("no_check", False)
    assert outcome.reason == "no deterministic check for rule C024"
    assert outcome.evidence == {"file": "PKGBUILD", "line": 7}


def test_a_declared_url_passes_in_both_files(fake_aur: FakeAur, client: AurClient) -> None:
    install_fetch(fake_aur)
    outcome = item(client, "H016", "PKGBUILD", 6, FETCH_URL, package=FETCH)
    assert outcome.passed
    assert outcome.reason == f"URL {FETCH_URL} is declared in the sources at commit {D4}"
    assert outcome.sentence == f"URL {FETCH_URL} is declared in the sources at the new commit"
    assert outcome.evidence == {
        "file": "PKGBUILD",
        "line": 6,
        "url": FETCH_URL,
        "normalized_url": FETCH_URL,
        "host": "downloads.example.org",
        "routable": True,
        "declared": True,
        "declared_in": ["PKGBUILD", ".SRCINFO"],
    }


def test_a_url_fetched_but_not_declared_fails(fake_aur: FakeAur, client: AurClient) -> None:
    install_fetch(fake_aur, "undeclared")
    outcome = item(client, "H016", "PKGBUILD", 6, EXTRA_URL, package=FETCH)
    assert outcome.reason == f"URL {EXTRA_URL} is not declared in the sources at commit {D4}"
    assert (outcome.evidence["declared"], outcome.evidence["declared_in"]) == (False, [])


def test_a_url_declared_only_in_srcinfo_shows_as_such(fake_aur: FakeAur, client: AurClient) -> None:
    install_fetch(fake_aur, "srcinfo-only")
    outcome = item(client, "H016", "PKGBUILD", 6, EXTRA_URL, package=FETCH)
    assert outcome.passed
    assert outcome.evidence["declared_in"] == [".SRCINFO"]


def test_the_url_is_normalized_before_comparison(fake_aur: FakeAur, client: AurClient) -> None:
    install_fetch(fake_aur)
    cited = "HTTPS://Downloads.Example.ORG.:443/fetch/data-2.0.1.zip#x"
    outcome = item(client, "R010", "PKGBUILD", 5, cited, package=FETCH)
    assert outcome.passed
    assert outcome.evidence["normalized_url"] == FETCH_URL


@pytest.mark.parametrize("url", ["http://127.0.0.1/fetch/data.zip", "https://[::1]/x", "https://mirror.test/x"])
def test_a_declared_url_on_a_non_routable_host_fails(fake_aur: FakeAur, client: AurClient, url: str) -> None:
    install_fetch(fake_aur, "local")
    outcome = item(client, "H016", "PKGBUILD", 6, url, package=FETCH)
    host = outcome.evidence["host"]
    assert outcome.reason == f"URL {url} host {host} is not routable"
    assert (outcome.evidence["routable"], outcome.evidence["declared"]) == (False, None)


def test_the_local_variant_declares_the_url_yet_it_is_never_requested(fake_aur: FakeAur, client: AurClient) -> None:
    install_fetch(fake_aur, "local")
    local = fake_aur.server.url("/fetch/data.zip")
    outcome = item(client, "H016", "PKGBUILD", 6, local, package=FETCH)
    assert outcome.reason == f"URL {local} host 127.0.0.1 is not routable"
    assert all("/fetch/" not in target.split("?")[0] for target in fake_aur.targets())


def test_a_url_rule_without_url_fails(fake_aur: FakeAur, client: AurClient) -> None:
    install_fetch(fake_aur)
    outcome = item(client, "H016", "PKGBUILD", 6, None, package=FETCH)
    assert outcome.reason == "evidence for H016 carries no url"


def test_a_url_that_does_not_normalize_fails(fake_aur: FakeAur, client: AurClient) -> None:
    install_fetch(fake_aur)
    outcome = item(client, "H016", "PKGBUILD", 6, "https://h:99999/", package=FETCH)
    assert outcome.reason == "URL https://h:99999/ cannot be normalized"


# ---------------------------------------------------------------------------------------------
# check_phantom_install, the other rules


@pytest.mark.parametrize(
    ("rule_id", "file", "line", "reason"),
    [
        ("R007", "sub/x.install", None, "cited file sub/x.install is not a scriptlet name"),
        ("R007", "PKGBUILD", None, "a line number is required when citing PKGBUILD"),
        ("R007", "README", 1, "cited file README is neither the install scriptlet nor PKGBUILD or .SRCINFO"),
        ("R007", "other.install", None, f"install scriptlet other.install is not declared at commit {B2}"),
        ("R007", "tiny-demo.install", 4, "cited line 4 is beyond the end of tiny-demo.install"),
    ],
)
def test_phantom_refusals(
    fake_aur: FakeAur, client: AurClient, rule_id: str, file: str, line: int | None, reason: str
) -> None:
    install_demo_bin(fake_aur)
    outcome = item(client, rule_id, file, line)
    assert (outcome.passed, outcome.reason) == (False, reason)


def test_the_last_scriptlet_line_can_be_cited(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    assert item(client, "R007", "tiny-demo.install", 3).passed


def test_no_declared_scriptlet_fails(fake_aur: FakeAur, client: AurClient) -> None:
    install_fetch(fake_aur)
    outcome = item(client, "R053", "PKGBUILD", 1, package=FETCH)
    assert outcome.reason == f"no single install scriptlet is declared at commit {D4}"


def test_a_scriptlet_missing_at_the_old_commit_fails(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    (fake_aur.root / "plain" / "tiny-demo-bin" / A1 / "tiny-demo.install").unlink()
    outcome = item(client, "R007", "tiny-demo.install")
    assert outcome.reason == f"install scriptlet tiny-demo.install is missing at commit {A1}"
    assert outcome.evidence["new_sha256"] == SCRIPTLET_SHA256
    assert outcome.evidence["old_sha256"] is None


def test_a_scriptlet_that_cannot_be_fetched_fails_closed(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    fake_aur.script(plain_target("tiny-demo-bin", B2, "tiny-demo.install"), Reply(503))
    outcome = item(client, "R007", "tiny-demo.install")
    assert outcome.reason == f"install scriptlet tiny-demo.install unavailable at commit {B2}: HTTP 503"


def test_declarations_come_from_pkgbuild_and_srcinfo_together(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    fake_aur.put_file("tiny-demo-bin", B2, ".SRCINFO", demo_srcinfo("1.0.1", "extra.install"))
    outcome = item(client, "R007", "tiny-demo.install")
    assert outcome.evidence["declared_new"] == ["extra.install", "tiny-demo.install"]
    assert outcome.reason == (
        "install= declarations differ between commits (tiny-demo.install vs extra.install, tiny-demo.install)"
    )


def test_a_removed_line_is_counted(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    fake_aur.put_file("tiny-demo-bin", B2, "tiny-demo.install", b"post_install() {\n}\n")
    outcome = item(client, "R007", "tiny-demo.install")
    assert outcome.reason == "install scriptlet tiny-demo.install differs between commits (+0 -1 lines)"


@given(
    st.lists(st.sampled_from([b"a", b"b", b"c", b""]), max_size=12),
    st.lists(st.sampled_from([b"a", b"b", b"c", b""]), max_size=12),
)
def test_line_counts_equal_a_zero_context_unified_diff(old: list[bytes], new: list[bytes]) -> None:
    diff = list(difflib.unified_diff([x.decode() for x in old], [x.decode() for x in new], n=0, lineterm=""))
    body = [line for line in diff[2:] if not line.startswith("@@")]
    expected = (sum(line.startswith("+") for line in body), sum(line.startswith("-") for line in body))
    assert line_counts(old, new) == expected


def _crafted(count: int, step: int, offset: int) -> list[bytes]:
    """Lines that defeat difflib's junk heuristic: many values, each repeated just under 1% of the time."""
    distinct = count // 100 - 1
    return [str((index * step + offset) % distinct).encode() for index in range(count)]


def test_large_inputs_keep_exact_counts_for_a_small_change() -> None:
    old = [f"line {index}".encode() for index in range(20_000)]
    new = [*old[:10_000], b"chmod u+s /usr/bin/tiny", *old[10_000:]]
    assert line_counts(old, new) == (1, 0)


def test_a_large_crafted_change_counts_as_replaced_instead_of_running_superlinear() -> None:
    old, new = _crafted(20_000, 1, 3), _crafted(20_000, 7, 4)
    assert old[0] != new[0] and old[-1] != new[-1]
    assert line_counts([b"head", *old, b"tail"], [b"head", *new, b"tail"]) == (20_000, 20_000)


# ---------------------------------------------------------------------------------------------
# snapshot


def test_snapshot_binds_both_commits_and_records_raw_hashes(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    _, outcome, snap = snapshot_of(client)
    assert outcome.passed and snap is not None
    files = fake_aur.root / "plain" / "tiny-demo-bin"

    def digest(commit: str, name: str) -> str:
        return hashlib.sha256((files / commit / name).read_bytes()).hexdigest()

    assert outcome.evidence == {
        "old_commit": A1,
        "new_commit": B2,
        "old_version": "1.0.0-1",
        "new_version": "1.0.1-1",
        "pkgbuild_sha256_old": digest(A1, "PKGBUILD"),
        "pkgbuild_sha256_new": digest(B2, "PKGBUILD"),
        "srcinfo_sha256_old": digest(A1, ".SRCINFO"),
        "srcinfo_sha256_new": digest(B2, ".SRCINFO"),
    }
    assert fake_aur.targets() == [
        plain_target("tiny-demo-bin", B2, "PKGBUILD"),
        plain_target("tiny-demo-bin", B2, ".SRCINFO"),
        plain_target("tiny-demo-bin", A1, "PKGBUILD"),
        plain_target("tiny-demo-bin", A1, ".SRCINFO"),
    ]


def test_a_missing_file_stops_the_snapshot(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    (fake_aur.root / "plain" / "tiny-demo-bin" / B2 / "PKGBUILD").unlink()
    _, outcome, snap = snapshot_of(client)
    assert snap is None
    assert outcome.reason == f"PKGBUILD unavailable at commit {B2}: not found"
    assert fake_aur.targets() == [plain_target("tiny-demo-bin", B2, "PKGBUILD")]
    assert outcome.evidence["pkgbuild_sha256_new"] is None and outcome.evidence["new_version"] is None


def test_a_challenge_page_fails_the_snapshot(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    fake_aur.script(plain_target("tiny-demo-bin", A1, ".SRCINFO"), html_reply())
    _, outcome, _ = snapshot_of(client)
    assert outcome.reason == f".SRCINFO unavailable at commit {A1}: anubis challenge"
    assert outcome.evidence["pkgbuild_sha256_old"] is not None and outcome.evidence["srcinfo_sha256_old"] is None


def _replace(fake: FakeAur, commit: str, file: str, data: bytes) -> None:
    fake.put_file("tiny-demo-bin", commit, file, data)


@pytest.mark.parametrize(
    ("commit", "file", "data", "reason"),
    [
        (B2, ".SRCINFO", b"garbage\n", f'.SRCINFO at commit {B2} is malformed: line 1 has no "="'),
        (
            B2,
            ".SRCINFO",
            b"pkgname = x\npkgbase = x\n",
            f".SRCINFO at commit {B2} is malformed: line 1: the first key is pkgname, not pkgbase",
        ),
        (A1, ".SRCINFO", b"pkgbase = tiny-demo-bin\n\xff\n", f".SRCINFO at commit {A1} is malformed: not UTF-8"),
        (A1, ".SRCINFO", demo_srcinfo("1.0.0").replace(b"pkgbase = tiny-demo-bin", b"pkgbase = tiny-other"),
         f".SRCINFO at commit {A1} names pkgbase tiny-other, expected tiny-demo-bin"),
        (B2, ".SRCINFO", demo_srcinfo("1.0.1").replace(b"pkgname = tiny-demo-bin", b"pkgname = tiny-demo"),
         f"tiny-demo-bin is not a pkgname at commit {B2}"),
        (A1, "PKGBUILD", b"pkgname=tiny-demo-bin\n\xe9\n", f"PKGBUILD at commit {A1} is not UTF-8"),
    ],
)
def test_snapshot_refusals(
    fake_aur: FakeAur, client: AurClient, commit: str, file: str, data: bytes, reason: str
) -> None:
    install_demo_bin(fake_aur)
    _replace(fake_aur, commit, file, data)
    _, outcome, snap = snapshot_of(client)
    assert (outcome.passed, outcome.reason, snap) == (False, reason, None)


def test_a_claimed_version_that_differs_fails(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    claim = ("tiny-demo-bin", A1, B2, "1.0.0-1", "1.0.2-1", "tiny-demo-bin")
    _, outcome, _ = snapshot_of(client, claim)
    assert outcome.reason == f".SRCINFO at commit {B2} gives version 1.0.1-1, verdict claims 1.0.2-1"
    assert outcome.evidence["new_version"] == "1.0.1-1"


def test_the_old_side_version_is_checked_too(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    claim = ("tiny-demo-bin", A1, B2, "0.9-1", "1.0.1-1", "tiny-demo-bin")
    _, outcome, _ = snapshot_of(client, claim)
    assert outcome.reason == f".SRCINFO at commit {A1} gives version 1.0.0-1, verdict claims 0.9-1"


def test_package_text_in_reasons_is_one_escaped_line(fake_aur: FakeAur, client: AurClient) -> None:
    install_demo_bin(fake_aur)
    odd = demo_srcinfo("1.0.0").replace(b"pkgbase = tiny-demo-bin", "pkgbase = t\u00efny\tx".encode())
    _replace(fake_aur, A1, ".SRCINFO", odd)
    _, outcome, _ = snapshot_of(client)
    assert outcome.reason == f'.SRCINFO at commit {A1} names pkgbase "t\\u00efny\\tx", expected tiny-demo-bin'


@pytest.mark.parametrize(
    ("value", "expected"),
    [("tiny", "tiny"), ("a b", "a b"), ("\u00e9", '"\\u00e9"'), ("x" * 129, '"' + "x" * 128 + '"...')],
)
def test_shown(value: str, expected: str) -> None:
    assert shown(value) == expected


def test_url_check_needs_only_the_new_side(fake_aur: FakeAur, client: AurClient) -> None:
    install_fetch(fake_aur)
    _, outcome, snap = snapshot_of(client, FETCH)
    assert snap is not None
    before = len(fake_aur.targets())
    result: Any = check_url_in_source(snap, "C003", "PKGBUILD", None, FETCH_URL)
    assert result.passed and len(fake_aur.targets()) == before
