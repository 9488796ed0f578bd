"""The GitHub and AUR instances of docs/net.md's Instances table, against the loopback server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import trustme
from hypothesis import given
from hypothesis import strategies as st

from harness.net import (
    REDIRECT_REFUSED,
    ClientConfigError,
    GuardedClient,
    RequestRefused,
    TooLarge,
    Unavailable,
    aur_client_transport,
    build_path,
    build_query,
    github_client,
)
from harness.net.instances import aur_jitter
from tests.net.https_server import HttpsServer, Reply
from tests.net.sleeps import SleepRecorder

MIB = 1024 * 1024
Builder = Callable[..., GuardedClient]


@pytest.fixture
def github(https_server: HttpsServer) -> Iterator[Builder]:
    clients: list[GuardedClient] = []

    def build(token: str | None = None, prefix: str = "") -> GuardedClient:
        client = github_client(https_server.url(prefix), https_server.ca_file, token, read_timeout_s=2, deadline_s=5)
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.close()


@pytest.fixture
def aur(https_server: HttpsServer, sleeps: SleepRecorder) -> Iterator[Builder]:
    clients: list[GuardedClient] = []

    def build(**overrides: Any) -> GuardedClient:
        client = aur_client_transport(
            https_server.origin,
            https_server.ca_file,
            overrides.pop("min_interval_ms", 0),
            overrides.pop("backoff_base_ms", 1000),
            overrides.pop("max_retries", 3),
            overrides.pop("retry_after_cap_s", 30),
            sleep=sleeps,
            jitter_s=lambda delay: 0.0,
            read_timeout_s=2,
            **overrides,
        )
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.close()


def test_github_headers_without_a_token(https_server: HttpsServer, github: Builder) -> None:
    for token in (None, "", "   "):
        github(token).get("/users/octocat")
    for request in https_server.requests:
        assert request.headers["accept"] == "application/vnd.github+json"
        assert request.headers["x-github-api-version"] == "2022-11-28"
        assert request.headers["user-agent"] == "triage-harness/0.1.0"
        assert "authorization" not in request.headers


def test_github_sends_the_bearer_token_when_set(https_server: HttpsServer, github: Builder) -> None:
    github("ghp_example").get("/users/octocat")
    assert https_server.requests[0].headers["authorization"] == "Bearer ghp_example"


def test_github_keeps_its_path_prefix(https_server: HttpsServer, github: Builder) -> None:
    client = github(prefix="/api/v3")
    client.get(build_path(["users", "dependabot[bot]"]))
    client.get(build_path(["users", "octocat", "events", "public"]) + build_query([("per_page", "30")]))
    assert https_server.targets() == [
        "/api/v3/users/dependabot%5Bbot%5D",
        "/api/v3/users/octocat/events/public?per_page=30",
    ]
    with pytest.raises(RequestRefused):
        client.get(https_server.url("/users/octocat"))


@pytest.mark.parametrize("status", [301, 403, 429, 500, 503])
def test_github_never_retries_or_follows(
    https_server: HttpsServer, github: Builder, status: int
) -> None:
    https_server.script("/users/x", Reply(status, headers=[("Location", "/users/y"), ("Retry-After", "1")]))
    assert github().get("/users/x").status == status
    assert https_server.targets() == ["/users/x"]


def test_github_body_cap_is_4_mib(https_server: HttpsServer, github: Builder) -> None:
    https_server.script("/exact", Reply(200, body=b"x" * (4 * MIB)))
    https_server.script("/over", Reply(200, body=b"x" * (4 * MIB + 1)))
    client = github()
    assert len(client.get("/exact").body) == 4 * MIB
    with pytest.raises(TooLarge) as raised:
        client.get("/over")
    assert raised.value.reason == "response larger than 4,194,304 bytes"


def test_aur_headers(https_server: HttpsServer, aur: Builder) -> None:
    aur().get("/rpc/v5/info?arg[]=tiny-demo-bin", accept="application/json")
    headers = https_server.requests[0].headers
    assert headers["user-agent"] == "triage-harness/0.1.0"
    assert headers["cache-control"] == "no-cache"
    assert headers["accept"] == "application/json"
    assert "authorization" not in headers and "cookie" not in headers


def test_aur_429_with_retry_after_1_then_200(https_server: HttpsServer, aur: Builder, sleeps: SleepRecorder) -> None:
    https_server.script("/rpc/v5/info", Reply(429, headers=[("Retry-After", "1")]), Reply(200, body=b"{}"))
    assert aur().get("/rpc/v5/info?arg[]=x").status == 200
    assert len(https_server.requests) == 2
    assert sleeps.delays == [1.0]


def test_aur_429_with_retry_after_3600(https_server: HttpsServer, aur: Builder) -> None:
    https_server.script("/rpc/v5/info", Reply(429, headers=[("Retry-After", "3600")]))
    with pytest.raises(Unavailable) as raised:
        aur().get("/rpc/v5/info?arg[]=x")
    assert raised.value.reason == "Retry-After 3600 s exceeds the 30 s cap"
    assert len(https_server.requests) == 1


def test_aur_503_four_times(https_server: HttpsServer, aur: Builder) -> None:
    https_server.script("/rpc/v5/info", Reply(503))
    with pytest.raises(Unavailable) as raised:
        aur().get("/rpc/v5/info?arg[]=x")
    assert (raised.value.status, raised.value.reason) == (503, "HTTP 503 (4 attempts)")
    assert len(https_server.requests) == 4


def test_aur_backoff_is_capped_at_15_s(https_server: HttpsServer, aur: Builder, sleeps: SleepRecorder) -> None:
    https_server.script("/x", Reply(500))
    with pytest.raises(Unavailable):
        aur(backoff_base_ms=10_000, max_retries=5).get("/x")
    assert sleeps.delays == [10.0, 15.0, 15.0, 15.0, 15.0]


@given(st.floats(min_value=0, max_value=100, allow_nan=False))
def test_aur_jitter_is_0_to_250_ms(delay: float) -> None:
    assert 0 <= aur_jitter(delay) <= 0.25


@pytest.fixture
def elsewhere(tls_ca: trustme.CA) -> Iterator[HttpsServer]:
    with HttpsServer(tls_ca) as server:
        yield server


def test_aur_redirects(https_server: HttpsServer, elsewhere: HttpsServer, aur: Builder) -> None:
    plain = "/cgit/aur.git/plain/PKGBUILD?h=tiny-demo&id=b2b2b2b"
    https_server.script("/off", Reply(302, headers=[("Location", "https://other.invalid/x")]))
    cleartext = https_server.url(plain).replace("https://", "http://")
    https_server.script("/cleartext", Reply(302, headers=[("Location", cleartext)]))
    https_server.script("/elsewhere", Reply(302, headers=[("Location", f"https://localhost:{elsewhere.port}{plain}")]))
    https_server.script("/moved", Reply(302, headers=[("Location", https_server.url(plain))]))
    https_server.script("/cgit/aur.git/plain/PKGBUILD", Reply(200, body=b"pkgname=tiny-demo"))
    client = aur(redirect_allowed=lambda url: url.startswith(https_server.url("/cgit/aur.git/plain/")))
    for path in ("/off", "/cleartext", "/elsewhere"):
        with pytest.raises(RequestRefused) as raised:
            client.get(path)
        assert raised.value.reason == REDIRECT_REFUSED
    assert elsewhere.connections == 0
    assert client.get("/moved").body == b"pkgname=tiny-demo"


def test_aur_follows_at_most_3_hops(https_server: HttpsServer, aur: Builder) -> None:
    for hop in range(4):
        https_server.script(f"/r{hop}", Reply(302, headers=[("Location", f"/r{hop + 1}")]))
    https_server.script("/r4", Reply(200))
    client = aur()
    assert client.get("/r1").status == 200
    with pytest.raises(RequestRefused):
        client.get("/r0")


def test_aur_body_cap_is_1_mib(https_server: HttpsServer, aur: Builder) -> None:
    https_server.script("/big", Reply(200, body=b"x" * (MIB + 1)))
    with pytest.raises(TooLarge) as raised:
        aur().get("/big")
    assert raised.value.reason == "response larger than 1,048,576 bytes"


_AUR_OK: dict[str, Any] = {
    "base_url": "https://aur.archlinux.org",
    "ca_file": None,
    "min_interval_ms": 200,
    "backoff_base_ms": 1000,
    "max_retries": 3,
    "retry_after_cap_s": 30,
}


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"base_url": "http://aur.archlinux.org"}, "base_url"),
        ({"base_url": "https://aur.archlinux.org/sub"}, "base_url"),
        ({"base_url": "https://aur.archlinux.org/?x=1"}, "base_url"),
        ({"ca_file": "/nonexistent/ca.pem"}, "ca_file"),
        ({"min_interval_ms": 10_001}, "min_interval_ms"),
        ({"min_interval_ms": -1}, "min_interval_ms"),
        ({"backoff_base_ms": 0}, "backoff_base_ms"),
        ({"max_retries": 6}, "max_retries"),
        ({"max_retries": True}, "max_retries"),
        ({"retry_after_cap_s": 301}, "retry_after_cap_s"),
        ({"retry_after_cap_s": 0}, "retry_after_cap_s"),
    ],
)
def test_aur_construction_errors_name_the_aur_key(overrides: dict[str, Any], key: str) -> None:
    with pytest.raises(ClientConfigError) as raised:
        aur_client_transport(**{**_AUR_OK, **overrides})
    assert raised.value.key == key


def test_aur_accepts_the_range_limits() -> None:
    lowest = {"min_interval_ms": 0, "backoff_base_ms": 1, "max_retries": 0, "retry_after_cap_s": 1}
    highest = {"min_interval_ms": 10_000, "backoff_base_ms": 10_000, "max_retries": 5, "retry_after_cap_s": 300}
    for values in (lowest, highest):
        aur_client_transport(**{**_AUR_OK, "base_url": "https://aur.archlinux.org/", **values}).close()


@pytest.mark.parametrize("api_url", ["http://api.github.com", "https://u:p@api.github.com", "https://api.github.com#x"])
def test_github_construction_errors_name_api_url(api_url: str) -> None:
    with pytest.raises(ClientConfigError) as raised:
        github_client(api_url, None, None)
    assert raised.value.key == "api_url"


def test_github_accepts_a_path_prefix() -> None:
    with github_client("https://ghe.example/api/v3", None, "tok") as client:
        assert client.origin == "https://ghe.example/api/v3"
