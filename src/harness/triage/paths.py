"""Watcher-repository path rules shared by the code-fix gate and repo_file (docs/triage.md §11.4)."""

from __future__ import annotations

import re

MAX_COMPONENTS = 32
ALLOWED_ROOTS: tuple[tuple[str, ...], ...] = (("src", "trustsight"), ("tests",))

_COMPONENT = re.compile(r"[A-Za-z0-9_.+@-]{1,255}")


class PathError(ValueError):
    """A path refused by docs/triage.md §11.4; the message is the rule's name (`path has a dot component`)."""


def _under_allowed_root(parts: list[str]) -> bool:
    return any(len(parts) > len(root) and tuple(parts[: len(root)]) == root for root in ALLOWED_ROOTS)


def path_problem(path: str) -> str:
    """The first docs/triage.md §11.4 rule `path` breaks, or "" when it is an allowed watcher path."""
    if path.startswith("/"):
        return "absolute path"
    if "\\" in path:
        return "path contains a backslash"
    parts = path.split("/")
    if any(not part for part in parts):
        return "path has an empty component"
    if any(part.startswith(".") for part in parts):
        return "path has a dot component"
    if len(parts) > MAX_COMPONENTS or any(
        _COMPONENT.fullmatch(part) is None or part.startswith("-") for part in parts
    ):
        return "path has an invalid component"
    if not _under_allowed_root(parts):
        return "path outside the allowlist"
    return ""


def check_path(path: str) -> tuple[str, ...]:
    """The components of an allowed watcher path; PathError names the first rule it breaks."""
    problem = path_problem(path)
    if problem:
        raise PathError(problem)
    return tuple(path.split("/"))
