"""Redirect policy: `never` returns the 3xx, `allowlisted` follows only inside the origin, prefix and predicate."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import trustme

from harness.net import REDIRECT_REFUSED, GuardedClient, RequestRefused
from tests.net.https_server import HttpsServer, Reply

MakeClient = Callable[..., GuardedClient]


@pytest.fixture
def other_server(tls_ca: trustme.CA) -> Iterator[HttpsServer]:
    """A second server (same CA, so only the allowlist can keep the client away from it)."""
    with HttpsServer(tls_ca) as server:
        server.script("/x", Reply(200, body=b"must never be fetched"))
        yield server


def _moved(location: str, status: int = 302) -> Reply:
    return Reply(status, headers=[("Location", location)])


def test_never_returns_the_redirect_itself(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/a", _moved("/b", 301))
    response = make_client().get("/a")
    assert (response.status, response.headers["location"]) == (301, "/b")
    assert https_server.targets() == ["/a"]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_allowlisted_follows_inside_the_origin(https_server: HttpsServer, make_client: MakeClient, status: int) -> None:
    https_server.script("/a", _moved(https_server.url("/b?h=pkg&id=abc"), status))
    https_server.script("/b", Reply(200, body=b"target"))
    response = make_client(follow_redirects="allowlisted").get("/a")
    assert (response.status, response.body, response.url) == (200, b"target", https_server.url("/b?h=pkg&id=abc"))
    assert [(r.method, r.target) for r in https_server.requests] == [("GET", "/a"), ("GET", "/b?h=pkg&id=abc")]


def test_relative_locations_resolve_against_the_request_url(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/dir/a", _moved("b"))
    https_server.script("/dir/b", Reply(200, body=b"ok"))
    assert make_client(follow_redirects="allowlisted").get("/dir/a").body == b"ok"


def test_a_3xx_without_location_is_the_outcome(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/a", Reply(302))
    assert make_client(follow_redirects="allowlisted").get("/a").status == 302


@pytest.mark.parametrize(
    "location_for",
    [
        lambda main, other: f"https://localhost:{other.port}/x",
        lambda main, other: other.url("/x"),
        lambda main, other: f"https://localhost:{main.port}/x",
        lambda main, other: main.url("/x").replace("https://", "http://"),
        lambda main, other: "https://other.invalid/x",
    ],
)
def test_redirects_off_the_allowlist_are_refused_and_never_contacted(
    https_server: HttpsServer,
    other_server: HttpsServer,
    make_client: MakeClient,
    location_for: Callable[[HttpsServer, HttpsServer], str],
) -> None:
    https_server.script("/a", _moved(location_for(https_server, other_server)))
    with pytest.raises(RequestRefused) as raised:
        make_client(follow_redirects="allowlisted").get("/a?token=secret")
    assert str(raised.value) == f"GET {https_server.url('/a')}: {REDIRECT_REFUSED}"
    assert other_server.connections == 0
    assert https_server.targets() == ["/a?token=secret"]


def test_redirects_outside_the_prefix_are_refused(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/api/a", _moved("/elsewhere"))
    https_server.script("/api/b", _moved("/api/%2e%2e/elsewhere"))
    client = make_client(origin=https_server.url("/api"), follow_redirects="allowlisted")
    for path in ("/a", "/b"):
        with pytest.raises(RequestRefused):
            client.get(path)
    assert https_server.targets() == ["/api/a", "/api/b"]


def test_the_predicate_sees_the_absolute_target_and_can_refuse_it(
    https_server: HttpsServer, make_client: MakeClient
) -> None:
    seen: list[str] = []

    def only_plain(url: str) -> bool:
        seen.append(url)
        return url.startswith(https_server.url("/cgit/aur.git/plain/"))

    https_server.script("/a", _moved("/cgit/aur.git/plain/PKGBUILD?h=x&id=1"))
    https_server.script("/b", _moved("/cgit/aur.git/log/"))
    https_server.script("/cgit/aur.git/plain/PKGBUILD", Reply(200, body=b"pkgbuild"))
    client = make_client(follow_redirects="allowlisted", redirect_allowed=only_plain)
    assert client.get("/a").body == b"pkgbuild"
    with pytest.raises(RequestRefused) as raised:
        client.get("/b")
    assert raised.value.reason == REDIRECT_REFUSED
    assert seen == [https_server.url("/cgit/aur.git/plain/PKGBUILD?h=x&id=1"), https_server.url("/cgit/aur.git/log/")]
    assert "/cgit/aur.git/log/" not in https_server.targets()


def _chain(server: HttpsServer, hops: int) -> None:
    for hop in range(hops):
        server.script(f"/r{hop}", _moved(f"/r{hop + 1}"))
    server.script(f"/r{hops}", Reply(200, body=b"end"))


def test_at_most_max_redirects_hops_are_followed(https_server: HttpsServer, make_client: MakeClient) -> None:
    _chain(https_server, 4)
    client = make_client(follow_redirects="allowlisted", max_redirects=3)
    assert client.get("/r1").body == b"end"
    with pytest.raises(RequestRefused) as raised:
        client.get("/r0")
    assert raised.value.reason == "more than 3 redirects refused"
    assert https_server.targets()[-4:] == ["/r0", "/r1", "/r2", "/r3"]


def test_the_default_limit_is_five_hops(https_server: HttpsServer, make_client: MakeClient) -> None:
    _chain(https_server, 6)
    client = make_client(follow_redirects="allowlisted")
    assert client.get("/r1").body == b"end"
    with pytest.raises(RequestRefused):
        client.get("/r0")
