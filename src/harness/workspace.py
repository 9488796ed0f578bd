"""`harness init`: create a workspace (harness.toml, store, ledger) with optional sample data. Never overwrites."""

from __future__ import annotations

import io
import os
from importlib import resources
from pathlib import Path
from typing import Any

from harness.config import CONFIG_NAME, Settings, default_config_text
from harness.errors import UpstreamUnavailable
from harness.store.backend import EventStore
from harness.store.git import find_git_dir
from harness.store.ingest import ingest_files
from harness.text.sanitize import echo

SAMPLES = ("events.jsonl", "findings.jsonl", "baseline.json")


def _relative(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def _write_new(path: Path, text: str) -> bool:
    """Create `path` with `text` unless it exists (O_EXCL, so a concurrent init never clobbers)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return True


def sample_path(name: str) -> Any:
    """A sample data file shipped in the package."""
    return resources.files("harness.samples").joinpath(name)


def load_samples(store: EventStore) -> None:
    """Append the sample events, findings and baseline through ordinary ingestion."""
    for stream, name in (("events", "events.jsonl"), ("findings", "findings.jsonl"), ("baseline", "baseline.json")):
        with resources.as_file(sample_path(name)) as path:
            ingest_files(store, stream, [str(path)], stderr=io.StringIO())


def fallback_note(settings: Settings) -> str:
    """The note of every result answered from the fallback workspace while it holds no store; "" otherwise.

    Only the fallback is flagged: a workspace named by --workspace or HARNESS_ROOT was chosen, so an empty one
    is the operator's to explain, but the fallback is where a misconfigured agent lands without knowing it.
    """
    if settings.workspace_source != "fallback" or settings.store_url:
        return ""
    try:
        if find_git_dir(settings.store_path) is not None:
            return ""
    except UpstreamUnavailable:
        # Something that is not a store sits there; every read reports that itself.
        return ""
    return (
        f"workspace {echo(str(settings.workspace))} holds no store: it is the fallback workspace, used because no "
        "--workspace was given, no harness.toml was found above the installed package and HARNESS_ROOT is unset, "
        "so every read is empty; run harness init to create a store there, or point at your workspace with "
        "--workspace DIR (or HARNESS_ROOT)"
    )


def init_workspace(
    settings: Settings, store: EventStore, *, empty: bool, ledger_created: Path | None = None
) -> dict[str, Any]:
    """Create what is missing; load sample data into a store this call created (unless `empty`).

    `ledger_created` is the SQLite ledger file the caller created before recording this call, if any.
    """
    workspace = settings.workspace
    created: list[str] = []
    if not workspace.exists():
        workspace.mkdir(parents=True)
    if _write_new(workspace / CONFIG_NAME, default_config_text()):
        created.append(CONFIG_NAME)
    new_store = not store.exists()
    if new_store:
        store.create()
        created.append(_relative(settings.store_path, workspace))
    if ledger_created is not None:
        created.append(_relative(ledger_created, workspace))
    sample_data = new_store and not empty
    if sample_data:
        load_samples(store)
    return {"created": created, "sample_data": sample_data, "workspace": str(workspace)}
