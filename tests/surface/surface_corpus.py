"""The fixture corpus of real operation calls for the parity test: success, empty, and error cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PACKAGE_CORPUS: list[tuple[str, dict[str, Any]]] = []


def prepare_workspace(tmp_path: Path) -> Path:
    """A workspace for the corpus calls."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace
