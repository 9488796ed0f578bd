"""Retries: which outcomes retry, backoff and jitter, Retry-After (seconds, dates, cap), TLS never retried."""

from __future__ import annotations

import socket
from collections.abc import Callable
from email.utils import formatdate

import pytest
import trustme

from harness.net import GuardedClient, Unavailable
from tests.net.https_server import HttpsServer, Reply
from tests.net.sleeps import SleepRecorder

MakeClient = Callable[..., GuardedClient]
NOW = 1_700_000_000.0


def test_503_then_200_succeeds_with_retries(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    https_server.script("/x", Reply(503), Reply(200, body=b"ok"))
    response = make_client(max_retries=1, backoff_base_ms=100).get("/x")
    assert (response.status, response.body) == (200, b"ok")
    assert len(https_server.requests) == 2
    assert sleeps.delays == [0.1]


def test_503_then_200_fails_without_retries(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    https_server.script("/x", Reply(503, body=b"busy"), Reply(200, body=b"ok"))
    response = make_client(max_retries=0).get("/x")
    assert (response.status, response.body) == (503, b"busy")
    assert len(https_server.requests) == 1
    assert sleeps.delays == []


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_every_retryable_status_is_retried(https_server: HttpsServer, make_client: MakeClient, status: int) -> None:
    https_server.script("/x", Reply(status), Reply(200))
    assert make_client(max_retries=1).get("/x").status == 200


@pytest.mark.parametrize("status", [400, 401, 403, 404, 501, 505])
def test_other_statuses_are_not_retried(https_server: HttpsServer, make_client: MakeClient, status: int) -> None:
    https_server.script("/x", Reply(status), Reply(200))
    assert make_client(max_retries=3).get("/x").status == status
    assert len(https_server.requests) == 1


def test_exhausted_retries_are_unavailable_with_the_last_status(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    https_server.script("/x", Reply(503), Reply(503), Reply(503), Reply(502))
    with pytest.raises(Unavailable) as raised:
        make_client(max_retries=3, backoff_base_ms=1000, deadline_s=60).get("/x?q=secret")
    assert (raised.value.kind, raised.value.status) == ("status", 502)
    assert str(raised.value) == f"GET {https_server.url('/x')}: HTTP 502 (4 attempts)"
    assert raised.value.code == "upstream_unavailable"
    assert len(https_server.requests) == 4
    assert sleeps.delays == [1.0, 2.0, 4.0]


def test_backoff_is_capped_and_jitter_added(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    https_server.script("/x", Reply(500))
    with pytest.raises(Unavailable):
        client = make_client(max_retries=3, backoff_base_ms=1000, backoff_cap_s=1.5, jitter_s=lambda d: d / 10)
        client.get("/x")
    assert sleeps.delays == [1.1, 1.65, 1.65]


def test_retry_after_seconds_is_honoured(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    https_server.script("/x", Reply(429, headers=[("Retry-After", "1")]), Reply(200))
    assert make_client(max_retries=3, backoff_base_ms=5000, jitter_s=lambda d: 1.0).get("/x").status == 200
    assert len(https_server.requests) == 2
    assert sleeps.delays == [1.0]


def test_retry_after_http_date_is_measured_against_the_clock(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    https_server.script("/x", Reply(503, headers=[("Retry-After", formatdate(NOW + 7, usegmt=True))]), Reply(200))
    assert make_client(max_retries=1, clock=lambda: NOW, deadline_s=30).get("/x").status == 200
    assert sleeps.delays == [7.0]


@pytest.mark.parametrize("value", ["-5", formatdate(NOW - 3600, usegmt=True)])
def test_negative_or_past_retry_after_counts_as_zero(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder, value: str
) -> None:
    https_server.script("/x", Reply(429, headers=[("Retry-After", value)]), Reply(200))
    assert make_client(max_retries=1, clock=lambda: NOW).get("/x").status == 200
    assert sleeps.delays == [0.0]


def test_unparseable_retry_after_falls_back_to_backoff(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    https_server.script("/x", Reply(429, headers=[("Retry-After", "soon")]), Reply(200))
    assert make_client(max_retries=1, backoff_base_ms=200).get("/x").status == 200
    assert sleeps.delays == [0.2]


def test_retry_after_equal_to_the_cap_is_honoured(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    https_server.script("/x", Reply(429, headers=[("Retry-After", "30")]), Reply(200))
    assert make_client(max_retries=1, retry_after_cap_s=30, deadline_s=60).get("/x").status == 200
    assert sleeps.delays == [30.0]


@pytest.mark.parametrize(("value", "shown"), [("3600", "3600"), (formatdate(NOW + 120, usegmt=True), "120")])
def test_retry_after_above_the_cap_stops_at_once(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder, value: str, shown: str
) -> None:
    https_server.script("/x", Reply(429, headers=[("Retry-After", value)]), Reply(200))
    with pytest.raises(Unavailable) as raised:
        make_client(max_retries=3, retry_after_cap_s=30, clock=lambda: NOW).get("/x")
    assert raised.value.reason == f"Retry-After {shown} s exceeds the 30 s cap"
    assert (raised.value.kind, raised.value.status) == ("retry_after", 429)
    assert len(https_server.requests) == 1
    assert sleeps.delays == []


def test_without_retries_retry_after_is_not_consulted(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/x", Reply(429, headers=[("Retry-After", "3600")]))
    assert make_client(max_retries=0).get("/x").status == 429


def test_a_backoff_past_the_deadline_ends_at_once(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    https_server.script("/x", Reply(503), Reply(200))
    with pytest.raises(Unavailable) as raised:
        make_client(max_retries=3, backoff_base_ms=2000, deadline_s=1).get("/x")
    assert raised.value.kind == "deadline"
    assert raised.value.reason == "deadline of 1 s leaves no time to retry after HTTP 503"
    assert len(https_server.requests) == 1
    assert sleeps.delays == []


def test_a_dropped_connection_is_a_read_failure_and_retried(
    https_server: HttpsServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    https_server.script("/x", Reply(drop=True), Reply(200, body=b"ok"))
    assert make_client(max_retries=1).get("/x").body == b"ok"
    https_server.script("/y", Reply(drop=True))
    with pytest.raises(Unavailable) as raised:
        make_client(max_retries=0).get("/y")
    assert raised.value.kind == "read"
    assert raised.value.reason.startswith("read failed: ")


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connection_failures_are_retried(make_client: MakeClient, sleeps: SleepRecorder) -> None:
    port = _dead_port()
    with pytest.raises(Unavailable) as raised:
        make_client(origin=f"https://127.0.0.1:{port}", max_retries=2, backoff_base_ms=10).get("/x")
    assert raised.value.kind == "connect"
    assert str(raised.value) == f"GET https://127.0.0.1:{port}/x: connection failed: Connection refused (3 attempts)"
    assert sleeps.delays == [0.01, 0.02]


@pytest.mark.parametrize("identities", [("127.0.0.1",), ("localhost",)])
def test_tls_failures_are_unavailable_and_never_retried(
    tls_ca: trustme.CA, make_client: MakeClient, sleeps: SleepRecorder, identities: tuple[str, ...]
) -> None:
    """A certificate from another CA, or for another name, fails verification once; nothing is retried."""
    issuer = trustme.CA() if identities == ("127.0.0.1",) else tls_ca
    with HttpsServer(issuer, identities=identities) as impostor:
        impostor.script("/x", Reply(200, body=b"must not be read"))
        with pytest.raises(Unavailable) as raised:
            make_client(origin=impostor.origin, max_retries=3).get("/x")
    assert raised.value.kind == "tls"
    assert raised.value.reason.startswith("TLS certificate verification failed: ")
    assert impostor.connections == 1
    assert impostor.requests == []
    assert sleeps.delays == []
