"""`harness pull github-audit` and `harness pull okta` through the real CLI against loopback HTTPS fakes."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from harness.adapters import ADAPTERS
from tests.net.https_server import HttpsServer, Reply
from tests.pull.pull_support import (
    GITHUB_TOKEN,
    OKTA_TOKEN,
    ORG,
    FakeApi,
    github_pages,
    ledger_bytes,
    okta_pages,
    pull_cli,
    stored_ids,
)

GITHUB_PATH = f"/orgs/{ORG}/audit-log"
OKTA_PATH = "/api/v1/logs"


def github_fake(server: HttpsServer, **options: object) -> FakeApi:
    return FakeApi(server, GITHUB_PATH, "after", github_pages(), **options)  # type: ignore[arg-type]


def okta_fake(server: HttpsServer, **options: object) -> FakeApi:
    return FakeApi(server, OKTA_PATH, "after", okta_pages(), okta_tail=True, **options)  # type: ignore[arg-type]


def pull_github(ws: Path, *extra: str) -> object:
    return pull_cli(ws, "github-audit", "--org", ORG, *extra)


def pull_okta(ws: Path, server: HttpsServer, *extra: str) -> object:
    return pull_cli(ws, "okta", "--domain", f"127.0.0.1:{server.port}", *extra)


def expected_ids(fake: FakeApi, format_name: str) -> list[str]:
    return [ADAPTERS[format_name].to_event(rec)["id"] for page in fake.pages for rec in page]


CASES = [
    ("github-audit", github_fake, lambda ws, server, *extra: pull_github(ws, *extra), GITHUB_TOKEN),
    ("okta", okta_fake, pull_okta, OKTA_TOKEN),
]


@pytest.mark.parametrize(("name", "make", "run", "token"), CASES, ids=[case[0] for case in CASES])
def test_pull_stores_every_page_and_sends_the_token(ws: Path, server: HttpsServer, name, make, run, token) -> None:
    fake = make(server)
    result = run(ws, server)
    assert result.exit_code == 0, result.stdout + result.stderr
    summary = result.json()
    assert summary["events"] == 15 and summary["added"] == 15 and summary["skipped_duplicates"] == 0
    assert stored_ids(ws) == expected_ids(fake, name)
    auth = {r.headers["authorization"] for r in server.requests}
    assert auth == {f"Bearer {token}" if name == "github-audit" else f"SSWS {token}"}
    assert "page 5: 3 events (3 new)" in result.stderr and "15 events in" in result.stderr
    cursor = (
        ws / "pulls" / (f"github-audit-{ORG}.json" if name == "github-audit" else f"okta-127.0.0.1_{server.port}.json")
    )
    assert summary["cursor"] == f"pulls/{cursor.name}"
    assert stat.S_IMODE(os.stat(cursor).st_mode) == 0o600
    saved = json.loads(cursor.read_text())
    assert saved["since"] == ADAPTERS[name].to_event(fake.pages[-1][-1])["timestamp"]
    for text in (result.stdout, result.stderr):
        assert token not in text
    assert token.encode() not in ledger_bytes(ws)


@pytest.mark.parametrize(("name", "make", "run", "token"), CASES, ids=[case[0] for case in CASES])
def test_connection_dropped_on_page_3_resumes_with_nothing_lost_or_doubled(
    ws: Path, server: HttpsServer, name, make, run, token
) -> None:
    fake = make(server, faults={3: [Reply(drop=True)]})
    first = run(ws, server)
    assert first.exit_code == 3, first.stdout
    assert first.json()["error"]["code"] == "upstream_unavailable"
    assert len(stored_ids(ws)) == 6  # pages 1 and 2 are committed
    assert fake.pages_requested() == ["p1", "p2", "p3"]
    second = run(ws, server)
    assert second.exit_code == 0, second.stdout + second.stderr
    assert second.json()["resumed"] is True
    # The second run starts at page 3: the committed pages are not fetched again.
    assert fake.pages_requested()[3] == "p3"
    assert "p1" not in fake.pages_requested()[3:]
    ids = stored_ids(ws)
    assert ids == expected_ids(fake, name) and len(set(ids)) == 15
    for text in (first.stdout, first.stderr, second.stdout, second.stderr):
        assert token not in text
    assert token.encode() not in ledger_bytes(ws)


def test_a_second_pull_is_incremental_and_duplicates_nothing(ws: Path, server: HttpsServer) -> None:
    fake = github_fake(server)
    assert pull_github(ws).exit_code == 0
    again = pull_github(ws)
    assert again.exit_code == 0, again.stdout
    newest = ADAPTERS["github-audit"].to_event(fake.pages[-1][-1])["timestamp"]
    restart = server.requests[len(fake.pages)]
    assert restart.query["phrase"] == [f"created:>={newest}"] and restart.query["order"] == ["asc"]
    assert again.json()["skipped_duplicates"] == 15 and again.json()["added"] == 0
    assert stored_ids(ws) == expected_ids(fake, "github-audit")


def test_okta_polls_from_the_link_of_its_empty_last_page(ws: Path, server: HttpsServer) -> None:
    fake = okta_fake(server)
    assert pull_okta(ws, server).exit_code == 0
    assert fake.pages_requested() == ["p1", "p2", "p3", "p4", "p5", "p6"]
    again = pull_okta(ws, server)
    assert again.exit_code == 0 and again.json()["events"] == 0
    assert fake.pages_requested()[6:] == ["p6"]


@pytest.mark.parametrize(
    ("name", "make", "run", "headers"),
    [
        ("github-audit", github_fake, CASES[0][2], [("Retry-After", "1")]),
        ("okta", okta_fake, CASES[1][2], [("Retry-After", "1")]),
        ("github-audit", github_fake, CASES[0][2], "x-ratelimit-reset"),
        ("okta", okta_fake, CASES[1][2], "x-rate-limit-reset"),
    ],
    ids=["github-retry-after", "okta-retry-after", "github-reset", "okta-reset"],
)
def test_429_waits_as_told_then_continues(ws: Path, server: HttpsServer, name, make, run, headers) -> None:
    if isinstance(headers, str):
        headers = [(headers, str(int(time.time()) + 2)), (headers.replace("reset", "remaining"), "0")]
    fake = make(server, faults={2: [Reply(429, headers=headers, body=b"slow down")]})
    started = time.monotonic()
    result = run(ws, server)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert time.monotonic() - started >= 0.9
    assert "rate limited (HTTP 429), waiting" in result.stderr
    assert fake.pages_requested()[:3] == ["p1", "p2", "p2"]
    assert stored_ids(ws) == expected_ids(fake, name)


def test_github_403_with_exhausted_rate_limit_is_waited_out(ws: Path, server: HttpsServer) -> None:
    reset = [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", str(int(time.time()) + 1))]
    fake = github_fake(server, faults={2: [Reply(403, headers=reset)]})
    result = pull_github(ws)
    assert result.exit_code == 0, result.stdout
    assert "rate limited (HTTP 403)" in result.stderr
    assert stored_ids(ws) == expected_ids(fake, "github-audit")


def test_a_wait_over_the_cap_stops_with_a_clear_error_and_keeps_the_cursor(ws: Path, server: HttpsServer) -> None:
    github_fake(server, faults={2: [Reply(429, headers=[("Retry-After", "3600")])]})
    result = pull_github(ws)
    assert result.exit_code == 3
    message = result.json()["error"]["message"]
    assert "asks to wait 3600 s, more than [pull] max_wait_s = 5" in message
    assert len(stored_ids(ws)) == 3
    assert "after=p2" in json.loads((ws / "pulls" / f"github-audit-{ORG}.json").read_text())["next"]


def test_a_429_without_retry_after_or_reset_is_a_clear_error(ws: Path, server: HttpsServer) -> None:
    okta_fake(server, faults={1: [Reply(429)]})
    result = pull_okta(ws, server)
    assert result.exit_code == 3
    assert "with neither Retry-After nor x-rate-limit-reset" in result.json()["error"]["message"]


@pytest.mark.parametrize(
    ("name", "make", "run"),
    [("github-audit", github_fake, CASES[0][2]), ("okta", okta_fake, CASES[1][2])],
    ids=["github-audit", "okta"],
)
@pytest.mark.parametrize(
    ("link", "reason"),
    [
        (lambda server, page: f"https://evil.example{server.path}?after=p{page}", "host is not 127.0.0.1"),
        (lambda server, page: f"https://127.0.0.1:{server.server.port + 1}{server.path}?after=p{page}", "port is not"),
        (lambda server, page: f"http://127.0.0.1:{server.server.port}{server.path}?after=p{page}", "not https"),
        (lambda server, page: f"{server.server.origin}/orgs/other/audit-log?after=p{page}", "path is not"),
    ],
    ids=["host", "port", "scheme", "path"],
)
def test_a_next_link_off_the_origin_or_endpoint_is_refused_before_its_page_is_stored(
    ws: Path, server: HttpsServer, name, make, run, link, reason
) -> None:
    fake = make(server)
    fake.next_link = lambda page: link(fake, page) if page == 3 else f"{server.origin}{fake.path}?after=p{page}"
    result = run(ws, server)
    assert result.exit_code == 5, result.stdout
    error = result.json()["error"]
    assert error["code"] == "refused" and "next link refused" in error["message"] and reason in error["message"]
    # Page 1 is stored; page 2, which carried the bad link, is not, and nothing was fetched from the link.
    assert len(stored_ids(ws)) == 3
    assert fake.pages_requested() == ["p1", "p2"]


def test_since_starts_the_first_pull_and_is_refused_once_a_cursor_exists(ws: Path, server: HttpsServer) -> None:
    github_fake(server)
    first = pull_github(ws, "--since", "2026-04-10T09:00:00Z")
    assert first.exit_code == 0
    assert server.requests[0].query["phrase"] == ["created:>=2026-04-10T09:00:00Z"]
    again = pull_github(ws, "--since", "2026-04-10T09:00:00Z")
    assert again.exit_code == 2 and "--since: a cursor exists" in again.json()["error"]["message"]
    bad = pull_cli(ws, "okta", "--domain", "example.okta.com", "--since", "yesterday")
    assert bad.exit_code == 2 and bad.json()["error"]["message"].startswith("--since:")


def test_bad_names_and_a_missing_okta_token_are_refused_before_any_request(
    ws: Path, server: HttpsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad_org = pull_cli(ws, "github-audit", "--org", "../etc")
    assert bad_org.exit_code == 2 and bad_org.json()["error"]["message"].startswith("--org:")
    bad_domain = pull_cli(ws, "okta", "--domain", "evil.example/path")
    assert bad_domain.exit_code == 2 and bad_domain.json()["error"]["message"].startswith("--domain:")
    monkeypatch.delenv("OKTA_API_TOKEN")
    missing = pull_okta(ws, server)
    assert missing.exit_code == 2 and "OKTA_API_TOKEN" in missing.json()["error"]["message"]
    assert server.connections == 0


def test_an_http_error_names_the_status_and_the_token_to_check(ws: Path, server: HttpsServer) -> None:
    server.script(GITHUB_PATH, Reply(401, body=json.dumps({"message": "Bad credentials"}).encode()))
    result = pull_github(ws)
    assert result.exit_code == 3
    assert "HTTP 401 (check GITHUB_TOKEN)" in result.json()["error"]["message"]
    assert not (ws / "pulls" / f"github-audit-{ORG}.json").exists()


def test_a_page_with_an_unmappable_record_stores_nothing_of_it_and_keeps_the_cursor(
    ws: Path, server: HttpsServer
) -> None:
    fake = okta_fake(server)
    broken = dict(fake.pages[1][1])
    del broken["published"]
    fake.pages[1][1] = broken
    result = pull_okta(ws, server)
    assert result.exit_code == 2, result.stdout
    message = result.json()["error"]["message"]
    assert message.startswith("okta page 2[1]: ") and "published" in message
    assert len(stored_ids(ws)) == 3
    cursor = json.loads((ws / "pulls" / f"okta-127.0.0.1_{server.port}.json").read_text())
    assert cursor["next"].endswith("after=p2")


def test_a_damaged_cursor_is_refused(ws: Path, server: HttpsServer) -> None:
    github_fake(server)
    (ws / "pulls").mkdir()
    (ws / "pulls" / f"github-audit-{ORG}.json").write_text('{"next": 3}')
    result = pull_github(ws)
    assert result.exit_code == 2 and "not a pull cursor" in result.json()["error"]["message"]
    assert server.connections == 0


def test_a_cursor_pointing_off_the_origin_is_refused_without_contacting_it(ws: Path, server: HttpsServer) -> None:
    github_fake(server)
    (ws / "pulls").mkdir()
    cursor = {"next": f"https://127.0.0.1:{server.port}/orgs/other/audit-log?after=p2", "since": "", "version": 1}
    (ws / "pulls" / f"github-audit-{ORG}.json").write_text(json.dumps(cursor))
    result = pull_github(ws)
    assert result.exit_code == 5 and "next link refused: path is not" in result.json()["error"]["message"]
    assert server.connections == 0
