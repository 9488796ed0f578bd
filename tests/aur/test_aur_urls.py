"""URL normalization N(u), routable hosts and source elements to URLs (docs/triage.md §6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.aur.urls import NormalizedUrl, element_to_url, elements_to_urls, is_routable_host, normalize_url, parse_url


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("HTTPS://Example.ORG:443/a/b/", "https://example.org/a/b"),
        ("http://example.org:80", "http://example.org/"),
        ("https://user:pw@example.org/a", "https://example.org/a"),
        ("https://example.org./a?x=1#frag", "https://example.org/a?x=1"),
        ("https://example.org:8443/a", "https://example.org:8443/a"),
        ("https://good.example.org@evil.example.net/x", "https://evil.example.net/x"),
    ],
)
def test_spec_vectors(raw: str, normalized: str) -> None:
    assert normalize_url(raw) == normalized


@pytest.mark.parametrize("raw", ["https://exa mple.org/", "file:///etc/x", "https://h:99999/"])
def test_spec_non_urls(raw: str) -> None:
    assert normalize_url(raw) is None


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("ftp://Mirror.Example.org:21/pub/", "ftp://mirror.example.org/pub"),
        ("ftp://mirror.example.org:2121/pub", "ftp://mirror.example.org:2121/pub"),
        ("http://example.org:443/", "http://example.org:443/"),
        ("https://example.org:80/", "https://example.org:80/"),
        ("https://example.org/", "https://example.org/"),
        ("https://example.org", "https://example.org/"),
        ("https://example.org?", "https://example.org/"),
        ("https://example.org/a?", "https://example.org/a"),
        ("https://example.org/a/?q=1/", "https://example.org/a?q=1/"),
        ("https://example.org//", "https://example.org/"),
        ("https://example.org/A%2Fb/C", "https://example.org/A%2Fb/C"),
        ("https://example.org/a#", "https://example.org/a"),
        ("https://[2001:DB8::1]:8443/x", "https://[2001:db8::1]:8443/x"),
        ("https://[::1]/", "https://[::1]/"),
        ("https://a@b@example.org/", "https://example.org/"),
        ("https://example.org:0443/x", "https://example.org/x"),
        ("HtTp://Example.org/$pkgver.tgz", "http://example.org/$pkgver.tgz"),
    ],
)
def test_normalization_details(raw: str, normalized: str) -> None:
    assert normalize_url(raw) == normalized


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "LICENSE",
        "example.org/x",
        "git://example.org/x",
        "https:/example.org",
        "https://",
        "https://user@/x",
        "https://./x",
        "https://example.org:/x",
        "https://example.org:0/x",
        "https://example.org:65536/x",
        "https://example.org:8a/x",
        "https://[::1/x",
        "https://[not-ip]/x",
        "https://[::1]x/",
        "https://ex\u00e4mple.org/",
        "https://example.org/\x7f",
        "https://example.org/a\tb",
    ],
)
def test_non_urls(raw: str) -> None:
    assert normalize_url(raw) is None


def test_parse_url_exposes_host_and_port() -> None:
    assert parse_url("https://User@Example.org.:8443/a/") == NormalizedUrl(
        "https://example.org:8443/a", "https", "example.org", 8443
    )
    assert parse_url("http://[::ffff:127.0.0.1]/") == NormalizedUrl(
        "http://[::ffff:127.0.0.1]/", "http", "[::ffff:127.0.0.1]", None
    )


@given(st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=40))
def test_normalization_is_idempotent(raw: str) -> None:
    once = normalize_url(raw)
    if once is not None:
        assert normalize_url(once) == once


@pytest.mark.parametrize(
    "host", ["downloads.example.org", "8.8.8.8", "1.1.1.1", "[2606:4700::1111]", "xn--bcher-kva.ch", "a.b.c"]
)
def test_routable_hosts(host: str) -> None:
    assert is_routable_host(host)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "[::1]",
        "10.1.2.3",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "[::ffff:127.0.0.1]",
        "[fe80::1]",
        "localhost",
        "api.localhost",
        "intranet",
        "0x7f.1",
        "2130706433",
        "mirror.test",
        "abc.onion",
        "192.168.1.1",
        "172.16.0.1",
        "255.255.255.255",
        "[::]",
        "[fc00::1]",
        "[ff02::1]",
        "[2001:db8::1]",
        "[::ffff:10.0.0.1]",
        "127.1",
        "017.0.0.1",
        "0x7f.0x0.0x0.0x1",
        "printer.local",
        "host.example",
        "x.invalid",
        "svc.internal",
        "nas.home.arpa",
        "home.arpa",
        "example.123",
        "[not-an-ip]",
    ],
)
def test_non_routable_hosts(host: str) -> None:
    assert not is_routable_host(host)


def test_routability_of_a_normalized_url() -> None:
    parsed = parse_url("https://127.0.0.1:8443/fetch/data.zip")
    assert parsed is not None and not is_routable_host(parsed.host)
    parsed = parse_url("https://[::ffff:8.8.8.8]/x")
    assert parsed is not None and is_routable_host(parsed.host)


@pytest.mark.parametrize(
    ("element", "url"),
    [
        (
            "tiny-1.0.1.tar.gz::https://downloads.example.org/tiny/v1.0.1/tiny.tar.gz",
            "https://downloads.example.org/tiny/v1.0.1/tiny.tar.gz",
        ),
        ("git+https://example.org/tiny.git#tag=v1", "https://example.org/tiny.git"),
        ("name::git+https://example.org/tiny.git#commit=abc", "https://example.org/tiny.git"),
        ("hg+http://example.org/r", "http://example.org/r"),
        ("svn+ftp://example.org/r", "ftp://example.org/r"),
        ("bzr+https://example.org/r/", "https://example.org/r"),
        ("fossil+HTTPS://example.org/r", "https://example.org/r"),
        ("a::b::https://example.org/x", None),
        ("LICENSE", None),
        ("git://example.org/x.git", None),
        ("git+git://example.org/x.git", None),
        ("git+file:///srv/x", None),
        ("gitx+https://example.org/x", None),
        ("GIT+https://example.org/x", None),
        ("x.patch::file:///tmp/x", None),
        ("https://[::1]/x", None),
    ],
)
def test_elements_to_urls(element: str, url: str | None) -> None:
    assert element_to_url(element) == url


def test_elements_to_urls_keeps_first_seen_order_without_repeats() -> None:
    elements = ["b::https://b.example.org/", "LICENSE", "https://a.example.org", "HTTPS://A.example.org/"]
    assert elements_to_urls(elements) == ("https://b.example.org/", "https://a.example.org/")
