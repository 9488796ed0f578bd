"""The pull loop: fetch a page, check its next link, commit its events, then advance the cursor.

A page is committed to the store before the cursor moves past it, and the store skips events it already
holds, so a pull stopped at any point resumes from the last committed page with nothing lost or doubled.
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urljoin, urlsplit

from harness.adapters import ADAPTERS, AdapterError
from harness.errors import InvalidInput, UpstreamUnavailable
from harness.net import GuardedClient, RequestRefused, Response
from harness.net.urls import check_url, display_url, parse_origin
from harness.pull.cursor import CURSOR_DIR, Cursor, load_cursor, save_cursor
from harness.pull.links import next_link
from harness.pull.ratelimit import is_rate_limited, wait_seconds
from harness.pull.sources import Source
from harness.store.backend import EventStore
from harness.store.ingest import ingest_files
from harness.text.canonjson import StrictJSONError, loads_strict
from harness.text.rfc3339 import TimestampError, parse_bound, parse_timestamp
from harness.text.sanitize import echo

MAX_WAITS_PER_PAGE = 5
_HINTS = {
    401: " (check {token})",
    403: " (check {token} and its scopes)",
    404: " (check the name and the token's access)",
}


def checked_link(source: Source, client: GuardedClient, page_url: str, link: str) -> str:
    """A next link resolved against the page it came from, on the client's origin and the source's endpoint;
    anything else is RequestRefused, before the page it came with is committed."""
    target = urljoin(page_url, link)
    try:
        url = check_url(parse_origin(client.origin), target)
    except RequestRefused as exc:
        raise RequestRefused(exc.url, f"next link refused: {exc.reason}") from None
    expected = parse_origin(client.origin).prefix + source.endpoint
    if urlsplit(url).path != expected:
        raise RequestRefused(display_url(url), f"next link refused: path is not {expected}")
    return url


def _fetch(
    client: GuardedClient,
    source: Source,
    url: str,
    max_wait_s: int,
    stderr: TextIO,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> Response:
    """A 200 answer; rate limits are waited out when they ask for at most `max_wait_s`, else a clear error."""
    for _ in range(MAX_WAITS_PER_PAGE + 1):
        response = client.get(url)
        if response.status == 200:
            return response
        shown = display_url(url)
        if not is_rate_limited(response.status, response.headers, source.reset_header):
            hint = _HINTS.get(response.status, "").format(token=source.token_name)
            raise UpstreamUnavailable(f"GET {shown}: HTTP {response.status}{hint}")
        wait = wait_seconds(response.headers, source.reset_header, clock())
        if wait is None:
            raise UpstreamUnavailable(
                f"GET {shown}: rate limited (HTTP {response.status}) with neither Retry-After nor "
                f"{source.reset_header}; try again later"
            )
        if wait > max_wait_s:
            asked = "inf" if math.isinf(wait) else str(math.ceil(wait))
            raise UpstreamUnavailable(
                f"GET {shown}: rate limited (HTTP {response.status}); the API asks to wait {asked} s, more than "
                f"[pull] max_wait_s = {max_wait_s}; the cursor is kept, run the pull again later"
            )
        print(
            f"pull {source.name}: rate limited (HTTP {response.status}), waiting {wait:.1f} s", file=stderr, flush=True
        )
        sleep(wait)
    raise UpstreamUnavailable(f"GET {display_url(url)}: still rate limited after {MAX_WAITS_PER_PAGE} waits")


def _records(response: Response) -> list[Any]:
    try:
        value = loads_strict(response.body)
    except (StrictJSONError, UnicodeDecodeError) as exc:
        raise UpstreamUnavailable(f"GET {display_url(response.url)}: answer is not JSON: {exc}") from None
    if not isinstance(value, list):
        raise UpstreamUnavailable(f"GET {display_url(response.url)}: answer is not a JSON array of records")
    return value


def _newest(source: Source, records: list[Any], newest: str) -> str:
    """The latest event time among committed `records` and `newest`, compared as instants."""
    best = newest
    for record in records:
        try:
            stamp = ADAPTERS[source.format_name].to_event(record)["timestamp"]
        except AdapterError:
            continue
        if not best or parse_timestamp(stamp) > parse_timestamp(best):
            best = stamp
    return best


def pull(
    source: Source,
    client: GuardedClient,
    store: EventStore,
    cursor_file: Path,
    *,
    since: str,
    max_wait_s: int,
    stderr: TextIO,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
    monotonic: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Pull every page from the cursor (or `since`, or the API's default start) to the end; returns the summary."""
    if since:
        try:
            parse_bound(since, "since")
        except TimestampError as exc:
            raise InvalidInput(f"--since: {exc}") from None
    cursor = load_cursor(cursor_file)
    if cursor is not None and since:
        raise InvalidInput(
            f"--since: a cursor exists ({echo(str(cursor_file))}); remove it to start again from --since"
        )
    newest = cursor.since if cursor is not None else ""
    if cursor is not None and cursor.next:
        url, resumed = checked_link(source, client, cursor.next, cursor.next), True
    else:
        url, resumed = client.origin + source.first_path(since or newest), False
    pages = events = added = skipped = 0
    started = monotonic()
    while True:
        response = _fetch(client, source, url, max_wait_s, stderr, sleep, clock)
        records = _records(response)
        link = next_link(response.headers.get("link", ""))
        following = checked_link(source, client, url, link) if link else ""
        pages += 1
        page_added = 0
        if records:
            summary = ingest_files(
                store,
                "events",
                ["-"],
                stderr=stderr,
                stdin=io.BytesIO(response.body),
                format_name=source.format_name,
                stdin_name=f"{source.name} page {pages}",
            )
            events += summary["records"]
            page_added = summary["added"]
            added += page_added
            skipped += summary["skipped_duplicates"]
            newest = _newest(source, records, newest)
        elapsed = max(monotonic() - started, 1e-6)
        print(
            f"pull {source.name}: page {pages}: {len(records)} events ({page_added} new); "
            f"{events} events in {elapsed:.1f} s ({events / elapsed:.0f}/s)",
            file=stderr,
            flush=True,
        )
        if records and following:
            save_cursor(cursor_file, Cursor(next=following, since=newest))
            url = following
            continue
        # The end: an empty page keeps polling from its own URL (Okta always links onward); no link restarts from
        # the newest event committed, whose duplicates the store skips.
        save_cursor(cursor_file, Cursor(next=url if following else "", since=newest))
        break
    return {
        "added": added,
        "cursor": f"{CURSOR_DIR}/{cursor_file.name}",
        "events": events,
        "pages": pages,
        "resumed": resumed,
        "since": newest,
        "skipped_duplicates": skipped,
        "source": source.name,
    }
