"""The origin allowlist, URL refusal and the safe path/query builders."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl, unquote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import errors
from harness.net import ClientConfigError, GuardedClient, RequestRefused, build_path, build_query
from harness.net.urls import Origin, display_url, parse_origin, resolve, resolve_redirect
from tests.net.https_server import HttpsServer, Reply

ORIGIN = Origin("api.example", 443, "/api/v3")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://api.github.com", Origin("api.github.com", 443, "")),
        ("https://api.github.com/", Origin("api.github.com", 443, "")),
        ("https://GHE.Example:8443/api/v3/", Origin("ghe.example", 8443, "/api/v3")),
        ("https://127.0.0.1:4443", Origin("127.0.0.1", 4443, "")),
        ("https://[::1]:4443", Origin("::1", 4443, "")),
    ],
)
def test_origin_parses(text: str, expected: Origin) -> None:
    assert parse_origin(text) == expected


def test_origin_root_and_base() -> None:
    assert parse_origin("https://ghe.example:443/api/v3").base == "https://ghe.example/api/v3"
    assert parse_origin("https://ghe.example:8443").root == "https://ghe.example:8443"
    assert parse_origin("https://[::1]:8443").root == "https://[::1]:8443"


@pytest.mark.parametrize(
    "text",
    [
        "http://api.github.com",
        "ftp://api.github.com",
        "https://",
        "https://user:pw@api.github.com",
        "https://api.github.com?x=1",
        "https://api.github.com/#frag",
        "https://api.github.com:0",
        "https://api.github.com:99999",
        "https://api.github.com/a/../b",
        "https://api.github.com/a b",
        "https://bad_host.example",
        "",
    ],
)
def test_origin_refuses_anything_but_https_host_port_prefix(text: str) -> None:
    with pytest.raises(ClientConfigError) as raised:
        parse_origin(text)
    assert raised.value.key == "origin"
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://api.example/api/v3/users", "scheme is not https"),
        ("https://other.example/api/v3/users", "host is not api.example"),
        ("https://api.example.evil/api/v3/users", "host is not api.example"),
        ("https://api.example:8443/api/v3/users", "port is not 443"),
        ("https://api.example/api/v4/users", "path is outside the allowed prefix /api/v3"),
        ("https://api.example/api/v3x", "path is outside the allowed prefix /api/v3"),
        ("https://api.example/", "path is outside the allowed prefix /api/v3"),
        ("https://u:p@api.example/api/v3/users", "URL has userinfo"),
        ("https://api.example/api/v3/users#x", "URL has a fragment"),
        ("https://api.example/api/v3/../admin", "path has a dot segment"),
        ("https://api.example/api/v3/%2e%2E/admin", "path has a dot segment"),
        ("https://api.example/api/v3/./x", "path has a dot segment"),
        ("https://api.example/api/v3/a b", "URL has characters that are not percent-encoded"),
        ("https://api.example/api/v3/a\r\nX-Injected: 1", "URL has characters that are not percent-encoded"),
        ("https://api.example/api/v3/caf\u00e9", "URL has characters that are not percent-encoded"),
        ("https://api.example/api/v3/a[b]", "URL has characters that are not percent-encoded"),
        ("https://api.example/api/v3/a%zz", "URL has a malformed percent escape"),
        ("https://api.example/api/v3/a?q=%4", "URL has a malformed percent escape"),
        ("users/octocat", "not a path starting with / or an https URL"),
        ("/../admin", "path has a dot segment"),
    ],
)
def test_request_urls_off_the_origin_are_refused(url: str, reason: str) -> None:
    with pytest.raises(RequestRefused) as raised:
        resolve(ORIGIN, url)
    assert raised.value.reason == reason
    assert raised.value.code == "refused"
    assert isinstance(raised.value, errors.Refused)


@pytest.mark.parametrize(
    ("target", "url"),
    [
        ("/users/octocat", "https://api.example/api/v3/users/octocat"),
        ("/users/octocat?per_page=30", "https://api.example/api/v3/users/octocat?per_page=30"),
        ("https://api.example/api/v3", "https://api.example/api/v3"),
        ("https://API.example:443/api/v3/x?arg[]=a", "https://api.example/api/v3/x?arg[]=a"),
    ],
)
def test_paths_resolve_under_the_prefix(target: str, url: str) -> None:
    assert resolve(ORIGIN, target) == url


def test_origin_without_prefix_allows_any_path() -> None:
    assert resolve(Origin("aur.example", 443, ""), "/") == "https://aur.example/"
    assert resolve(Origin("aur.example", 443, ""), "https://aur.example") == "https://aur.example/"


def test_refusal_message_is_one_line_without_query_or_userinfo() -> None:
    with pytest.raises(RequestRefused) as raised:
        resolve(ORIGIN, "http://u:secret@api.example/api/v3/users?token=secret")
    assert str(raised.value) == "GET http://api.example/api/v3/users: scheme is not https"
    assert display_url("https://h/a\r\nb c?x") == "https://h/a%0D%0Ab%20c"


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("/api/v3/b", "https://api.example/api/v3/b"),
        ("b?x=1", "https://api.example/api/v3/b?x=1"),
        ("https://api.example/api/v3/c", "https://api.example/api/v3/c"),
        ("https://other.example/api/v3/c", None),
        ("http://api.example/api/v3/c", None),
        ("//other.example/api/v3/c", None),
        ("/elsewhere", None),
        ("../../elsewhere", None),
        ("/api/v3/%2e%2e/x", None),
        ("/api/v3/a b", None),
        ("/api/v3/b#frag", None),
        ("", None),
    ],
)
def test_redirect_targets_resolve_against_the_request_url(location: str, expected: str | None) -> None:
    assert resolve_redirect(ORIGIN, "https://api.example/api/v3/a", location) == expected


def test_builders_percent_encode_with_no_safe_characters() -> None:
    assert build_path(["users", "dependabot[bot]"]) == "/users/dependabot%5Bbot%5D"
    assert build_path(["users", "a+b@c", "events", "public"]) == "/users/a%2Bb%40c/events/public"
    assert build_path(["cgit", "aur.git", "plain", "a/b"]) == "/cgit/aur.git/plain/a%2Fb"
    assert build_query([("arg[]", "a+b@c")]) == "?arg[]=a%2Bb%40c"
    assert build_query([("h", "tiny demo"), ("id", "a1&x=y")]) == "?h=tiny%20demo&id=a1%26x%3Dy"
    assert build_query([]) == ""


@pytest.mark.parametrize("segments", [[], [""], ["users", "."], ["..", "x"]])
def test_build_path_refuses_empty_and_dot_segments(segments: list[str]) -> None:
    with pytest.raises(ValueError):
        build_path(segments)


_segment = st.text(min_size=1, max_size=20).filter(lambda s: s not in (".", ".."))
_pair = st.tuples(st.text(max_size=8), st.text(max_size=8))


@given(segments=st.lists(_segment, min_size=1, max_size=4), pairs=st.lists(_pair, max_size=3))
def test_built_urls_pass_the_check_and_decode_back(segments: list[str], pairs: list[tuple[str, str]]) -> None:
    url = resolve(ORIGIN, build_path(segments) + build_query(pairs))
    parts = urlsplit(url)
    assert (parts.hostname, parts.path.split("/")[1:3]) == ("api.example", ["api", "v3"])
    assert [unquote(s) for s in parts.path.split("/")[3:]] == segments
    assert parse_qsl(parts.query, keep_blank_values=True) == [(k, v) for k, v in pairs]


@pytest.mark.parametrize(
    "target_for",
    [
        lambda s: s.url("/x").replace("https://", "http://"),
        lambda s: f"https://localhost:{s.port}/x",
        lambda s: "https://127.0.0.1:1/x",
        lambda s: s.url("/x/../y"),
    ],
)
def test_refused_requests_never_reach_the_server(
    https_server: HttpsServer, make_client: Callable[..., GuardedClient], target_for: Callable[[HttpsServer], str]
) -> None:
    https_server.script("/x", Reply(200))
    with pytest.raises(RequestRefused):
        make_client().get(target_for(https_server))
    assert https_server.connections == 0


def test_a_path_outside_the_prefix_is_refused_and_inside_is_served(
    https_server: HttpsServer, make_client: Callable[..., GuardedClient]
) -> None:
    https_server.script("/api/v3/users/octocat", Reply(200, body=b"{}"))
    client = make_client(origin=https_server.url("/api/v3"))
    with pytest.raises(RequestRefused) as raised:
        client.get(https_server.url("/api/other"))
    assert raised.value.reason == "path is outside the allowed prefix /api/v3"
    assert https_server.connections == 0
    assert client.get("/users/octocat").body == b"{}"
    assert https_server.targets() == ["/api/v3/users/octocat"]


def test_the_server_decodes_bracketed_keys_either_way(
    https_server: HttpsServer, make_client: Callable[..., GuardedClient]
) -> None:
    client = make_client()
    client.get("/rpc/v5/info" + build_query([("arg[]", "a+b@c")]))
    client.get("/rpc/v5/info?arg%5B%5D=a%2Bb%40c")
    assert https_server.targets() == ["/rpc/v5/info?arg[]=a%2Bb%40c", "/rpc/v5/info?arg%5B%5D=a%2Bb%40c"]
    assert [r.query for r in https_server.requests] == [{"arg[]": ["a+b@c"]}] * 2
