"""github_actor (docs/investigate.md §9.6) through both front doors against a loopback GitHub with trustme TLS."""

from __future__ import annotations

import functools
import json
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
import trustme
from doors import Answer, Door, as_flags, as_input, call_cli, call_mcp
from listing import listed_text
from mcp import Client

from harness import errors
from harness.config import ConfigError, Overrides, load_settings
from harness.context import build_context
from harness.investigate import github_actor, services
from harness.mcp_server import build_server
from harness.net import GuardedClient, github_client, instances
from harness.surface import OPERATIONS
from tests.investigate.github_support import FakeGitHub, json_reply
from tests.net.https_server import Reply

NOTE_404 = (
    "GitHub returned 404 for this login: no account exists under this exact name now. It may never have existed, "
    "been renamed, or been deleted; deleted accounts are not always reattributed to the ghost account."
)
NOTE_GHOST = (
    '"ghost" is GitHub\'s reserved placeholder account: activity of deleted accounts is reattributed to it. The '
    "profile is real; activity shown under ghost belongs to accounts that no longer exist."
)
NOTE_HEURISTIC = (
    "the profile name or bio suggests a deleted or suspended account; this is a text heuristic, not a deletion "
    "confirmed by the API."
)
LOGIN_MESSAGE = "login: must be 1-39 letters, digits or hyphens, optionally followed by [bot]"
EVENTS_QUERY = "/events/public?per_page=30"


def soft_note(returned: str) -> str:
    return (
        f"profile unavailable: GitHub returned {returned}. This is a transient or upstream condition, not evidence "
        'that the login does not exist; found=false means "could not confirm".'
    )


def events_note(reason: str) -> str:
    return f"recent activity unavailable: {reason}; the profile data above is still authoritative."


def profile(login: str, **overrides: Any) -> dict[str, Any]:
    body = {
        "login": login,
        "id": 583231,
        "type": "User",
        "name": "The Octocat",
        "bio": None,
        "html_url": f"https://github.com/{login}",
        "created_at": "2011-01-25T18:44:36Z",
        "public_repos": 8,
        "followers": 4000,
    }
    body.update(overrides)
    return body


def events(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": str(1000 + i),
            "type": "PushEvent" if i % 2 else "WatchEvent",
            "repo": {"id": i, "name": f"octocat/repo-{i}"},
            "created_at": f"2026-04-{i + 1:02d}T12:00:00Z",
        }
        for i in range(count)
    ]


def actor(door: Door, workspace: Path, arguments: dict[str, Any]) -> Answer:
    """github_actor through `door`: a lone login as the `--login` flag on the CLI, anything else as --input."""
    return door(workspace, "github_actor", arguments, encode=as_flags if set(arguments) == {"login"} else as_input)


def lookup(door: Door, fake: FakeGitHub, login: str) -> Answer:
    return actor(door, fake.workspace, {"login": login})


def expect_error(result: Answer, code: str, message: str) -> None:
    assert result.is_error
    assert result.document == {"error": {"code": code, "message": message, "operation": "github_actor"}}
    if result.exit_code is not None:
        assert result.exit_code == errors.EXIT_CODES[code]


def test_octocat_found_with_the_first_ten_of_twelve_events(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/users/octocat/events/public", json_reply(events(12)))
    result = lookup(door, fake_github, "octocat")
    assert result.exit_code in (0, None) and not result.is_error
    assert result.document == {
        "login": "octocat",
        "found": True,
        "ghost": False,
        "looks_deleted": False,
        "account_type": "User",
        "name": "The Octocat",
        "bio": "",
        "profile_url": "https://github.com/octocat",
        "created_at": "2011-01-25T18:44:36Z",
        "public_repos": 8,
        "followers": 4000,
        "recent_events": [
            {"type": e["type"], "repo": e["repo"]["name"], "timestamp": e["created_at"]} for e in events(10)
        ],
        "notes": "",
    }
    assert fake_github.targets() == ["/users/octocat", "/users/octocat" + EVENTS_QUERY]


def test_output_is_compact_json_with_sorted_keys(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/users/octocat/events/public", json_reply([]))
    result = lookup(door, fake_github, "octocat")
    assert result.text == json.dumps(result.document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_request_headers_and_no_token_when_unset(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/users/octocat/events/public", json_reply([]))
    lookup(door, fake_github, "octocat")
    for request in fake_github.server.requests:
        assert request.method == "GET"
        assert request.headers["accept"] == "application/vnd.github+json"
        assert request.headers["x-github-api-version"] == "2022-11-28"
        assert request.headers["user-agent"].startswith("triage-harness/")
        assert "authorization" not in request.headers


def test_blank_token_sends_no_authorization(
    door: Door, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "   ")
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    lookup(door, fake_github, "octocat")
    assert all("authorization" not in r.headers for r in fake_github.server.requests)


def test_token_is_sent_but_never_shown(
    door: Door, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    token = "ghp_" + "Zx9" * 12
    monkeypatch.setenv("GITHUB_TOKEN", token)
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/users/octocat/events/public", json_reply(events(2)))
    fake_github.script("/users/nobody", json_reply({"message": "Bad credentials"}, status=401))
    fake_github.script("/users/hung", Reply(200, body=b"{", content_length=10, close=True))
    shown = [lookup(door, fake_github, login) for login in ("octocat", "nobody", "hung")]
    assert [r.is_error for r in shown] == [False, True, True]
    assert [r.headers.get("authorization") for r in fake_github.server.requests] == [f"Bearer {token}"] * 4
    captured = capsys.readouterr()
    for result in shown:
        assert token not in result.text and token not in result.stderr
    assert token not in captured.out + captured.err


def test_ghost_is_found_and_looks_deleted(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/ghost", json_reply(profile("ghost", name=None, html_url="https://github.com/ghost")))
    fake_github.script("/users/ghost/events/public", json_reply([]))
    document = lookup(door, fake_github, "ghost").document
    assert (document["found"], document["ghost"], document["looks_deleted"]) == (True, True, True)
    assert document["notes"] == NOTE_GHOST


def test_ghost_ignores_case(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/GHost", json_reply(profile("ghost")))
    fake_github.script("/users/GHost/events/public", json_reply([]))
    document = lookup(door, fake_github, "GHost").document
    assert document["login"] == "GHost"
    assert document["ghost"] and document["looks_deleted"] and document["notes"] == NOTE_GHOST


@pytest.mark.parametrize(
    ("name", "bio"),
    [
        (None, "This account has been deleted"),
        ("Deleted User", None),
        ("x", "the DELETED ACCOUNT of someone"),
        ("Account Suspended", ""),
        (None, "this account has been suspended by staff"),
    ],
)
def test_deleted_text_heuristic(door: Door, fake_github: FakeGitHub, name: str | None, bio: str | None) -> None:
    fake_github.script("/users/someone", json_reply(profile("someone", name=name, bio=bio)))
    fake_github.script("/users/someone/events/public", json_reply([]))
    document = lookup(door, fake_github, "someone").document
    assert (document["found"], document["ghost"], document["looks_deleted"]) == (True, False, True)
    assert document["notes"] == NOTE_HEURISTIC


def test_heuristic_reads_name_and_bio_joined_by_a_space(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/someone", json_reply(profile("someone", name="Deleted", bio="user since 2019")))
    fake_github.script("/users/someone/events/public", json_reply([]))
    assert lookup(door, fake_github, "someone").document["looks_deleted"] is True


def test_no_heuristic_for_ordinary_text(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/someone", json_reply(profile("someone", name="deleted-user", bio="I delete accounts")))
    fake_github.script("/users/someone/events/public", json_reply([]))
    document = lookup(door, fake_github, "someone").document
    assert document["looks_deleted"] is False and document["notes"] == ""


def test_heuristic_note_comes_before_the_events_note(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/someone", json_reply(profile("someone", bio="This account has been deleted")))
    fake_github.script("/users/someone/events/public", json_reply({}, status=500))
    assert lookup(door, fake_github, "someone").document["notes"] == NOTE_HEURISTIC + " " + events_note("HTTP 500")


def test_404_is_one_request_and_the_note(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/gone", json_reply({"message": "Not Found"}, status=404))
    result = lookup(door, fake_github, "gone")
    assert not result.is_error and result.exit_code in (0, None)
    assert result.document == {
        "login": "gone",
        "found": False,
        "ghost": False,
        "looks_deleted": False,
        "account_type": "",
        "name": "",
        "bio": "",
        "profile_url": "",
        "created_at": "",
        "public_repos": 0,
        "followers": 0,
        "recent_events": [],
        "notes": NOTE_404,
    }
    assert fake_github.targets() == ["/users/gone"]


def test_ghost_with_403_keeps_ghost_and_is_not_found(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/ghost", json_reply({"message": "API rate limit exceeded"}, status=403))
    document = lookup(door, fake_github, "ghost").document
    assert (document["found"], document["ghost"], document["looks_deleted"]) == (False, True, False)
    assert document["notes"] == soft_note("HTTP 403 (often rate limiting)")
    assert fake_github.targets() == ["/users/ghost"]


@pytest.mark.parametrize(
    ("status", "returned"),
    [
        (403, "HTTP 403 (often rate limiting)"),
        (429, "rate limited (HTTP 429)"),
        (500, "HTTP 500"),
        (502, "HTTP 502"),
        (503, "HTTP 503"),
        (599, "HTTP 599"),
    ],
)
def test_transient_profile_answers_are_soft(door: Door, fake_github: FakeGitHub, status: int, returned: str) -> None:
    fake_github.script("/users/octocat", Reply(status, headers=[("Retry-After", "1")], body=b"busy"))
    result = lookup(door, fake_github, "octocat")
    assert not result.is_error and result.exit_code in (0, None)
    assert result.document["found"] is False and result.document["recent_events"] == []
    assert result.document["notes"] == soft_note(returned)
    assert fake_github.targets() == ["/users/octocat"]


@pytest.mark.parametrize("status", [400, 401])
def test_client_errors_quote_the_body(door: Door, fake_github: FakeGitHub, status: int) -> None:
    fake_github.script("/users/octocat", json_reply({"message": "Bad credentials"}, status=status))
    result = lookup(door, fake_github, "octocat")
    expect_error(
        result, "upstream_unavailable", f'GitHub returned HTTP {status} for /users/octocat: {{"message": "Bad credentials"}}'
    )
    assert fake_github.targets() == ["/users/octocat"]


def test_error_body_is_cut_at_200_bytes_and_sanitized(door: Door, fake_github: FakeGitHub) -> None:
    body = b"line one\nline\ttwo\x1b[31m" + b"a" * 200
    fake_github.script("/users/octocat", Reply(422, body=body))
    excerpt = "line one line two[31m" + "a" * (200 - 22)
    expect_error(lookup(door, fake_github, "octocat"), "upstream_unavailable",
                 f"GitHub returned HTTP 422 for /users/octocat: {excerpt}")


def test_error_body_cut_inside_a_character_drops_the_partial_character(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/octocat", Reply(400, body=b"b" * 199 + "é tail".encode()))
    expect_error(lookup(door, fake_github, "octocat"), "upstream_unavailable",
                 "GitHub returned HTTP 400 for /users/octocat: " + "b" * 199)


@pytest.mark.parametrize("status", [204, 418])
def test_other_statuses_are_errors(door: Door, fake_github: FakeGitHub, status: int) -> None:
    fake_github.script("/users/octocat", Reply(status))
    expect_error(lookup(door, fake_github, "octocat"), "upstream_unavailable",
                 f"GitHub returned HTTP {status} for /users/octocat: ")


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_redirect_is_an_error_and_never_followed(door: Door, fake_github: FakeGitHub, status: int) -> None:
    target = fake_github.server.url("/users/renamed")
    fake_github.script("/users/octocat", Reply(status, headers=[("Location", target)]))
    fake_github.script("/users/renamed", json_reply(profile("renamed")))
    result = lookup(door, fake_github, "octocat")
    expect_error(result, "upstream_unavailable",
                 f'GitHub answered HTTP {status} (redirect to "{target}"); redirects are not followed')
    assert fake_github.targets() == ["/users/octocat"]


def test_redirect_location_is_sanitized_when_echoed(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/octocat", Reply(301, headers=[("Location", 'https://evil.example/"x"\t')]))
    expect_error(lookup(door, fake_github, "octocat"), "upstream_unavailable",
                 'GitHub answered HTTP 301 (redirect to "https://evil.example/\\"x\\""); redirects are not followed')


@pytest.mark.parametrize("body", [b"[]", b"not json", b'"octocat"', b'{"a": 1, "a": 2}', b"\xff\xfe{}", b""])
def test_profile_200_that_is_not_a_json_object_is_an_error(door: Door, fake_github: FakeGitHub, body: bytes) -> None:
    fake_github.script("/users/octocat", Reply(200, headers=[("Content-Type", "application/json")], body=body))
    expect_error(lookup(door, fake_github, "octocat"), "upstream_unavailable",
                 "GitHub returned HTTP 200 for /users/octocat but the body is not a JSON object")
    assert fake_github.targets() == ["/users/octocat"]


def test_missing_and_mistyped_profile_fields_read_as_empty(door: Door, fake_github: FakeGitHub) -> None:
    body = {"login": "odd", "type": 7, "name": ["x"], "html_url": None, "public_repos": "8", "followers": 2.0}
    fake_github.script("/users/odd", json_reply(body))
    fake_github.script("/users/odd/events/public", json_reply([]))
    document = lookup(door, fake_github, "odd").document
    assert document["found"] is True
    assert {k: document[k] for k in ("account_type", "name", "bio", "profile_url", "created_at")} == dict.fromkeys(
        ("account_type", "name", "bio", "profile_url", "created_at"), ""
    )
    assert (document["public_repos"], document["followers"]) == (0, 0)


def test_boolean_counts_read_as_zero(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/odd", json_reply(profile("odd", public_repos=True, followers=False)))
    fake_github.script("/users/odd/events/public", json_reply([]))
    document = lookup(door, fake_github, "odd").document
    assert (document["public_repos"], document["followers"]) == (0, 0)


def test_strings_from_github_are_sanitized(door: Door, fake_github: FakeGitHub) -> None:
    hostile = profile(
        "octocat",
        type="User\u200b",
        name="  Mona\nLisa\u202e ",
        bio="x" * 2000,
        html_url="https://github.com/octocat\u0000",
        created_at="\t2011-01-25T18:44:36Z",
    )
    fake_github.script("/users/octocat", json_reply(hostile))
    event = {"type": "Push\u2028Event", "repo": {"name": "octo\u200dcat/x"}, "created_at": "2026\u00ad-01-01"}
    fake_github.script("/users/octocat/events/public", json_reply([event]))
    document = lookup(door, fake_github, "octocat").document
    assert document["account_type"] == "User"
    assert document["name"] == "Mona Lisa"
    assert document["bio"] == "x" * 1012 + " [truncated]"
    assert document["profile_url"] == "https://github.com/octocat"
    assert document["created_at"] == "2011-01-25T18:44:36Z"
    assert document["recent_events"] == [{"type": "Push Event", "repo": "octocat/x", "timestamp": "2026-01-01"}]


def test_events_keep_only_objects_and_read_missing_fields_as_empty(door: Door, fake_github: FakeGitHub) -> None:
    listed: list[Any] = [
        "string",
        {"type": "ForkEvent", "repo": "not-an-object", "created_at": 5},
        None,
        {},
        [1],
        *events(12),
    ]
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/users/octocat/events/public", json_reply(listed))
    recent = lookup(door, fake_github, "octocat").document["recent_events"]
    assert len(recent) == 10
    assert recent[:2] == [{"type": "ForkEvent", "repo": "", "timestamp": ""}, {"type": "", "repo": "", "timestamp": ""}]
    assert recent[2] == {"type": "WatchEvent", "repo": "octocat/repo-0", "timestamp": "2026-04-01T12:00:00Z"}


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (json_reply({"message": "rate limit"}, status=403), "HTTP 403 (often rate limiting)"),
        (Reply(429), "rate limited (HTTP 429)"),
        (Reply(500), "HTTP 500"),
        (Reply(404), "HTTP 404"),
        (Reply(401), "HTTP 401"),
        (Reply(301, headers=[("Location", "/users/elsewhere")]), "redirect not followed (HTTP 301)"),
        (Reply(200, body=b"<html>garbage</html>"), "not a JSON array"),
        (json_reply({"message": "not a list"}), "not a JSON array"),
        (Reply(200, body=b"[1, 2,"), "not a JSON array"),
    ],
)
def test_events_failures_are_notes_after_a_found_profile(
    door: Door, fake_github: FakeGitHub, reply: Reply, reason: str
) -> None:
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/users/octocat/events/public", reply)
    result = lookup(door, fake_github, "octocat")
    assert not result.is_error
    assert result.document["found"] is True and result.document["name"] == "The Octocat"
    assert result.document["recent_events"] == []
    assert result.document["notes"] == events_note(reason)
    assert fake_github.targets() == ["/users/octocat", "/users/octocat" + EVENTS_QUERY]


def test_events_transport_failure_is_a_note(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/users/octocat/events/public", Reply(drop=True))
    document = lookup(door, fake_github, "octocat").document
    assert document["found"] is True and document["recent_events"] == []
    assert document["notes"].startswith("recent activity unavailable: read failed: ")
    assert document["notes"].endswith("; the profile data above is still authoritative.")


def test_events_body_over_the_cap_is_a_note(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/users/octocat/events/public", Reply(200, body=b" " * (5 * 1024 * 1024)))
    document = lookup(door, fake_github, "octocat").document
    assert document["notes"] == events_note("response larger than 4,194,304 bytes")


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_profile_body_of_5_mib_is_an_error(door: Door, fake_github: FakeGitHub, chunked: bool) -> None:
    body = b'{"bio": "' + b"x" * (5 * 1024 * 1024) + b'"}'
    fake_github.script("/users/octocat", Reply(200, body=body, chunked=chunked))
    expect_error(lookup(door, fake_github, "octocat"), "upstream_unavailable",
                 "GitHub request failed: response larger than 4,194,304 bytes")
    assert fake_github.targets() == ["/users/octocat"]


@pytest.mark.parametrize("stall", ["before-status", "after-headers"])
def test_hung_server_fails_in_bounded_time(
    door: Door, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, stall: str
) -> None:
    # The real client, with the read timeout and deadline shrunk from the spec's 15 s so the test stays short.
    quick = functools.partial(github_client, connect_timeout_s=2, read_timeout_s=0.3, deadline_s=2)
    monkeypatch.setattr(instances, "github_client", quick)
    reply = Reply(200, stall_s=30) if stall == "before-status" else Reply(200, body=b"{}", body_stall_s=30)
    fake_github.script("/users/octocat", reply)
    expect_error(lookup(door, fake_github, "octocat"), "upstream_unavailable",
                 "GitHub request failed: read timed out after 0.3 s")


def test_unreachable_github_is_an_error(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.configure(api_url=f"https://127.0.0.1:{_free_port()}", ca_file="github-ca.pem")
    result = lookup(door, fake_github, "octocat")
    assert result.document["error"]["code"] == "upstream_unavailable"
    assert result.document["error"]["message"].startswith("GitHub request failed: connection failed: ")


def test_untrusted_certificate_is_an_error(door: Door, fake_github: FakeGitHub) -> None:
    trustme.CA().cert_pem.write_to_path(str(fake_github.workspace / "other-ca.pem"))
    fake_github.configure(api_url=fake_github.server.origin, ca_file="other-ca.pem")
    result = lookup(door, fake_github, "octocat")
    assert result.document["error"]["code"] == "upstream_unavailable"
    assert result.document["error"]["message"].startswith("GitHub request failed: TLS certificate verification failed")
    assert fake_github.targets() == []


def test_dead_https_proxy_is_ignored(door: Door, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = f"http://127.0.0.1:{_free_port()}"
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.setenv("NO_PROXY", "")
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/users/octocat/events/public", json_reply(events(1)))
    document = lookup(door, fake_github, "octocat").document
    assert document["found"] is True and len(document["recent_events"]) == 1


def test_bot_login_is_percent_encoded(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.script("/users/dependabot%5Bbot%5D", json_reply(profile("dependabot[bot]", type="Bot")))
    fake_github.script("/users/dependabot%5Bbot%5D/events/public", json_reply(events(3)))
    document = lookup(door, fake_github, "dependabot[bot]").document
    assert document["login"] == "dependabot[bot]"
    assert (document["found"], document["account_type"], len(document["recent_events"])) == (True, "Bot", 3)
    assert fake_github.targets() == ["/users/dependabot%5Bbot%5D", "/users/dependabot%5Bbot%5D" + EVENTS_QUERY]


@pytest.mark.parametrize(
    "login",
    ["../admin", "a b", "a" * 40, "", "octocat/", "octo_cat", "ócto", "octocat\n", "[bot]", "x[bot]y", "x[BOT]",
     "a" * 40 + "[bot]", "octocat%2F..", "-" * 40],
)
def test_invalid_login_is_refused_before_any_request(door: Door, fake_github: FakeGitHub, login: str) -> None:
    expect_error(lookup(door, fake_github, login), "invalid_input", LOGIN_MESSAGE)
    assert fake_github.server.connections == 0


@pytest.mark.parametrize("login", ["a", "a" * 39, "a" * 39 + "[bot]", "-", "Octo-Cat-42"])
def test_boundary_logins_are_accepted(door: Door, fake_github: FakeGitHub, login: str) -> None:
    document = lookup(door, fake_github, login).document
    assert document["login"] == login and document["notes"] == NOTE_404
    assert len(fake_github.targets()) == 1


def test_login_of_another_type_is_invalid_input(fake_github: FakeGitHub) -> None:
    result = actor(call_mcp, fake_github.workspace, {"login": 42})
    expect_error(result, "invalid_input", "login: expected a string, got an integer")


def test_missing_login_and_unknown_fields_are_invalid_input(door: Door, fake_github: FakeGitHub) -> None:
    expect_error(actor(door, fake_github.workspace, {}), "invalid_input", "login: is required")
    result = actor(door, fake_github.workspace, {"login": "octocat", "per_page": 100})
    assert result.document["error"]["code"] == "invalid_input"
    assert result.document["error"]["message"].startswith("per_page: unknown field")
    assert fake_github.server.connections == 0


def test_api_url_with_a_path_prefix(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.configure(api_url=fake_github.server.origin + "/api/v3/", ca_file="github-ca.pem")
    fake_github.script("/api/v3/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/api/v3/users/octocat/events/public", json_reply(events(4)))
    document = lookup(door, fake_github, "octocat").document
    assert document["found"] is True and len(document["recent_events"]) == 4
    assert fake_github.targets() == ["/api/v3/users/octocat", "/api/v3/users/octocat" + EVENTS_QUERY]


def test_http_api_url_is_a_configuration_error_on_the_cli(fake_github: FakeGitHub) -> None:
    fake_github.configure(api_url=f"http://127.0.0.1:{fake_github.server.port}")
    result = actor(call_cli, fake_github.workspace, {"login": "octocat"})
    assert result.exit_code == 2
    assert result.document["error"]["code"] == "invalid_input"
    assert "[github] api_url" in result.document["error"]["message"]
    assert fake_github.server.connections == 0


def test_http_api_url_stops_the_server_from_starting(fake_github: FakeGitHub) -> None:
    fake_github.configure(api_url=f"http://127.0.0.1:{fake_github.server.port}")
    with pytest.raises(ConfigError, match=r"\[github\] api_url"):
        load_settings(Overrides(workspace=fake_github.workspace))


def test_unusable_ca_file_is_a_configuration_error(door: Door, fake_github: FakeGitHub) -> None:
    fake_github.configure(api_url=fake_github.server.origin, ca_file="missing.pem")
    result = lookup(door, fake_github, "octocat")
    expect_error(result, "invalid_input", result.document["error"]["message"])
    assert "[github] ca_file: cannot load a PEM bundle from " in result.document["error"]["message"]
    assert str(fake_github.workspace / "missing.pem") in result.document["error"]["message"]
    assert fake_github.server.connections == 0


def test_unsendable_token_is_a_configuration_error_that_hides_the_token(
    door: Door, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret\u00e9value")
    result = lookup(door, fake_github, "octocat")
    expect_error(result, "invalid_input", "GITHUB_TOKEN: must be printable ASCII, since it is sent as a header")
    assert "secret" not in result.text
    assert fake_github.server.connections == 0


def test_one_client_per_process_reused_across_calls(fake_github: FakeGitHub) -> None:
    fake_github.script("/users/octocat", json_reply(profile("octocat")))
    fake_github.script("/users/octocat/events/public", json_reply([]))
    context = build_context(load_settings(Overrides(workspace=fake_github.workspace)))
    assert services.github(context) is services.github(context)

    async def two_calls() -> list[Any]:
        async with Client(build_server(OPERATIONS, context)) as client:
            return [await client.call_tool("github_actor", {"login": "octocat"}) for _ in range(2)]

    try:
        answers = anyio.run(two_calls)
    finally:
        context.close()
    assert [a.is_error for a in answers] == [False, False]
    assert len(fake_github.targets()) == 4
    assert fake_github.server.connections == 1


def test_tool_is_listed_as_open_world_and_read_only() -> None:
    op = OPERATIONS.get("github_actor")
    assert op is not None and op.toolset == "investigate"
    assert op.annotations() == {
        "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True
    }


def test_description_tells_the_agent_how_to_read_found_false() -> None:
    text = listed_text("github_actor")
    for phrase in ('found=false means "could not confirm"', "login", "[bot]", "at most 10", "4 MiB", "15 s",
                   "redirects are never followed", "no retries", "1,024 bytes", "[github] api_url", "GITHUB_TOKEN",
                   "invalid_input", "upstream_unavailable", "404"):
        assert phrase in text, phrase


def test_refusal_message_names_scheme_host_and_port() -> None:
    assert github_actor.refusal_message("https://evil.example:8443/users/x?y=1") == (
        "refusing request to https://evil.example:8443: not the configured GitHub API host"
    )


def test_a_request_off_the_configured_host_is_refused(fake_github: FakeGitHub) -> None:
    client = GuardedClient(
        origin=fake_github.server.origin, ca_file=fake_github.server.ca_file,
        connect_timeout_s=2, read_timeout_s=2, deadline_s=2, max_body_bytes=1024,
    )
    with client, pytest.raises(errors.Refused) as raised:
        github_actor._fetch_profile(client, "https://api.github.com/users/octocat")
    assert raised.value.message == "refusing request to https://api.github.com: not the configured GitHub API host"
    assert fake_github.server.connections == 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
