"""The pure parts of the pulls: Link parsing, rate-limit recognition and waits, the first page's query."""

from __future__ import annotations

import math

import pytest

from harness.errors import InvalidInput
from harness.pull.links import next_link
from harness.pull.ratelimit import is_rate_limited, wait_seconds
from harness.pull.sources import github_audit_source, okta_domain, okta_source


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('<https://a.example/x?after=1>; rel="next"', "https://a.example/x?after=1"),
        ('<https://o/self>; rel="self", <https://o/n?after=2>; rel="next"', "https://o/n?after=2"),
        ("<https://o/n?after=3>; rel=next", "https://o/n?after=3"),
        ('<https://o/p>; rel="prev next"', "https://o/p"),
        ('<https://o/f>; rel="first", <https://o/l>; rel="last"', ""),
        ('<https://o/n>; title="rel=next"; rel="self"', ""),
        ("", ""),
        ("garbage; rel=next", ""),
    ],
)
def test_next_link(header: str, expected: str) -> None:
    assert next_link(header) == expected


def test_rate_limit_recognition() -> None:
    assert is_rate_limited(429, {}, "x-ratelimit-reset")
    assert is_rate_limited(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1"}, "x-ratelimit-reset")
    assert is_rate_limited(403, {"retry-after": "5"}, "x-ratelimit-reset")
    assert is_rate_limited(403, {"x-rate-limit-remaining": "0", "x-rate-limit-reset": "9"}, "x-rate-limit-reset")
    # A plain 403 (no access) is not a rate limit, nor is a 403 with requests left.
    assert not is_rate_limited(403, {}, "x-ratelimit-reset")
    assert not is_rate_limited(403, {"x-ratelimit-remaining": "12", "x-ratelimit-reset": "1"}, "x-ratelimit-reset")
    assert not is_rate_limited(500, {"retry-after": "1"}, "x-ratelimit-reset")


def test_wait_seconds() -> None:
    now = 1_800_000_000.0
    assert wait_seconds({"retry-after": "7"}, "x-ratelimit-reset", now) == 7
    assert wait_seconds({"retry-after": "Fri, 15 Jan 2027 08:00:10 GMT"}, "x", 1_800_000_000.0) == pytest.approx(
        1_800_000_010.0 - now
    )
    assert wait_seconds({"x-ratelimit-reset": str(int(now) + 30)}, "x-ratelimit-reset", now) == 30
    assert wait_seconds({"x-ratelimit-reset": str(int(now) - 30)}, "x-ratelimit-reset", now) == 0
    # Retry-After wins over the reset header; an unparseable Retry-After falls back to it.
    assert wait_seconds({"retry-after": "2", "x-rate-limit-reset": str(int(now) + 60)}, "x-rate-limit-reset", now) == 2
    assert (
        wait_seconds({"retry-after": "soon", "x-rate-limit-reset": str(int(now) + 60)}, "x-rate-limit-reset", now) == 60
    )
    assert wait_seconds({"x-ratelimit-reset": "9" * 400}, "x-ratelimit-reset", now) == math.inf
    assert wait_seconds({}, "x-ratelimit-reset", now) is None
    assert wait_seconds({"x-ratelimit-reset": "-5"}, "x-ratelimit-reset", now) is None


def test_first_pages() -> None:
    github = github_audit_source("Contoso")
    assert github.key == "github-audit-contoso"
    assert github.first_path("") == "/orgs/Contoso/audit-log?per_page=100&order=asc"
    assert github.first_path("2026-04-10T09:00:00Z") == (
        "/orgs/Contoso/audit-log?per_page=100&order=asc&phrase=created%3A%3E%3D2026-04-10T09%3A00%3A00Z"
    )
    okta = okta_source("Example.Okta.com")
    assert okta.key == "okta-example.okta.com"
    assert okta.first_path("2026-04-10T09:00:00Z") == "/api/v1/logs?limit=100&since=2026-04-10T09%3A00%3A00Z"


@pytest.mark.parametrize("domain", ["", "evil.example/x", "a@b", "host:0", "host:99999", "-x.example", "a b"])
def test_bad_okta_domains_are_refused(domain: str) -> None:
    with pytest.raises(InvalidInput, match="^--domain:"):
        okta_domain(domain)


@pytest.mark.parametrize("org", ["", "../x", "a/b", "-lead", "x" * 101])
def test_bad_github_orgs_are_refused(org: str) -> None:
    with pytest.raises(InvalidInput, match="^--org:"):
        github_audit_source(org)
