"""Full results beside their end rows (docs/ledger.md §11.3): their names, and the files of the sidecar format
before schema 3 (SQLite) / 4 (PostgreSQL), read for verification and imported into the ledger by
`harness ledger migrate`.

A result over the preview cap is stored in the `result_sidecars` table in the transaction of its end row; its
`result_sidecar_path` is still the name below, and the end row's meta still holds its size and SHA-256, so the chain
covers it as it covered a file (docs/decisions.md, "Ledger storage and group commit").
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import uuid
from pathlib import Path
from typing import Any

from harness import files

SIDECAR_DIR = "sidecars"


def sidecar_relpath(conversation_id: str, row_id: uuid.UUID) -> str:
    """The name of an end row's result: no caller-supplied string reaches it (docs/ledger.md §11.3)."""
    digest = hashlib.sha256(conversation_id.encode("utf-8")).hexdigest()[:32]
    return f"{SIDECAR_DIR}/c-{digest}/{row_id}.result"


def content_problem(meta: dict[str, Any], content: bytes, name: str) -> str | None:
    """What is wrong with a stored result against its end row's meta.sidecar_bytes and meta.sidecar_sha256."""
    if meta.get("sidecar_bytes") != len(content) or meta.get("sidecar_sha256") != hashlib.sha256(content).hexdigest():
        return f"{name} does not match meta.sidecar_bytes and meta.sidecar_sha256"
    return None


@dataclasses.dataclass(frozen=True)
class LegacyFile:
    """A sidecar file as read: its bytes, or why it could not be (`missing`, or a refusal such as a link), as a
    sentence."""

    content: bytes | None
    missing: bool = False
    problem: str = ""


def read_legacy(workspace: Path, relpath: str) -> LegacyFile:
    """A sidecar file of the old format, only from inside the workspace and never through a link."""
    parts = relpath.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return LegacyFile(None, problem="the sidecar path leaves the workspace")
    chunks = []
    try:
        with files.open_regular(workspace.joinpath(*parts)) as (fd, _):
            chunks.extend(files.iter_chunks(fd, relpath))
    except files.FileMissing:
        return LegacyFile(None, missing=True, problem=f"{relpath} does not exist")
    except files.FileRefused as exc:
        return LegacyFile(None, problem=f"{relpath} {exc.problem}")
    return LegacyFile(b"".join(chunks))


def remove_legacy(workspace: Path, relpath: str) -> None:
    """Delete an imported sidecar file, then its conversation folder and sidecars/ once they are empty."""
    target = workspace.joinpath(*relpath.split("/"))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)
    for folder in (target.parent, workspace / SIDECAR_DIR):
        with contextlib.suppress(OSError):
            os.rmdir(folder)
