"""min_interval_ms spaces request starts per origin across instances, threads and retries.

Timestamps are taken by the server when each request arrives. Measured requests travel on already-open
keep-alive connections (a retried 503 drops its connection, so a retry adds one loopback handshake), so
arrival lags the client's start by well under the slack.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from harness.net import GuardedClient, Unavailable
from harness.net.pacing import reserve_start
from tests.net.https_server import HttpsServer, Reply

MakeClient = Callable[..., GuardedClient]
INTERVAL_S = 0.25
SLACK_S = 0.05


def _gaps(server: HttpsServer, skip: int = 0) -> list[float]:
    """Gaps between arrival times, leaving out the first `skip` (warm-up) requests."""
    times = sorted(request.at for request in server.requests[skip:])
    return [later - earlier for earlier, later in zip(times, times[1:])]


def test_sequential_requests_are_spaced(https_server: HttpsServer, make_client: MakeClient) -> None:
    client = make_client(min_interval_ms=int(INTERVAL_S * 1000), sleep=time.sleep)
    client.get("/warm")
    for _ in range(3):
        client.get("/x")
    gaps = _gaps(https_server, skip=1)
    assert len(gaps) == 2
    assert all(gap >= INTERVAL_S - SLACK_S for gap in gaps), gaps


def test_spacing_is_shared_by_instances_and_threads(https_server: HttpsServer, make_client: MakeClient) -> None:
    clients = [make_client(min_interval_ms=int(INTERVAL_S * 1000), sleep=time.sleep) for _ in range(2)]
    for client in clients:
        client.get("/warm")
    threads = [threading.Thread(target=client.get, args=("/x",)) for client in clients for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    gaps = _gaps(https_server, skip=2)
    assert len(gaps) == 3
    assert all(gap >= INTERVAL_S - SLACK_S for gap in gaps), gaps


def test_retries_are_spaced_too(https_server: HttpsServer, make_client: MakeClient) -> None:
    https_server.script("/x", Reply(503), Reply(503), Reply(200))
    client = make_client(min_interval_ms=int(INTERVAL_S * 1000), max_retries=2, backoff_base_ms=0, sleep=time.sleep)
    client.get("/warm")
    assert client.get("/x").status == 200
    gaps = _gaps(https_server)
    assert all(gap >= INTERVAL_S - SLACK_S for gap in gaps), gaps


def test_a_start_slot_past_the_deadline_is_unavailable_without_sending(
    https_server: HttpsServer, make_client: MakeClient
) -> None:
    client = make_client(min_interval_ms=5000, sleep=time.sleep, deadline_s=1)
    client.get("/first")
    with pytest.raises(Unavailable) as raised:
        client.get("/second")
    assert (raised.value.kind, raised.value.reason) == ("deadline", "deadline of 1 s passed")
    assert https_server.targets() == ["/first"]


def test_reservations_are_per_origin_and_per_clock() -> None:
    now = [100.0]

    def clock() -> float:
        return now[0]

    assert reserve_start("https://a.example", 1.0, clock) == 100.0
    assert reserve_start("https://a.example", 1.0, clock) == 101.0
    assert reserve_start("https://b.example", 1.0, clock) == 100.0
    now[0] = 200.0
    assert reserve_start("https://a.example", 1.0, clock) == 200.0
    assert reserve_start("https://a.example", 1.0, time.monotonic) <= time.monotonic()
