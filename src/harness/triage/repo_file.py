"""repo_file (docs/triage.md §13): one text file of the watcher checkout, read without following symlinks."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from harness.context import Context
from harness.errors import NotFound, Refused, UpstreamUnavailable
from harness.fields import Echoed
from harness.text.formatgate import violation
from harness.triage.paths import path_problem

MAX_PATH_CHARS = 1_024
DEFAULT_MAX_BYTES = 65_536
MAX_MAX_BYTES = 1_048_576
MAX_FILE_BYTES = 8 * 1_048_576

DESCRIPTION = (
    "Read one file of the watcher repository's working tree ([triage] watcher_repo), so that code fixes can be "
    "written against the real source. The sandbox of fp_agent_pr applies diffs on the checkout's HEAD, so the "
    "checkout should be clean.\n"
    "The path is a relative path under src/trustsight/ or tests/, at least one component below them; no "
    "absolute path, backslash, empty or dot component (., .., .git, hidden files), components of 1-255 "
    "characters of A-Z a-z 0-9 _ . + @ - not starting with -, at most 32 components; 1-1,024 printable ASCII "
    "characters. It is walked one component at a time without following symlinks: a symlink anywhere, a "
    "directory or another non-regular file is refused. Files over 8 MiB, files that are not strict UTF-8 (not "
    "UTF-8 text) and files containing NUL (binary file) are refused.\n"
    "bytes and sha256 describe the whole file; text is repository content, returned as is.\n"
    "Errors: invalid_input (bad path text or max_bytes), refused (path rules, symlinks, non-regular, too large, "
    "not text), not_found (no such file), upstream_unavailable (no watcher checkout configured, or it is not a "
    "directory)."
)


@dataclass(frozen=True)
class _Kind:
    """What one step of the walk must find: its mode test, the open flags, and how a refusal words it."""

    is_kind: Callable[[int], bool]
    flags: int
    noun: str
    open_failure: str


_DIRECTORY = _Kind(
    stat.S_ISDIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, "a directory", "not a directory"
)
# O_NONBLOCK: a FIFO swapped in between the lstat and the open must not block the open.
_REGULAR = _Kind(
    stat.S_ISREG, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, "a regular file", "cannot be opened"
)


def _check_path_text(value: str) -> str:
    if not 1 <= len(value) <= MAX_PATH_CHARS:
        raise ValueError(f"must be 1 to {MAX_PATH_CHARS:,} characters, got {len(value):,}")
    found = violation(value, "line")
    if found is not None:
        raise ValueError(f"format gate: $.path: {found[1]}")
    return value


class Input(BaseModel):
    """Arguments of repo_file."""

    model_config = ConfigDict(extra="forbid")

    path: Annotated[str, AfterValidator(_check_path_text)] = Field(
        description="Path inside the watcher checkout, under src/trustsight/ or tests/ (e.g. "
        "src/trustsight/rules.py). Required."
    )
    max_bytes: int = Field(
        DEFAULT_MAX_BYTES,
        ge=1,
        le=MAX_MAX_BYTES,
        description="Most bytes of text to return (1-1,048,576); longer files are cut on a character boundary.",
    )


class Output(BaseModel):
    """One file of the watcher checkout; every key always present."""

    path: Echoed = Field(description="The path as given.")
    bytes: int = Field(description="Size of the whole file in bytes.")
    sha256: str = Field(description="Lowercase hex SHA-256 of the whole file.")
    text: str = Field(description="The file's text, or its first max_bytes bytes cut to a whole character.")
    truncated: bool = Field(description="True when text is shorter than the file.")


def _same_file(before: os.stat_result, after: os.stat_result) -> bool:
    return (before.st_dev, before.st_ino) == (after.st_dev, after.st_ino)


def _lstat_at(name: str, dir_fd: int, shown: str) -> os.stat_result:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise NotFound(f"{shown} does not exist in the watcher checkout") from None


def _open_at(dir_fd: int, name: str, shown: str, kind: _Kind, subject: str) -> int:
    """Open `name` of `dir_fd` as `kind`: lstat, no-follow open, then the descriptor must be the lstat'ed file,
    so nothing swapped in between the two (a symlink, a FIFO, another file) is ever read."""
    before = _lstat_at(name, dir_fd, shown)
    if stat.S_ISLNK(before.st_mode):
        raise Refused(f"{subject} is a symbolic link")
    if not kind.is_kind(before.st_mode):
        raise Refused(f"{subject} is not {kind.noun}")
    try:
        fd = os.open(name, kind.flags, dir_fd=dir_fd)
    except FileNotFoundError:
        raise NotFound(f"{shown} does not exist in the watcher checkout") from None
    except OSError:
        raise Refused(f"{subject} is a symbolic link or {kind.open_failure}") from None
    after = os.fstat(fd)
    if not kind.is_kind(after.st_mode) or not _same_file(before, after):
        os.close(fd)
        raise Refused(f"{subject} changed while it was opened")
    return fd


def open_watcher_file(root: Path, parts: tuple[str, ...]) -> int:
    """A descriptor for root/parts, walked with directory descriptors and no-follow opens."""
    dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, name in enumerate(parts[:-1], start=1):
            shown = "/".join(parts[:depth])
            child = _open_at(dir_fd, name, shown, _DIRECTORY, f"path component {shown}")
            os.close(dir_fd)
            dir_fd = child
        shown = "/".join(parts)
        return _open_at(dir_fd, parts[-1], shown, _REGULAR, shown)
    finally:
        os.close(dir_fd)


def _read_all(fd: int, shown: str) -> bytes:
    if os.fstat(fd).st_size > MAX_FILE_BYTES:
        raise Refused(f"{shown} is larger than 8 MiB")
    chunks: list[bytes] = []
    remaining = MAX_FILE_BYTES + 1
    while remaining > 0 and (chunk := os.read(fd, min(remaining, 1 << 20))):
        chunks.append(chunk)
        remaining -= len(chunk)
    data = b"".join(chunks)
    if len(data) > MAX_FILE_BYTES:
        raise Refused(f"{shown} is larger than 8 MiB")
    return data


def head_text(data: bytes, max_bytes: int) -> str:
    """The first `max_bytes` bytes of valid UTF-8 `data`, cut back to the last complete character."""
    cut = min(max_bytes, len(data))
    # A continuation byte right after the cut means the character it belongs to started before it.
    while 0 < cut < len(data) and data[cut] & 0xC0 == 0x80:
        cut -= 1
    return data[:cut].decode("utf-8")


def handle(args: Input, ctx: Context) -> Output:
    """Read one text file of the watcher checkout."""
    problem = path_problem(args.path)
    if problem:
        raise Refused(problem)
    root = ctx.settings.workspace_path(ctx.settings.get("triage", "watcher_repo"))
    if root is None:
        raise UpstreamUnavailable("watcher checkout not configured")
    if not root.is_dir():
        raise UpstreamUnavailable("watcher checkout is not a directory")
    try:
        fd = open_watcher_file(root, tuple(args.path.split("/")))
    except PermissionError:
        raise Refused(f"{args.path} cannot be read (permission denied)") from None
    except FileNotFoundError:
        # Only the checkout root itself can vanish here; missing components are not_found above.
        raise UpstreamUnavailable("watcher checkout is not a directory") from None
    try:
        data = _read_all(fd, args.path)
    finally:
        os.close(fd)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("not UTF-8 text") from None
    if "\0" in text:
        raise Refused("binary file")
    truncated = len(data) > args.max_bytes
    return Output(
        path=args.path,
        bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        text=head_text(data, args.max_bytes) if truncated else text,
        truncated=truncated,
    )
