"""Basic behaviour of GuardedClient against the loopback HTTPS server: answers, headers, caps, connections."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness import errors
from harness.net import ClientConfigError, GuardedClient, TooLarge, Unavailable
from tests.net.https_server import HttpsServer, Reply

MakeClient = Callable[..., GuardedClient]


def test_get_returns_status_headers_body_and_url(https_server: HttpsServer, make_client: MakeClient) -> None:
    headers = [("Content-Type", "application/json"), ("X-A", "1"), ("X-A", "2")]
    https_server.script("/users/octocat", Reply(200, headers=headers, body=b'{"a":1}'))
    response = make_client().get("/users/octocat?per_page=30")
    assert response.status == 200
    assert response.body == b'{"a":1}'
    assert response.url == https_server.url("/users/octocat?per_page=30")
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-a"] == "1, 2"
    assert [(r.method, r.target, r.version) for r in https_server.requests] == [
        ("GET", "/users/octocat?per_page=30", "HTTP/1.1")
    ]


@pytest.mark.parametrize("status", [201, 204, 301, 400, 401, 403, 404, 418, 429, 500, 503])
def test_any_final_status_is_a_response_for_the_caller_to_map(
    https_server: HttpsServer, make_client: MakeClient, status: int
) -> None:
    https_server.script("/x", Reply(status, body=b"" if status == 204 else b"detail"))
    response = make_client().get("/x")
    assert response.status == status
    assert len(https_server.requests) == 1


def test_fixed_headers_are_sent_and_accept_can_be_set_per_call(
    https_server: HttpsServer, make_client: MakeClient
) -> None:
    client = make_client(headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"})
    client.get("/a")
    client.get("/b", accept="application/json")
    first, second = (r.headers for r in https_server.requests)
    assert first["user-agent"] == "triage-harness/0.1.0"
    assert first["accept"] == "application/vnd.github+json"
    assert first["x-github-api-version"] == "2022-11-28"
    assert first["accept-encoding"] == "identity"
    assert second["accept"] == "application/json"
    assert "authorization" not in first


def test_compression_cannot_be_requested(https_server: HttpsServer, make_client: MakeClient) -> None:
    make_client(headers={"Accept-Encoding": "gzip"}).get("/a")
    assert https_server.requests[0].headers["accept-encoding"] == "identity"


def test_a_compressed_body_is_refused_not_decoded(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/z", Reply(200, headers=[("Content-Encoding", "gzip")], body=b"\x1f\x8b"))
    with pytest.raises(Unavailable) as raised:
        make_client().get("/z")
    assert raised.value.kind == "protocol"
    assert raised.value.reason == "response has a Content-Encoding other than identity"


def test_cookies_are_never_kept_or_sent(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/login", Reply(200, headers=[("Set-Cookie", "session=abc; Path=/"), ("Set-Cookie", "b=c")]))
    client = make_client()
    client.get("/login")
    client.get("/next")
    assert all("cookie" not in r.headers for r in https_server.requests)


def test_connections_are_kept_alive_within_one_instance(https_server: HttpsServer, make_client: MakeClient) -> None:
    client = make_client()
    for _ in range(3):
        client.get("/a")
    assert https_server.connections == 1
    assert len({r.client_port for r in https_server.requests}) == 1
    make_client().get("/a")
    assert https_server.connections == 2


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_of_exactly_the_cap_passes(https_server: HttpsServer, make_client: MakeClient, chunked: bool) -> None:
    https_server.script("/big", Reply(200, body=b"x" * 1024, chunked=chunked, chunk_size=100))
    assert make_client(max_body_bytes=1024).get("/big").body == b"x" * 1024


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_of_cap_plus_one_is_too_large(https_server: HttpsServer, make_client: MakeClient, chunked: bool) -> None:
    https_server.script("/big", Reply(200, body=b"x" * 1025, chunked=chunked, chunk_size=100))
    with pytest.raises(TooLarge) as raised:
        make_client(max_body_bytes=1024).get("/big?token=secret")
    assert raised.value.limit == 1024
    assert str(raised.value) == f"GET {https_server.url('/big')}: response larger than 1,024 bytes"
    assert raised.value.code == "upstream_unavailable"
    assert isinstance(raised.value, errors.UpstreamUnavailable)


def test_a_declared_length_over_the_cap_is_too_large_before_reading(
    https_server: HttpsServer, make_client: MakeClient
) -> None:
    https_server.script("/big", Reply(200, body=b"x" * 10, content_length=1_048_577, close=True))
    with pytest.raises(TooLarge) as raised:
        make_client(max_body_bytes=1_048_576).get("/big")
    assert raised.value.reason == "response larger than 1,048,576 bytes"


def test_an_empty_cap_allows_only_empty_bodies(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/empty", Reply(204))
    https_server.script("/one", Reply(200, body=b"1"))
    client = make_client(max_body_bytes=0)
    assert client.get("/empty").body == b""
    with pytest.raises(TooLarge):
        client.get("/one")


def test_client_exposes_its_origin_and_closes(https_server: HttpsServer) -> None:
    with GuardedClient(
        origin=https_server.url("/api/v3/"), ca_file=https_server.ca_file,
        connect_timeout_s=1, read_timeout_s=1, deadline_s=1, max_body_bytes=10,
    ) as client:
        assert client.origin == https_server.url("/api/v3")


_BASE = {
    "origin": "https://127.0.0.1:4443",
    "connect_timeout_s": 1,
    "read_timeout_s": 1,
    "deadline_s": 1,
    "max_body_bytes": 1,
}


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"origin": "http://127.0.0.1:4443"}, "origin"),
        ({"origin": "https://127.0.0.1:4443/?q"}, "origin"),
        ({"connect_timeout_s": 0}, "connect_timeout_s"),
        ({"read_timeout_s": -1}, "read_timeout_s"),
        ({"deadline_s": float("inf")}, "deadline_s"),
        ({"retry_after_cap_s": 0}, "retry_after_cap_s"),
        ({"max_body_bytes": -1}, "max_body_bytes"),
        ({"max_retries": 1.5}, "max_retries"),
        ({"backoff_base_ms": -1}, "backoff_base_ms"),
        ({"backoff_cap_s": -1}, "backoff_cap_s"),
        ({"min_interval_ms": -1}, "min_interval_ms"),
        ({"max_redirects": -1}, "max_redirects"),
        ({"follow_redirects": "always"}, "follow_redirects"),
        ({"headers": {"X-Bad": "a\r\nb"}}, "headers"),
        ({"headers": {"Bad Name": "a"}}, "headers"),
        ({"ca_file": "/nonexistent/ca.pem"}, "ca_file"),
    ],
)
def test_unusable_settings_are_refused_at_construction(overrides: dict[str, object], key: str) -> None:
    with pytest.raises(ClientConfigError) as raised:
        GuardedClient(**{**_BASE, **overrides})  # type: ignore[arg-type]
    assert raised.value.key == key
    assert str(raised.value).startswith(f"{key}: ")


def test_a_ca_file_that_is_not_pem_is_refused(tmp_path: Path) -> None:
    bogus = tmp_path / "ca.pem"
    bogus.write_text("not a certificate\n")
    with pytest.raises(ClientConfigError) as raised:
        GuardedClient(**{**_BASE, "ca_file": str(bogus)})  # type: ignore[arg-type]
    assert raised.value.key == "ca_file"
