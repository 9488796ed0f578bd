"""HEAD's answer cached against the identity of the files git reads it from (docs/decisions.md, issue 11).

Every call resolves HEAD; spawning git for it cost more than the handler. The answer of `git rev-parse` is a
function of three files: HEAD, the loose ref HEAD names, and packed-refs. Git replaces each of them by renaming
a lock file over it, so any update gives the file a new (inode, size, mtime) identity; while all three keep
the identity they had before git was asked, git's answer still holds. Anything this module does not fully
understand (reftable, linked worktrees, symbolic ref chains, odd ref names, recently modified files) is not
cached, so git answers it as before.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

# A file modified this recently may be replaced again within the filesystem's timestamp granularity with a
# reused inode and the same size, which its identity could not tell apart; git answers until it is older.
RACY_NS = 1_000_000_000
_REF_NAME = re.compile(r"refs/[A-Za-z0-9._/-]+")

Identity = tuple[tuple[int, int, int] | None, ...]


@dataclass(frozen=True)
class Probe:
    """The identity of HEAD's files taken before git is asked, and the branch HEAD named at that moment."""

    identity: Identity
    branch: str | None
    cacheable: bool


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _symbolic_target(head: bytes) -> str | None:
    """The ref a symbolic HEAD names when it is a plain, safe ref name; else None."""
    if not head.startswith(b"ref: "):
        return None
    name = head[len(b"ref: ") :].strip().decode("ascii", "replace")
    if not _REF_NAME.fullmatch(name) or any(part in ("", ".", "..") for part in name.split("/")):
        return None
    return name


def identity(git_dir: Path, branch: str) -> Identity:
    """The current identity of HEAD, the loose ref `branch` and packed-refs."""
    return (_stat(git_dir / "HEAD"), _stat(git_dir / branch), _stat(git_dir / "packed-refs"))


def probe(git_dir: Path, now_ns: int | None = None) -> Probe:
    """Read HEAD's files ahead of asking git; `cacheable` is False when git's answer must not be kept."""
    head_id = _stat(git_dir / "HEAD")
    try:
        branch = _symbolic_target((git_dir / "HEAD").read_bytes())
    except OSError:
        branch = None
    if head_id is None or branch is None or branch.endswith("/.invalid"):
        return Probe((), branch, False)
    found = identity(git_dir, branch)
    # The HEAD read above must belong to the identity recorded; a change in between is simply not cached.
    if found[0] != head_id:
        return Probe(found, branch, False)
    now = time.time_ns() if now_ns is None else now_ns
    fresh = any(part is not None and now - part[2] < RACY_NS for part in found)
    layout_ok = not (git_dir / "reftable").exists() and not (git_dir / "commondir").exists()
    loose_ok = found[1] is None or not _is_symbolic(git_dir / branch)
    return Probe(found, branch, layout_ok and loose_ok and not fresh)


def _is_symbolic(path: Path) -> bool:
    try:
        return path.read_bytes().startswith(b"ref:")
    except OSError:
        return True


class HeadCache:
    """The last (branch, commit) git gave for HEAD, valid while HEAD's files keep their identity."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._entry: tuple[str, Identity, tuple[str, str | None]] | None = None

    def get(self) -> tuple[str, str | None] | None:
        """The cached answer when every file still has the identity it had when git gave it."""
        entry = self._entry
        if entry is None:
            return None
        branch, ident, answer = entry
        return answer if identity(self.git_dir, branch) == ident else None

    def put(self, before: Probe, answer: tuple[str, str | None]) -> None:
        """Keep `answer` when the probe taken before git ran allows it and git agrees on the branch."""
        if before.cacheable and before.branch == answer[0]:
            self._entry = (answer[0], before.identity, answer)
        else:
            self._entry = None
