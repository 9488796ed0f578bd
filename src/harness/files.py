"""The one file I/O module: the hardened read of a regular file and the atomic private write.

Every path a caller names (a CLI argument, a workspace file) is read through `open_regular`, so a
symlink, a directory, a device or a FIFO is refused before a byte is read and never blocks the
process; every file the harness writes for later (a key, a sidecar) goes through `write_private`,
so a reader never sees half a file and a crash never leaves one behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from harness.text.sanitize import echo

_READ_CHUNK = 1 << 20
# O_NONBLOCK: a FIFO swapped in between the lstat and the open must not block the open; the fstat
# identity check then refuses it. O_NOFOLLOW: a symlink swapped in is refused by the open itself.
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


class FileRefused(ValueError):
    """A file that is not read; the message is `file "<path>" <problem>`, ready to follow a field name."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = os.fspath(path)
        self.problem = problem
        super().__init__(f"file {echo(self.path)} {problem}")


class FileMissing(FileRefused):
    """The path does not exist (a caller may fall back to a default)."""


class FileTooLarge(FileRefused):
    """The file holds more than the cap; `cap` is the limit in bytes."""

    def __init__(self, path: str | os.PathLike[str], cap: int) -> None:
        self.cap = cap
        super().__init__(path, f"is larger than {cap:,} bytes")


class FileNotText(FileRefused):
    """The file's bytes are not strict UTF-8; `start` is the offset of the first bad byte."""

    def __init__(self, path: str | os.PathLike[str], start: int) -> None:
        self.start = start
        super().__init__(path, f"is not valid UTF-8 (byte {start})")


def _unreadable(path: str | os.PathLike[str], exc: OSError) -> FileRefused:
    if isinstance(exc, FileNotFoundError):
        return FileMissing(path, "does not exist")
    return FileRefused(path, f"cannot be read ({exc.strerror or type(exc).__name__})")


@contextlib.contextmanager
def open_regular(
    path: str | os.PathLike[str], *, cap: int | None = None, follow_symlinks: bool = False
) -> Iterator[tuple[int, os.stat_result]]:
    """An open descriptor of a regular file and its fstat, closed on exit; raises FileRefused.

    The path is stat'ed first (lstat unless `follow_symlinks`), refused unless it is a regular file
    within `cap`, opened non-blocking, and the descriptor must be the same regular file.
    """
    try:
        before = os.stat(path, follow_symlinks=follow_symlinks)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if stat.S_ISLNK(before.st_mode):
        raise FileRefused(path, "is a symbolic link")
    if not stat.S_ISREG(before.st_mode):
        raise FileRefused(path, "is not a regular file")
    if cap is not None and before.st_size > cap:
        raise FileTooLarge(path, cap)
    flags = _READ_FLAGS if follow_symlinks else _READ_FLAGS | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    try:
        after = os.fstat(fd)
        if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            raise FileRefused(path, "changed while it was opened")
        yield fd, after
    finally:
        os.close(fd)


def read_prefix(fd: int, path: str | os.PathLike[str], limit: int) -> bytes:
    """The first `limit` bytes of an open descriptor, fewer when the file ends first."""
    chunks: list[bytes] = []
    remaining = limit
    try:
        while remaining > 0:
            chunk = os.read(fd, min(remaining, _READ_CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    return b"".join(chunks)


def read_capped(fd: int, path: str | os.PathLike[str], cap: int) -> bytes:
    """At most `cap` bytes from an open descriptor; FileTooLarge when the file holds more (it grew)."""
    data = read_prefix(fd, path, cap + 1)
    if len(data) > cap:
        raise FileTooLarge(path, cap)
    return data


def iter_chunks(fd: int, path: str | os.PathLike[str]) -> Iterator[bytes]:
    """Every byte of an open descriptor, in chunks (for digests over files with no fixed cap)."""
    try:
        while chunk := os.read(fd, _READ_CHUNK):
            yield chunk
    except OSError as exc:
        raise _unreadable(path, exc) from None


def read_regular(path: str | os.PathLike[str], cap: int, *, follow_symlinks: bool = False) -> bytes:
    """The bytes of a regular file of at most `cap` bytes; raises FileRefused (FileMissing, FileTooLarge)."""
    with open_regular(path, cap=cap, follow_symlinks=follow_symlinks) as (fd, _):
        return read_capped(fd, path, cap)


def read_text(path: str | os.PathLike[str], cap: int, *, follow_symlinks: bool = False) -> str:
    """The strict UTF-8 text of a regular file of at most `cap` bytes; raises FileRefused (FileMissing,
    FileTooLarge, FileNotText)."""
    data = read_regular(path, cap, follow_symlinks=follow_symlinks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileNotText(path, exc.start) from None


def write_private(
    path: Path, chunks: Iterable[bytes], *, mode: int = 0o600, overwrite: bool = True
) -> tuple[int, str]:
    """Write a file atomically with `mode` (0600 unless told): an O_EXCL temporary name in the same
    directory, fsync, rename (or link, without `overwrite`), then fsync of the directory; returns
    (size, sha256). Raises OSError, FileExistsError when `overwrite` is false and the file exists."""
    directory = path.parent
    temp = directory / f".{path.name}.{secrets.token_hex(8)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    digest, size = hashlib.sha256(), 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
                digest.update(chunk)
                size += len(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(temp, path)
        else:
            os.link(temp, path)
            temp.unlink()
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_directory(directory)
    return size, digest.hexdigest()


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable: the directory entry is only on disk once the directory is synced."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
