"""github_actor (docs/investigate.md §9.6): a live, read-only look at one GitHub account and its recent public activity."""

from __future__ import annotations

import codecs
import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from harness import errors
from harness.context import Context
from harness.fields import Echoed
from harness.investigate.services import github
from harness.net import GuardedClient, NetError, RequestRefused, Response, build_path, build_query
from harness.text.canonjson import StrictJSONError, loads_strict
from harness.text.sanitize import echo, sanitize_field

MAX_RECENT_EVENTS = 10
EVENTS_PER_PAGE = 30
ERROR_BODY_BYTES = 200

_LOGIN = re.compile(r"[A-Za-z0-9-]{1,39}(?:\[bot\])?")
LOGIN_PROBLEM = "must be 1-39 letters, digits or hyphens, optionally followed by [bot]"

NOTE_NOT_FOUND = (
    "GitHub returned 404 for this login: no account exists under this exact name now. It may never have existed, "
    "been renamed, or been deleted; deleted accounts are not always reattributed to the ghost account."
)
NOTE_GHOST = (
    '"ghost" is GitHub\'s reserved placeholder account: activity of deleted accounts is reattributed to it. The '
    "profile is real; activity shown under ghost belongs to accounts that no longer exist."
)
NOTE_DELETED_TEXT = (
    "the profile name or bio suggests a deleted or suspended account; this is a text heuristic, not a deletion "
    "confirmed by the API."
)
DELETED_MARKERS = (
    "deleted user",
    "deleted account",
    "this account has been deleted",
    "account suspended",
    "account has been suspended",
)


def _check_login(value: str) -> str:
    if _LOGIN.fullmatch(value) is None:
        raise ValueError(LOGIN_PROBLEM)
    return value


class Input(BaseModel):
    """Arguments of github_actor."""

    model_config = ConfigDict(extra="forbid")

    login: Annotated[str, AfterValidator(_check_login)] = Field(
        description="GitHub login to look up: 1-39 letters, digits or hyphens, optionally followed by [bot] "
        "(e.g. octocat, dependabot[bot]). Required."
    )


class RecentEvent(BaseModel):
    """One public event of the account, as GitHub lists it."""

    type: str = Field(description="GitHub event type, e.g. PushEvent.")
    repo: str = Field(description="Repository full name (owner/name), or empty.")
    timestamp: str = Field(description="created_at of the event as GitHub gives it, or empty.")


class Output(BaseModel):
    """The account as GitHub shows it now; every key is always present."""

    login: Echoed = Field(description="The login as given.")
    found: bool = Field(description="True only when GitHub returned the profile (HTTP 200).")
    ghost: bool = Field(description="The login is GitHub's reserved placeholder account ghost (any case).")
    looks_deleted: bool = Field(description="ghost, or the name/bio reads like a deleted or suspended account.")
    account_type: str = Field(description="User, Organization or Bot as GitHub reports it; empty if unknown.")
    name: str = Field(description="Display name; empty if none.")
    bio: str = Field(description="Profile bio; empty if none.")
    profile_url: str = Field(description="html_url of the profile; empty if unknown.")
    created_at: str = Field(description="Account creation time as GitHub gives it; empty if unknown.")
    public_repos: int = Field(description="Public repository count; 0 if unknown.")
    followers: int = Field(description="Follower count; 0 if unknown.")
    recent_events: list[RecentEvent] = Field(description="Up to 10 most recent public events, in GitHub's order.")
    notes: str = Field(description="Explanations of the outcome, joined by one space; empty when there is none.")


DESCRIPTION = f"""\
Look up one GitHub account live (read-only GitHub REST API): whether it exists now, its profile, and its most \
recent public activity (at most {MAX_RECENT_EVENTS} of GitHub's newest {EVENTS_PER_PAGE} public events, newest \
first). Use it to tell whether an actor in the security events is a real, current GitHub account, a bot, or a \
deleted one. A login that is not 1-39 letters, digits or hyphens (optionally followed by `[bot]`) is refused \
before anything is requested. A value GitHub does not give reads as "" or 0; every string from GitHub is \
sanitized and capped at 1,024 bytes with a visible " [truncated]" marker.

How to read it:
- found=true: GitHub returned the profile now.
- found=false with the 404 note: no account has this exact name now (never existed, renamed, or deleted).
- found=false with a "profile unavailable" note (HTTP 403, 429 or 5xx, often rate limiting): the lookup could \
not confirm anything either way. It is NOT evidence that the login does not exist; found=false means "could not \
confirm". Retry later rather than concluding.
- ghost=true: the login is GitHub's placeholder `ghost`, to which activity of deleted accounts is reattributed.
- looks_deleted=true: ghost, or the name/bio reads like a deleted or suspended account (a text heuristic, not \
an API confirmation; the note says which).
- Recent activity that cannot be read (rate limit, error, malformed answer) adds a "recent activity unavailable" \
note and leaves recent_events empty; the profile data is still authoritative.

Caps: one profile request and at most one activity request per call; each answer at most 4 MiB and 15 s; no \
retries; redirects are never followed. Requests go only to the configured GitHub API host (`[github] api_url`, \
default https://api.github.com); GITHUB_TOKEN, when set, is sent as a bearer token (higher rate limits).

Errors: invalid_input (bad login); upstream_unavailable when GitHub answers a redirect, HTTP 400, 401 or another \
unexpected status, returns a profile that is not a JSON object, or the request fails (timeout, TLS, connection, \
answer over 4 MiB); refused for a request outside the configured GitHub API host."""


def handle(args: Input, ctx: Context) -> Output:
    """Fetch the profile, then (after a 200) the recent public events, and explain the outcome in notes."""
    login = args.login
    ghost = login.lower() == "ghost"
    client = github(ctx)
    path = build_path(["users", login])
    outcome = _profile_outcome(_fetch_profile(client, path), path)
    if isinstance(outcome, str):
        return Output(
            login=login, found=False, ghost=ghost, looks_deleted=False, recent_events=[], notes=outcome,
            **_profile_fields({}),
        )
    fields = _profile_fields(outcome)
    deleted_note = _deletion_note(ghost, fields["name"], fields["bio"])
    events, events_note = _recent_events(client, build_path(["users", login, "events", "public"]))
    return Output(
        login=login,
        found=True,
        ghost=ghost,
        looks_deleted=bool(deleted_note),
        recent_events=events,
        notes=" ".join(note for note in (deleted_note, events_note) if note),
        **fields,
    )


def _fetch_profile(client: GuardedClient, path: str) -> Response:
    try:
        return client.get(path)
    except RequestRefused as exc:
        raise errors.Refused(refusal_message(exc.url)) from None
    except NetError as exc:
        raise errors.UpstreamUnavailable(f"GitHub request failed: {exc.reason}") from None


def refusal_message(url: str) -> str:
    """The docs/investigate.md §9.6 message for a request URL outside the configured GitHub API host."""
    parts = urlsplit(url)
    return f"refusing request to {parts.scheme}://{parts.netloc}: not the configured GitHub API host"


def _profile_outcome(response: Response, path: str) -> dict[str, Any] | str:
    """The profile object of a 200, or the note of a not-found or transient answer; other answers raise."""
    status = response.status
    if status == 200:
        profile = _json(response.body)
        if not isinstance(profile, dict):
            raise errors.UpstreamUnavailable(f"GitHub returned HTTP 200 for {path} but the body is not a JSON object")
        return profile
    if status == 404:
        return NOTE_NOT_FOUND
    if status in (403, 429) or status >= 500:
        return (
            f"profile unavailable: GitHub returned {_status_phrase(status)}. This is a transient or upstream "
            'condition, not evidence that the login does not exist; found=false means "could not confirm".'
        )
    if 300 <= status < 400:
        location = echo(response.headers.get("location", ""))
        raise errors.UpstreamUnavailable(
            f"GitHub answered HTTP {status} (redirect to {location}); redirects are not followed"
        )
    raise errors.UpstreamUnavailable(f"GitHub returned HTTP {status} for {path}: {_body_excerpt(response.body)}")


def _profile_fields(profile: dict[str, Any]) -> dict[str, Any]:
    """The Output fields read from a profile object; absent or mistyped values read as "" or 0."""
    return {
        "account_type": _text(profile, "type"),
        "name": _text(profile, "name"),
        "bio": _text(profile, "bio"),
        "profile_url": _text(profile, "html_url"),
        "created_at": _text(profile, "created_at"),
        "public_repos": _count(profile, "public_repos"),
        "followers": _count(profile, "followers"),
    }


def _deletion_note(ghost: bool, name: str, bio: str) -> str:
    """The note that makes looks_deleted true, or ""."""
    if ghost:
        return NOTE_GHOST
    text = f"{name} {bio}".lower()
    return NOTE_DELETED_TEXT if any(marker in text for marker in DELETED_MARKERS) else ""


def _recent_events(client: GuardedClient, path: str) -> tuple[list[RecentEvent], str]:
    """The first public events and "", or [] and a note: the profile already stands, so nothing here is an error."""
    try:
        response = client.get(path + build_query([("per_page", str(EVENTS_PER_PAGE))]))
    except NetError as exc:
        return [], _events_note(exc.reason)
    status = response.status
    if 300 <= status < 400:
        return [], _events_note(f"redirect not followed (HTTP {status})")
    if status != 200:
        return [], _events_note(_status_phrase(status))
    events = _json(response.body)
    if not isinstance(events, list):
        return [], _events_note("not a JSON array")
    objects = [event for event in events if isinstance(event, dict)][:MAX_RECENT_EVENTS]
    return [
        RecentEvent(
            type=_text(event, "type"), repo=_text(event.get("repo"), "name"), timestamp=_text(event, "created_at")
        )
        for event in objects
    ], ""


def _events_note(reason: str) -> str:
    return f"recent activity unavailable: {reason}; the profile data above is still authoritative."


def _status_phrase(status: int) -> str:
    if status == 403:
        return "HTTP 403 (often rate limiting)"
    if status == 429:
        return "rate limited (HTTP 429)"
    return f"HTTP {status}"


def _json(body: bytes) -> Any:
    """The parsed body, or None when it is not strict JSON (a None is neither an object nor an array)."""
    try:
        return loads_strict(body)
    except StrictJSONError:
        return None


def _text(obj: Any, key: str) -> str:
    value = obj.get(key) if isinstance(obj, dict) else None
    return sanitize_field(value) if isinstance(value, str) else ""


def _count(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _body_excerpt(body: bytes) -> str:
    # A non-final decode holds back a code point cut at the 200-byte boundary instead of mangling it.
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    return sanitize_field(decoder.decode(body[:ERROR_BODY_BYTES], final=False))
