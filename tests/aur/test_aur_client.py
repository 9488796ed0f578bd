"""The read-only AUR client (docs/triage.md §5) against the fake AUR: URL forms, transport rules, outcomes."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import trustme

import harness
from harness.aur.client import (
    AurClient,
    Failed,
    Missing,
    Ok,
    build_aur_client,
    is_aur_target,
    plain_target,
    rpc_outcome,
    rpc_target,
)
from harness.errors import InternalError
from tests.aur.fake_aur import (
    B2,
    EMPTY_RPC,
    JSON,
    FakeAur,
    html_reply,
    install_demo_bin,
    json_reply,
    redirect,
    rpc_document,
)
from tests.aur.fake_aur import plain_target as fake_plain_target
from tests.aur.fake_aur import rpc_target as fake_rpc_target
from tests.net.https_server import HttpsServer, Reply
from tests.net.sleeps import SleepRecorder

MakeAur = Callable[..., AurClient]
RPC = fake_rpc_target("tiny-demo-bin")
PKGBUILD_B2 = fake_plain_target("tiny-demo-bin", B2, "PKGBUILD")
CAP = 1_048_576


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def make_aur(fake_aur: FakeAur, sleeps: SleepRecorder) -> Iterator[MakeAur]:
    """AUR clients for the fake AUR with docs/triage.md §16.1's values, small timeouts, no jitter and no real sleeping."""
    clients: list[AurClient] = []

    def build(**overrides: Any) -> AurClient:
        options: dict[str, Any] = {
            "base_url": fake_aur.base_url,
            "ca_file": fake_aur.ca_file,
            "min_interval_ms": 0,
            "backoff_base_ms": 10,
            "max_retries": 3,
            "retry_after_cap_s": 2,
            "connect_timeout_s": 2,
            "read_timeout_s": 2,
            "request_timeout_s": 5,
            "jitter_s": lambda delay: 0.0,
            "sleep": sleeps,
        }
        options.update(overrides)
        client = build_aur_client(**options)
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.close()


# ---------------------------------------------------------------------------------------------
# URL forms


def test_rpc_and_plain_targets_percent_encode_with_no_safe_characters() -> None:
    assert rpc_target("a+b@c") == "/rpc/v5/info?arg[]=a%2Bb%40c"
    assert plain_target("tiny-demo-bin", B2, ".SRCINFO") == f"/cgit/aur.git/plain/.SRCINFO?h=tiny-demo-bin&id={B2}"
    assert plain_target("a+b", "abcdef0", "x@y.install") == "/cgit/aur.git/plain/x%40y.install?h=a%2Bb&id=abcdef0"


@pytest.mark.parametrize(
    "call",
    [
        lambda: rpc_target("Tiny-Demo"),
        lambda: rpc_target("a..b"),
        lambda: plain_target("tiny", "xyz", "PKGBUILD"),
        lambda: plain_target("tiny", "abcdef0", "../etc/passwd"),
        lambda: plain_target("tiny", "abcdef0", ".hidden"),
        lambda: plain_target("../x", "abcdef0", "PKGBUILD"),
    ],
)
def test_invalid_parts_are_a_bug_not_a_request(call: Callable[[], str]) -> None:
    with pytest.raises(InternalError):
        call()


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://h/rpc/v5/info?arg[]=tiny-demo-bin", True),
        ("https://h/rpc/v5/info?arg%5B%5D=tiny-demo-bin", True),
        (f"https://h/cgit/aur.git/plain/PKGBUILD?h=tiny&id={B2}", True),
        ("https://h/cgit/aur.git/plain/x.install?id=abcdef0&h=tiny", True),
        ("https://h/rpc/v5/info?arg[]=tiny&arg[]=other", False),
        ("https://h/rpc/v5/info?arg[]=Tiny", False),
        ("https://h/rpc/v5/search?arg[]=tiny", False),
        ("https://h/cgit/aur.git/plain/PKGBUILD?h=tiny", False),
        ("https://h/cgit/aur.git/plain/PKGBUILD?h=tiny&id=zzzzzzz", False),
        ("https://h/cgit/aur.git/plain/PKGBUILD?h=tiny&id=abcdef0&x=1", False),
        ("https://h/cgit/aur.git/plain/a/b?h=tiny&id=abcdef0", False),
        ("https://h/cgit/aur.git/log/PKGBUILD?h=tiny&id=abcdef0", False),
        ("https://h/fetch/data.zip", False),
    ],
)
def test_redirect_targets_must_have_one_of_the_two_forms(url: str, allowed: bool) -> None:
    assert is_aur_target(url) is allowed


def test_fixture_decodes_the_query_so_encoded_brackets_are_equivalent(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    install_demo_bin(fake_aur)
    response = make_aur().transport.get("/rpc/v5/info?arg%5B%5D=tiny-demo-bin", accept="application/json")
    assert b'"Version": "1.0.2-1"' in response.body


# ---------------------------------------------------------------------------------------------
# Transport rules


def test_requests_are_plain_gets_with_the_fixed_headers(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    install_demo_bin(fake_aur)
    fake_aur.script(RPC, Reply(200, headers=[*JSON, ("Set-Cookie", "s=1; Path=/")], body=b"{}"))
    session = make_aur().session()
    session.rpc_info("tiny-demo-bin")
    session.plain("tiny-demo-bin", B2, "PKGBUILD")
    rpc, plain = fake_aur.server.requests
    for request in (rpc, plain):
        assert (request.method, request.version) == ("GET", "HTTP/1.1")
        assert request.headers["user-agent"] == f"triage-harness/{harness.__version__}"
        assert request.headers["cache-control"] == "no-cache"
        assert "cookie" not in request.headers and "authorization" not in request.headers
    assert rpc.headers["accept"] == "application/json"
    assert plain.headers["accept"] != "text/html"
    assert [r.target for r in fake_aur.server.requests] == [RPC, PKGBUILD_B2]


def test_one_session_fetches_each_url_once_and_sessions_share_nothing(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    install_demo_bin(fake_aur)
    client = make_aur()
    first = client.session()
    assert first.plain("tiny-demo-bin", B2, "PKGBUILD") == first.plain("tiny-demo-bin", B2, "PKGBUILD")
    assert first.rpc_info("tiny-demo-bin") == first.rpc_info("tiny-demo-bin")
    assert fake_aur.targets() == [PKGBUILD_B2, RPC]
    client.session().plain("tiny-demo-bin", B2, "PKGBUILD")
    assert fake_aur.targets() == [PKGBUILD_B2, RPC, PKGBUILD_B2]


def test_a_unique_commit_prefix_is_served_and_an_unknown_one_is_missing(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    install_demo_bin(fake_aur)
    session = make_aur().session()
    assert isinstance(session.plain("tiny-demo-bin", "b2b2b2b", "PKGBUILD"), Ok)
    assert session.plain("tiny-demo-bin", "c0ffee0", "PKGBUILD") == Missing()
    assert session.plain("tiny-demo-bin", B2, "nope.install") == Missing()


# ---------------------------------------------------------------------------------------------
# RPC outcomes (the fake-AUR table of docs/triage.md §5)


@pytest.mark.parametrize(
    ("document", "outcome", "reason"),
    [
        ([], "unavailable", "malformed RPC reply"),
        ({**rpc_document("tiny-demo-bin", "1"), "resultcount": 2}, "unavailable", "malformed RPC reply"),
        (
            {**EMPTY_RPC, "error": "Incorrect request type specified.", "type": "error"},
            "unavailable",
            "RPC error reply",
        ),
        (EMPTY_RPC, "absent", ""),
        (rpc_document("tiny-demo-bin", "1.0.2-1", base="tiny-demo"), "present", ""),
        (rpc_document("tiny-demo-bin-git", "1.0.2-1"), "mismatch", ""),
    ],
)
def test_rpc_table(fake_aur: FakeAur, make_aur: MakeAur, document: Any, outcome: str, reason: str) -> None:
    fake_aur.put_rpc("tiny-demo-bin", document)
    answer = make_aur().session().rpc_info("tiny-demo-bin")
    assert (answer.outcome, answer.reason) == (outcome, reason)
    assert answer.url == fake_aur.server.url(RPC)
    if outcome == "present":
        assert (answer.name, answer.pkgbase, answer.version) == ("tiny-demo-bin", "tiny-demo", "1.0.2-1")


def _record(**fields: Any) -> dict[str, Any]:
    return {"resultcount": 1, "results": [fields], "type": "multiinfo", "version": 5}


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (_record(Name="tiny", Version="1-1"), "present"),
        (_record(Name="tiny", Version="1-1", PackageBase=None), "present"),
        (_record(Name="tiny", Version="1-1", PackageBase="Tiny"), "mismatch"),
        (_record(Name="tiny", Version="1-1", PackageBase=""), "mismatch"),
        (_record(Name="TINY", Version="1-1"), "mismatch"),
        ({**EMPTY_RPC, "resultcount": 2, "results": [{"Name": "tiny", "Version": "1"}] * 2}, "mismatch"),
        (_record(Name="tiny", Version="1-1", PackageBase=5), "unavailable"),
        (_record(Name="", Version="1-1"), "unavailable"),
        (_record(Name="tiny"), "unavailable"),
        (_record(Name="tiny", Version=1), "unavailable"),
        ({"resultcount": 1, "results": ["tiny"], "type": "multiinfo", "version": 5}, "unavailable"),
        ({**EMPTY_RPC, "version": 4}, "unavailable"),
        ({**EMPTY_RPC, "version": True}, "unavailable"),
        ({**EMPTY_RPC, "version": "5"}, "unavailable"),
        ({**EMPTY_RPC, "type": "search"}, "unavailable"),
        ({**EMPTY_RPC, "resultcount": True}, "unavailable"),
        ({**EMPTY_RPC, "results": {}}, "unavailable"),
        ({"resultcount": 0, "results": [], "type": "multiinfo"}, "unavailable"),
    ],
)
def test_rpc_reply_rules(reply: Any, outcome: str) -> None:
    answer = rpc_outcome(reply, "tiny", "u")
    assert answer.outcome == outcome
    if outcome == "unavailable":
        assert answer.reason == "malformed RPC reply"


@pytest.mark.parametrize(
    "body",
    [
        b'{"version": 5, "version": 5}',
        b"{not json",
        b'{"version": NaN}',
        "\u00e9".encode("latin-1"),
        b"[" * 40 + b"]" * 40,
        b'{"resultcount":0,"results":[],"type":"multiinfo","version":5,"x":' + b"[" * 16 + b"]" * 16 + b"}",
    ],
)
def test_rpc_bodies_refused_by_the_strict_reader(fake_aur: FakeAur, make_aur: MakeAur, body: bytes) -> None:
    fake_aur.script(RPC, Reply(200, headers=JSON, body=body))
    answer = make_aur().session().rpc_info("tiny-demo-bin")
    assert (answer.outcome, answer.reason) == ("unavailable", "malformed RPC reply")


def test_rpc_content_type_parameters_are_ignored_but_json_is_required(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    body = b'{"resultcount":0,"results":[],"type":"multiinfo","version":5}'
    fake_aur.script(RPC, Reply(200, headers=[("Content-Type", "Application/JSON; charset=utf-8")], body=body))
    assert make_aur().session().rpc_info("tiny-demo-bin").outcome == "absent"
    fake_aur.script(RPC, Reply(200, headers=[("Content-Type", "text/plain")], body=body))
    answer = make_aur().session().rpc_info("tiny-demo-bin")
    assert (answer.outcome, answer.reason) == ("unavailable", "malformed RPC reply")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<html>Protected by Anubis</html>", "anubis challenge"),
        ("<html>Just a moment...</html>", "anubis challenge"),
        ("<html>a CHALLENGE page</html>", "anubis challenge"),
        ("<html>ordinary page</html>", "unexpected HTML response"),
        ("<html>" + "x" * 2000 + "anubis</html>", "unexpected HTML response"),
    ],
)
def test_html_is_a_challenge_or_unexpected(fake_aur: FakeAur, make_aur: MakeAur, text: str, reason: str) -> None:
    fake_aur.script(RPC, html_reply(text))
    fake_aur.script(PKGBUILD_B2, html_reply(text))
    session = make_aur().session()
    assert session.rpc_info("tiny-demo-bin").reason == reason
    assert session.plain("tiny-demo-bin", B2, "PKGBUILD") == Failed(reason)


def test_429_with_retry_after_then_200_is_ok_after_two_requests(
    fake_aur: FakeAur, make_aur: MakeAur, sleeps: SleepRecorder
) -> None:
    install_demo_bin(fake_aur)
    ok = json_reply(rpc_document("tiny-demo-bin", "1.0.2-1"))
    fake_aur.script(RPC, Reply(429, headers=[("Retry-After", "1")]), ok)
    assert make_aur().session().rpc_info("tiny-demo-bin").outcome == "present"
    assert fake_aur.targets() == [RPC, RPC]
    assert sleeps.delays == [1.0]


def test_retry_after_over_the_cap_stops_at_once(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    fake_aur.script(RPC, Reply(429, headers=[("Retry-After", "3600")]))
    answer = make_aur().session().rpc_info("tiny-demo-bin")
    assert (answer.outcome, answer.reason) == ("unavailable", "Retry-After 3600 s exceeds the 2 s cap")
    assert fake_aur.targets() == [RPC]


def test_503_four_times_is_unavailable_after_four_requests(
    fake_aur: FakeAur, make_aur: MakeAur, sleeps: SleepRecorder
) -> None:
    fake_aur.script(RPC, Reply(503))
    answer = make_aur().session().rpc_info("tiny-demo-bin")
    assert (answer.outcome, answer.reason) == ("unavailable", "HTTP 503")
    assert len(fake_aur.targets()) == 4
    assert sleeps.delays == [0.01, 0.02, 0.04]


@pytest.mark.parametrize("status", [403, 500, 301])
def test_other_statuses_read_as_http_code(fake_aur: FakeAur, make_aur: MakeAur, status: int) -> None:
    fake_aur.script(PKGBUILD_B2, Reply(status))
    assert make_aur(max_retries=0).session().plain("tiny-demo-bin", B2, "PKGBUILD") == Failed(f"HTTP {status}")


def test_plain_returns_raw_bytes_of_any_non_html_type(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    body = b"\x00\xff raw\r\n"
    fake_aur.script(PKGBUILD_B2, Reply(200, headers=[("Content-Type", "application/octet-stream")], body=body))
    assert make_aur().session().plain("tiny-demo-bin", B2, "PKGBUILD") == Ok(body)


@pytest.mark.parametrize(("size", "ok"), [(CAP, True), (CAP + 1, False)])
def test_body_cap(fake_aur: FakeAur, make_aur: MakeAur, size: int, ok: bool) -> None:
    fake_aur.script(PKGBUILD_B2, Reply(200, body=b"x" * size, chunked=True))
    fetched = make_aur().session().plain("tiny-demo-bin", B2, "PKGBUILD")
    assert fetched == (Ok(b"x" * size) if ok else Failed("response larger than 1,048,576 bytes"))


def test_compressed_bodies_are_refused(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    fake_aur.script(PKGBUILD_B2, Reply(200, headers=[("Content-Encoding", "gzip")], body=b"\x1f\x8b"))
    assert make_aur().session().plain("tiny-demo-bin", B2, "PKGBUILD") == Failed("protocol error")


# ---------------------------------------------------------------------------------------------
# Redirects


@pytest.fixture
def other_host(aur_ca: trustme.CA) -> Iterator[HttpsServer]:
    """A second loopback server (another origin) that must never be contacted."""
    with HttpsServer(aur_ca) as server:
        yield server


def test_redirects_off_the_allowlist_are_refused_and_never_contacted(
    fake_aur: FakeAur, make_aur: MakeAur, other_host: HttpsServer
) -> None:
    refused = "redirect to a non-allowlisted URL refused"
    cases = [
        "https://other.invalid/x",
        other_host.url(RPC),
        fake_aur.base_url.replace("https://", "http://") + RPC,
        "/fetch/data.zip",
        "/rpc/v5/info?arg[]=tiny-demo-bin&extra=1",
    ]
    for location in cases:
        fake_aur.script(RPC, redirect(location))
        answer = make_aur().session().rpc_info("tiny-demo-bin")
        assert (answer.outcome, answer.reason) == ("unavailable", refused), location
    assert other_host.connections == 0
    assert set(fake_aur.targets()) == {RPC}


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirects_to_the_same_origin_and_form_are_followed(fake_aur: FakeAur, make_aur: MakeAur, status: int) -> None:
    install_demo_bin(fake_aur)
    short = fake_plain_target("tiny-demo-bin", "b2b2b2b", "PKGBUILD")
    fake_aur.script(short, redirect(fake_aur.server.url(PKGBUILD_B2), status))
    fetched = make_aur().session().plain("tiny-demo-bin", "b2b2b2b", "PKGBUILD")
    assert isinstance(fetched, Ok) and fetched.body.startswith(b"pkgname=tiny-demo-bin")
    assert fake_aur.targets() == [short, PKGBUILD_B2]


def test_at_most_three_hops(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    commits = ("aaaaaaa", "bbbbbbb", "ccccccc", "ddddddd")
    hops = [fake_plain_target("tiny-demo-bin", commit, "PKGBUILD") for commit in commits]
    for here, there in zip(hops, hops[1:]):
        fake_aur.script(here, redirect(there))
    fake_aur.script(hops[-1], redirect(PKGBUILD_B2))
    assert make_aur().session().plain("tiny-demo-bin", "aaaaaaa", "PKGBUILD") == Failed("more than 3 redirects refused")
    assert fake_aur.targets() == hops


# ---------------------------------------------------------------------------------------------
# Transport failures


def test_a_read_stall_times_out_and_is_retried(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    fake_aur.script(RPC, Reply(200, headers=JSON, body=b"{}", stall_s=5))
    answer = make_aur(read_timeout_s=0.2, max_retries=1).session().rpc_info("tiny-demo-bin")
    assert (answer.outcome, answer.reason) == ("unavailable", "read timed out")
    assert len(fake_aur.targets()) == 2


def test_the_shared_budget_ends_the_call(fake_aur: FakeAur, make_aur: MakeAur) -> None:
    fake_aur.script(RPC, Reply(200, headers=JSON, body=b"{}", stall_s=5))
    client = make_aur(read_timeout_s=2, budget_s=0.3)
    answer = client.session().rpc_info("tiny-demo-bin")
    assert (answer.outcome, answer.reason) == ("unavailable", "AUR time budget exhausted")


def test_a_refused_connection_fails_after_retries(make_aur: MakeAur, sleeps: SleepRecorder) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    fetched = make_aur(base_url=f"https://127.0.0.1:{port}").session().plain("tiny", "abcdef0", "PKGBUILD")
    assert fetched == Failed("connection failed")
    assert len(sleeps.delays) == 3


def test_an_untrusted_certificate_is_never_retried(make_aur: MakeAur) -> None:
    with HttpsServer(trustme.CA()) as stranger:
        fetched = make_aur(base_url=stranger.origin).session().plain("tiny", "abcdef0", "PKGBUILD")
        assert fetched == Failed("TLS certificate verification failed")
        assert stranger.connections == 1
        assert stranger.requests == []
