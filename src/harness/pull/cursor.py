"""The pull cursor kept in the workspace: where the next page starts, written only after a page is committed."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from harness import files
from harness.errors import InvalidInput
from harness.text.canonjson import dumps
from harness.text.sanitize import echo

CURSOR_DIR = "pulls"
CURSOR_VERSION = 1
# A cursor is one short JSON line; anything larger is not one.
CURSOR_MAX_BYTES = 64 * 1024


@dataclass(frozen=True)
class Cursor:
    """`next`: the validated URL of the next page to fetch ("" when pagination ended); `since`: the newest event
    time committed so far (RFC 3339 UTC, "" when none), where the next pull starts once pagination ended."""

    next: str = ""
    since: str = ""


def cursor_path(workspace: Path, key: str) -> Path:
    """`<workspace>/pulls/<key>.json`; `key` is built from validated parts only."""
    return workspace / CURSOR_DIR / f"{key}.json"


def load_cursor(path: Path) -> Cursor | None:
    """The stored cursor, None when there is none; a damaged file is refused (never guessed around)."""
    try:
        data = files.read_regular(path, CURSOR_MAX_BYTES)
    except files.FileMissing:
        return None
    except files.FileRefused as exc:
        raise InvalidInput(f"cursor: {exc}") from None
    try:
        value = json.loads(data)
    except ValueError:
        value = None
    fields = {"version", "next", "since"}
    if (
        not isinstance(value, dict)
        or set(value) != fields
        or value["version"] != CURSOR_VERSION
        or not all(isinstance(value[key], str) for key in ("next", "since"))
    ):
        raise InvalidInput(
            f"cursor {echo(str(path))}: not a pull cursor (version {CURSOR_VERSION}); remove it to restart"
        )
    return Cursor(next=value["next"], since=value["since"])


def save_cursor(path: Path, cursor: Cursor) -> None:
    """Atomically replace the cursor file (0600, fsync, rename), creating `pulls/` (0700) when needed."""
    try:
        os.makedirs(path.parent, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"cursor {echo(str(path.parent))}: cannot be created: {exc.strerror}") from exc
    document = {"next": cursor.next, "since": cursor.since, "version": CURSOR_VERSION}
    try:
        files.write_private(path, [(dumps(document) + "\n").encode("utf-8")])
    except OSError as exc:
        raise InvalidInput(f"cursor {echo(str(path))}: cannot be written: {exc.strerror}") from exc
