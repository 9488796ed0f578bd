"""The fixture corpus of real operation calls for the parity test: success, empty, and error cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PACKAGE_CORPUS: list[tuple[str, dict[str, Any]]] = [
    # github_actor: only calls refused before any request, since the corpus workspace has no fake GitHub.
    ("github_actor", {"login": "../admin"}),
    ("github_actor", {"login": "a b"}),
    ("github_actor", {"login": "a" * 40}),
    ("github_actor", {}),
    ("github_actor", {"login": "octocat", "per_page": 100}),
]


def prepare_workspace(tmp_path: Path) -> Path:
    """A workspace for the corpus calls."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace
