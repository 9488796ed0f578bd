"""The AUR-level name patterns of docs/triage.md §2: package names, commits, versions and scriptlet names."""

from __future__ import annotations

import re

MAX_VERSION_CHARS = 64

_PACKAGE = re.compile(r"[a-z0-9@_+][a-z0-9@._+-]{0,126}")
_COMMIT = re.compile(r"[0-9a-f]{7,40}")
_VERSION = re.compile(r"(?:[0-9]{1,10}:)?[A-Za-z0-9._+~]{1,48}-[0-9]{1,8}(?:\.[0-9]{1,4})?")
_SCRIPTLET = re.compile(r"[A-Za-z0-9@_+][A-Za-z0-9@._+-]{0,254}")


def is_package_name(value: str) -> bool:
    """A package name that can also form a git branch (no `..`)."""
    return _PACKAGE.fullmatch(value) is not None and ".." not in value


def is_commit(value: str) -> bool:
    """An AUR git commit id, abbreviated or full (7 to 40 lowercase hex)."""
    return _COMMIT.fullmatch(value) is not None


def is_version(value: str) -> bool:
    """A pacman version `[epoch:]pkgver-pkgrel[.n]` of at most 64 characters."""
    return len(value) <= MAX_VERSION_CHARS and _VERSION.fullmatch(value) is not None


def is_scriptlet_name(value: str) -> bool:
    """A file name at the root of an AUR tree (AUR trees have no subdirectories)."""
    return _SCRIPTLET.fullmatch(value) is not None
