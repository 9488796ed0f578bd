"""Bounded time: read and connect timeouts, the per-request deadline and a caller's shared deadline.

Servers stall far longer (30 s) than the small injected limits, and each test has a hard pytest timeout,
so a client that waited for the stall would fail rather than pass slowly.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator

import pytest

from harness.net import GuardedClient, Unavailable
from tests.net.https_server import HttpsServer, Reply

MakeClient = Callable[..., GuardedClient]
STALL_S = 30.0

pytestmark = pytest.mark.timeout(15)


def test_a_stall_past_the_read_timeout_is_unavailable(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/slow", Reply(200, stall_s=STALL_S))
    with pytest.raises(Unavailable) as raised:
        make_client(read_timeout_s=0.3, deadline_s=5).get("/slow?token=secret")
    assert raised.value.kind == "read"
    assert str(raised.value) == f"GET {https_server.url('/slow')}: read timed out after 0.3 s"


def test_a_stall_inside_the_body_is_a_read_timeout(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/slow", Reply(200, body=b"abc", body_stall_s=STALL_S))
    with pytest.raises(Unavailable) as raised:
        make_client(read_timeout_s=0.3, deadline_s=5).get("/slow")
    assert raised.value.reason == "read timed out after 0.3 s"


def test_read_timeouts_are_retried(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/slow", Reply(200, stall_s=STALL_S), Reply(200, body=b"ok"))
    assert make_client(read_timeout_s=0.3, max_retries=1).get("/slow").body == b"ok"
    assert len(https_server.requests) == 2


def test_a_trickling_body_past_the_deadline_is_unavailable(https_server: HttpsServer, make_client: MakeClient) -> None:
    """Every chunk arrives well within the read timeout; only the total deadline can stop it."""
    https_server.script("/trickle", Reply(200, body=b"x" * 100, chunk_size=1, chunk_delay_s=0.1))
    with pytest.raises(Unavailable) as raised:
        make_client(read_timeout_s=2, deadline_s=0.5, max_body_bytes=1000).get("/trickle")
    assert raised.value.kind == "deadline"
    assert raised.value.reason == "deadline of 0.5 s passed"


def test_the_deadline_shortens_the_read_timeout(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/slow", Reply(200, stall_s=STALL_S))
    with pytest.raises(Unavailable) as raised:
        make_client(read_timeout_s=10, deadline_s=0.4, max_retries=3).get("/slow")
    assert (raised.value.kind, raised.value.reason) == ("deadline", "deadline of 0.4 s passed")
    assert len(https_server.requests) == 1


def test_a_shared_deadline_earlier_than_the_own_one_governs(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/slow", Reply(200, stall_s=STALL_S))
    with pytest.raises(Unavailable) as raised:
        make_client(read_timeout_s=10, deadline_s=10).get("/slow", deadline_at=time.monotonic() + 0.3)
    assert (raised.value.kind, raised.value.reason) == ("deadline", "shared deadline passed")


def test_a_shared_deadline_later_than_the_own_one_changes_nothing(
    https_server: HttpsServer, make_client: MakeClient
) -> None:
    https_server.script("/slow", Reply(200, stall_s=STALL_S))
    with pytest.raises(Unavailable) as raised:
        make_client(read_timeout_s=10, deadline_s=0.3).get("/slow", deadline_at=time.monotonic() + 60)
    assert raised.value.reason == "deadline of 0.3 s passed"


def test_a_passed_shared_deadline_sends_nothing(https_server: HttpsServer, make_client: MakeClient) -> None:
    with pytest.raises(Unavailable) as raised:
        make_client().get("/x", deadline_at=time.monotonic() - 1)
    assert (raised.value.kind, raised.value.reason) == ("deadline", "shared deadline passed")
    assert https_server.connections == 0


@pytest.fixture
def silent_listener() -> Iterator[int]:
    """A TCP port that accepts connections but never speaks TLS, so the handshake hangs."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield int(sock.getsockname()[1])


def test_a_hanging_handshake_is_a_connect_timeout_and_retried(make_client: MakeClient, silent_listener: int) -> None:
    with pytest.raises(Unavailable) as raised:
        make_client(origin=f"https://127.0.0.1:{silent_listener}", connect_timeout_s=0.2, max_retries=1).get("/x")
    assert raised.value.kind == "connect"
    assert raised.value.reason == "connect timed out after 0.2 s (2 attempts)"
