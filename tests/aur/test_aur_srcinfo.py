""".SRCINFO parsing (docs/triage.md §6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.aur.srcinfo import MAX_LINES, MAX_VALUES_PER_KEY, Srcinfo, SrcinfoError, parse_srcinfo

COMMIT = "b2" * 20

TINY_DEMO = (
    "pkgbase = tiny-demo-bin\n"
    "\tpkgver = 1.0.1\n"
    "\tpkgrel = 1\n"
    "\tarch = x86_64\n"
    "\tinstall = tiny-demo.install\n"
    "\tsource = tiny-1.0.1.tar.gz::https://downloads.example.org/tiny/v1.0.1/tiny.tar.gz\n"
    "\n"
    "pkgname = tiny-demo-bin\n"
)


def parse(text: str) -> Srcinfo:
    return parse_srcinfo(text.encode("utf-8"), COMMIT)


def malformed(data: str | bytes) -> str:
    with pytest.raises(SrcinfoError) as info:
        parse_srcinfo(data if isinstance(data, bytes) else data.encode("utf-8"), COMMIT)
    assert str(info.value).startswith(f".SRCINFO at commit {COMMIT} is malformed: ")
    return info.value.what


def test_fixture_srcinfo() -> None:
    info = parse(TINY_DEMO)
    assert info == Srcinfo(
        pkgbase="tiny-demo-bin",
        pkgnames=frozenset({"tiny-demo-bin"}),
        version="1.0.1-1",
        install=("tiny-demo.install",),
        sources=("tiny-1.0.1.tar.gz::https://downloads.example.org/tiny/v1.0.1/tiny.tar.gz",),
    )
    assert info.source_urls == ("https://downloads.example.org/tiny/v1.0.1/tiny.tar.gz",)


@pytest.mark.parametrize(("epoch", "version"), [(None, "1.0.1-1"), ("2", "2:1.0.1-1"), ("0", "1.0.1-1")])
def test_version_and_epoch(epoch: str | None, version: str) -> None:
    lines = (
        "pkgbase = p\n" + (f"\tepoch = {epoch}\n" if epoch else "") + "\tpkgver = 1.0.1\n\tpkgrel = 1\npkgname = p\n"
    )
    assert parse(lines).version == version


def test_version_comes_from_the_pkgbase_section_only() -> None:
    text = "pkgbase = p\n\tpkgver = 1.0\n\tpkgrel = 2\npkgname = p\n\tpkgver = 9.9\n\tepoch = 7\n"
    assert parse(text).version == "1.0-2"


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("pkgname = p\npkgbase = p\n\tpkgver = 1\n\tpkgrel = 1\n", "line 1: the first key is pkgname, not pkgbase"),
        ("pkgbase = p\npkgbase = q\n\tpkgver = 1\n\tpkgrel = 1\n", "line 2: a second pkgbase line"),
        ("pkgbase = p\n\tpkgver = 1\n\tpkgrel = 1\npkgname = p\npkgbase = q\n", "line 5: a second pkgbase line"),
        ("pkgbase = p\ngarbage\n", 'line 2 has no "="'),
        ("pkgbase = p\n\tPkgver = 1\n", "line 2 has an invalid key"),
        ("pkgbase = p\n\t1x = 1\n", "line 2 has an invalid key"),
        ("pkgbase = p\n\t = 1\n", "line 2 has an invalid key"),
        ("pkgbase = p\n\tpkgrel = 1\n", "no pkgver in the pkgbase section"),
        ("pkgbase = p\n\tpkgver = 1\n", "no pkgrel in the pkgbase section"),
        ("pkgbase = p\n\tpkgver = 1\npkgname = p\n\tpkgrel = 1\n", "no pkgrel in the pkgbase section"),
        (
            "pkgbase = p\n\tpkgver = 1\n\tpkgver = 2\n\tpkgrel = 1\n",
            "line 3: pkgver is set twice in the pkgbase section",
        ),
        ("", "no pkgbase line"),
        ("# only a comment\n\n", "no pkgbase line"),
    ],
)
def test_malformed(text: str, what: str) -> None:
    assert malformed(text) == what


def test_not_utf8() -> None:
    assert malformed(b"pkgbase = p\n\tpkgdesc = caf\xe9\n") == "not UTF-8"


def test_line_endings_comments_blank_lines_and_stripping() -> None:
    text = "# generated\r\npkgbase=p\r\n\t  pkgver =  1.0 \r\n\tpkgrel = 1\r\r  # note\r\npkgname = p\r"
    info = parse(text)
    assert (info.pkgbase, info.version, info.pkgnames) == ("p", "1.0-1", frozenset({"p"}))


def test_value_keeps_everything_after_the_first_equals() -> None:
    info = parse("pkgbase = p\n\tpkgver = 1\n\tpkgrel = 1\n\tsource = a==b::https://h.example.org/x?y=1\n")
    assert info.sources == ("a==b::https://h.example.org/x?y=1",)


def test_arch_specific_sources_and_every_section() -> None:
    text = (
        "pkgbase = p\n\tpkgver = 1\n\tpkgrel = 1\n"
        "\tsource_x86_64 = a.tgz::https://h.example.org/a.tgz\n"
        "\tsource = LICENSE\n"
        "\tinstall = base.install\n"
        "pkgname = p\n\tinstall = p.install\n"
        "pkgname = p-docs\n\tsource_aarch64 = https://h.example.org/b.tgz\n\tsourcex = https://no.example.org/\n"
        "\tsource_ = https://no.example.org/\n"
    )
    info = parse(text)
    assert info.pkgnames == frozenset({"p", "p-docs"})
    assert info.install == ("base.install", "p.install")
    assert info.sources == ("a.tgz::https://h.example.org/a.tgz", "LICENSE", "https://h.example.org/b.tgz")
    assert info.source_urls == ("https://h.example.org/a.tgz", "https://h.example.org/b.tgz")


def test_url_keys_are_not_sources() -> None:
    info = parse("pkgbase = p\n\tpkgver = 1\n\tpkgrel = 1\n\turl = https://upstream.example.org\n")
    assert info.sources == ()


def test_line_limit() -> None:
    head = "pkgbase = p\n\tpkgver = 1\n\tpkgrel = 1\n"
    assert parse(head + "#\n" * (MAX_LINES - 3)).version == "1-1"
    assert malformed(head + "#\n" * (MAX_LINES - 2)) == "more than 100,000 lines"


def test_values_per_key_limit() -> None:
    head = "pkgbase = p\n\tpkgver = 1\n\tpkgrel = 1\n"
    assert parse(head + "\tarch = any\n" * MAX_VALUES_PER_KEY).version == "1-1"
    assert malformed(head + "\tarch = any\n" * (MAX_VALUES_PER_KEY + 1)) == "more than 4,096 values for arch"


@given(st.text(alphabet=st.sampled_from("pkgbasenamever=rel# \t\r\n_1.:\u00e9"), max_size=80))
def test_arbitrary_text_raises_only_srcinfo_errors(text: str) -> None:
    try:
        parse(text)
    except SrcinfoError:
        pass


@given(st.binary(max_size=60))
def test_arbitrary_bytes_raise_only_srcinfo_errors(data: bytes) -> None:
    try:
        parse_srcinfo(data, COMMIT)
    except SrcinfoError:
        pass
